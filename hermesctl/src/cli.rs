//! The command line of hermesctl (clap definitions; also the source of completions and man pages).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Talk to hermesd, the Hermes agent daemon (started on demand).
#[derive(Debug, Parser)]
#[command(name = "hermesctl", version, about, propagate_version = true)]
pub struct Cli {
    /// Socket of the daemon (default: from HERMES_SOCKET, config daemon.socket, or the profile).
    #[arg(long, global = true, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Profile: use ~/.hermes/profiles/NAME (also HERMES_PROFILE).
    #[arg(short, long, global = true, value_name = "NAME")]
    pub profile: Option<String>,
    /// Print one JSON document (snake_case keys as in the .proto files).
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the daemon's status (starts it if needed).
    Status,
    /// Send one message and print the answer (a new session unless --session is given).
    Send {
        /// The message; `-` reads it from standard input.
        #[arg(required = true, num_args = 1.., value_name = "MESSAGE")]
        message: Vec<String>,
        /// Continue this session instead of starting a new one.
        #[arg(long, short, value_name = "ID")]
        session: Option<String>,
        /// Working directory of a new session (default: the current directory).
        #[arg(long, value_name = "DIR")]
        cwd: Option<std::path::PathBuf>,
        /// Approve every dangerous command in this turn without asking.
        #[arg(long)]
        yolo: bool,
        /// Print the answer as it streams (with --json: every event as a JSON line).
        #[arg(long)]
        stream: bool,
        /// Attach an image (PNG, JPEG, GIF or WebP); repeat for more.
        #[arg(long = "image", value_name = "FILE")]
        images: Vec<std::path::PathBuf>,
    },
    /// Talk with the agent: a new session, SESSION, or the most recent with --continue. Ctrl-D
    /// or /detach leaves it running; /help lists the commands.
    Chat {
        /// Session id (any segment of the conversation).
        session: Option<String>,
        /// Continue the most recent session.
        #[arg(long = "continue", short = 'c', conflicts_with = "session")]
        resume: bool,
    },
    /// The full-screen client (hermes-tui): every session on the side, one conversation in the
    /// middle. Starts the daemon when none runs; quitting leaves every session running.
    Tui {
        /// Session id to open.
        #[arg(conflicts_with_all = ["resume", "new"])]
        session: Option<String>,
        /// Open the most recently active session.
        #[arg(long = "continue", short = 'c', conflicts_with = "new")]
        resume: bool,
        /// Start a new session right away.
        #[arg(long)]
        new: bool,
    },
    /// Watch a session live: its backlog, then every event as it happens (Ctrl-C stops watching;
    /// the session goes on).
    Attach {
        /// Session id (any segment of the conversation).
        id: String,
        /// Only watch: never answer approvals or questions.
        #[arg(long)]
        read_only: bool,
    },
    /// See and choose the model: the provider chain, context windows, a test call.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Model credentials: every provider's pool of keys and logins, and why one is parked.
    #[command(subcommand)]
    Auth(AuthCommand),
    /// Start, stop or inspect the daemon.
    #[command(subcommand)]
    Daemon(DaemonCommand),
    /// List, show and remove sessions; set what input during a turn does.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Bring history from elsewhere (a Python Hermes home).
    #[command(subcommand)]
    Import(ImportCommand),
    /// What the agent remembers: MEMORY.md (its notes) and USER.md (the user profile).
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// Skills: list, read, install, remove, and trust quarantined ones.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Scheduled jobs: a prompt the agent runs on a schedule, and the record of its runs.
    #[command(subcommand)]
    Cron(Box<CronCommand>),
    /// Chat platforms (Telegram): how each connection is doing, and their home channels.
    #[command(subcommand)]
    Gateway(GatewayCommand),
    /// MCP servers: their state, a connection test, adding and removing them in config.yaml;
    /// `serve` makes hermesctl itself an MCP server for other agents.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Who may talk to the agent from a chat platform: pending codes and approved users.
    #[command(subcommand)]
    Pairing(PairingCommand),
    /// Read and edit config.yaml (works without the daemon; a running one reloads).
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Print a shell completion script.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print the man page, or write one page per command into a directory.
    Man {
        /// Write hermesctl.1 and hermesctl-*.1 here instead of printing hermesctl.1.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum DaemonCommand {
    /// Start the daemon in the background if it is not running; returns once it answers.
    Start,
    /// Stop the daemon; returns after the process has exited.
    Stop,
    /// Stop the daemon if it runs, then start it.
    Restart,
    /// Say whether the daemon runs (never starts it; exit code 3 when it does not).
    Status,
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List conversations, most recent first.
    List {
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Only this source (cli, api, cron, telegram, …).
        #[arg(long, value_name = "SOURCE")]
        source: Option<String>,
        /// Every segment of compressed conversations, not one row per conversation.
        #[arg(long)]
        all: bool,
    },
    /// Show a session and its messages.
    Show {
        /// Session id (any segment of the conversation).
        id: String,
    },
    /// Delete a conversation (all its segments, messages and events).
    Rm {
        /// Session id.
        id: String,
    },
    /// What input arriving during a turn does: queue (run after it), steer (join it), interrupt.
    Busy {
        /// Session id.
        id: String,
        #[arg(value_parser = ["queue", "steer", "interrupt"])]
        policy: String,
    },
    /// Search every conversation (words, "a phrase", prefix*, AND / OR / NOT; any script,
    /// Chinese, Japanese and Korean by substring).
    Search {
        query: String,
        /// At most this many conversations.
        #[arg(long, default_value_t = 10)]
        limit: u32,
        /// Only this source (cli, telegram, cron, …).
        #[arg(long, value_name = "SOURCE")]
        source: Option<String>,
        /// Only messages by user or assistant.
        #[arg(long, value_parser = ["user", "assistant", "tool"])]
        role: Option<String>,
        /// Only messages since this date (YYYY-MM-DD, RFC 3339) or age (7d, 12h).
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
        /// Only messages before this date or age.
        #[arg(long, value_name = "WHEN")]
        until: Option<String>,
        /// Rank every match instead of the newest ones (slower for very common words).
        #[arg(long)]
        all_matches: bool,
    },
    /// Print a whole conversation (every segment) as Markdown or Hermes JSONL.
    Export {
        /// Session id or title.
        id: String,
        #[arg(long, default_value = "md", value_parser = ["md", "jsonl"])]
        format: String,
    },
    /// Show a conversation's title, or set it.
    Title {
        /// Session id or title.
        id: String,
        /// The new title; "" clears it.
        title: Option<String>,
    },
    /// Start a new conversation as a copy of this one, up to a message.
    Branch {
        /// Session id or title.
        id: String,
        /// Copy up to and including this message id (see `sessions show`); default: all.
        #[arg(long, value_name = "MESSAGE_ID")]
        at: Option<u64>,
        #[arg(long)]
        title: Option<String>,
    },
    /// Remove the last exchange (the last user message and everything after it).
    Undo {
        /// Session id or title.
        id: String,
    },
    /// Remove the last exchange and send its user message again.
    Retry {
        /// Session id or title.
        id: String,
    },
    /// Open a conversation in the chat client, by id or title.
    Resume {
        /// Session id or title.
        id: String,
    },
    /// Summarise the middle of a conversation now, to make room in the model's context.
    Compress {
        /// Session id or title.
        id: String,
    },
    /// Delete conversations with no activity for a while.
    Prune {
        /// Age, e.g. 30d (days), 12w (weeks); default: sessions.retention_days (90).
        #[arg(long, value_name = "AGE")]
        older_than: Option<String>,
        /// Only say how many would go.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Bring sessions, messages and titles from a Python Hermes home's state.db, and its cron
    /// jobs from cron/jobs.json (read-only; running it again adds only what is new).
    Hermes {
        /// The Python Hermes home; default: this home.
        #[arg(long, value_name = "PATH")]
        home: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the path of config.yaml.
    Path,
    /// Print a key's value as written in config.yaml (dotted, e.g. model.default).
    Get { key: String },
    /// Set a key in config.yaml, keeping comments, then ask a running daemon to reload.
    Set {
        key: String,
        /// A YAML scalar: 42, true, "text".
        value: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// The configured model and its fallbacks, in the order they are tried.
    List,
    /// The default model: provider, base URL, context window and prices.
    Show,
    /// Set the default model in config.yaml (then a running daemon reloads).
    Set {
        /// `provider:model`, e.g. openrouter:anthropic/claude-sonnet-4, or just a model name.
        spec: String,
        /// Base URL of an OpenAI-compatible server (for `custom` and local servers).
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Read the API key from this environment variable (put it in ~/.hermes/.env).
        #[arg(long, value_name = "VAR")]
        key_env: Option<String>,
    },
    /// Send a one-token request and report whether the model answers.
    Test {
        /// Test every model of the chain, not only the default.
        #[arg(long)]
        all: bool,
    },
}

/// `hermesctl auth …`.
#[derive(Debug, clap::Subcommand)]
pub enum AuthCommand {
    /// Every credential of every pool (or of PROVIDER's), in the order they are tried, with
    /// whether each is usable, parked (why, for how long) or dead.
    List { provider: Option<String> },
    /// Add an API key to PROVIDER's pool (hermesd's own store; Hermes' auth.json is not written).
    /// The key is pasted on the terminal without echo, or read from standard input.
    Add {
        /// A provider name (openrouter, anthropic, …) or custom:<name> for a `providers:` entry.
        provider: String,
        /// Read the key from this environment variable at each load instead of storing it.
        #[arg(long, value_name = "VAR", conflicts_with = "api_key")]
        key_env: Option<String>,
        /// The key itself (visible to other users in the process list: prefer the prompt).
        #[arg(long, value_name = "KEY")]
        api_key: Option<String>,
        /// A name to tell it by (default api-key-N).
        #[arg(long)]
        label: Option<String>,
        /// Hermes' `--type`: only api-key is added this way (logins: `hermesctl login`).
        #[arg(long = "type", value_name = "TYPE", default_value = "api-key")]
        kind: String,
    },
    /// Remove a credential from hermesd's pool by id, label or position (a row of Hermes'
    /// auth.json or a key variable is only no longer used by hermesd).
    #[command(alias = "remove")]
    Rm { provider: String, target: String },
}

/// Which memory store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MemoryTargetArg {
    /// MEMORY.md: the agent's notes.
    Memory,
    /// USER.md: who the user is.
    User,
}

#[derive(Debug, Subcommand)]
pub enum GatewayCommand {
    /// Each platform: state, connected since, last message in and out, reconnects, last error.
    Status,
    /// Show each platform's home channel, or make CHAT the home of PLATFORM (as /sethome does
    /// in that chat): where cron results and `send_message` to a bare platform go.
    Home {
        /// e.g. telegram.
        platform: Option<String>,
        /// The chat id (a group's is negative), optionally with a topic: `-1001234567890:17`.
        #[arg(allow_hyphen_values = true, requires = "platform")]
        chat: Option<String>,
        /// A name for it in lists and the prompt (default: the chat id).
        #[arg(long)]
        name: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum PairingCommand {
    /// Pending requests and approved users.
    List {
        /// Only this platform.
        platform: Option<String>,
    },
    /// Approve the user who was given CODE in a direct message.
    Approve { platform: String, code: String },
    /// Forget an approved user (or a pending request).
    Revoke { platform: String, user: String },
}

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Print the entries with their usage of the limit (both stores unless --target).
    Show {
        #[arg(long, short, value_enum)]
        target: Option<MemoryTargetArg>,
    },
    /// Add an entry.
    Add {
        #[arg(long, short, value_enum, default_value = "memory")]
        target: MemoryTargetArg,
        /// The entry text; `-` reads it from standard input.
        #[arg(required = true, num_args = 1.., value_name = "TEXT")]
        text: Vec<String>,
    },
    /// Remove the entry containing TEXT (a unique part of it is enough).
    Rm {
        #[arg(long, short, value_enum, default_value = "memory")]
        target: MemoryTargetArg,
        #[arg(required = true, num_args = 1.., value_name = "TEXT")]
        text: Vec<String>,
    },
    /// Edit the entries in $EDITOR (entries separated by a line holding only §).
    Edit {
        #[arg(long, short, value_enum, default_value = "memory")]
        target: MemoryTargetArg,
    },
}

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// Every skill with its trust, origin and whether it is active here.
    List,
    /// Print a skill's SKILL.md, or one of its files.
    View {
        name: String,
        /// A file inside the skill, e.g. references/api.md.
        #[arg(value_name = "FILE")]
        file: Option<String>,
    },
    /// Copy a local skill directory (holding SKILL.md) into $HERMES_HOME/skills; it is scanned.
    Install {
        path: std::path::PathBuf,
        /// Put it under this category.
        #[arg(long)]
        category: Option<String>,
    },
    /// Delete a skill from disk.
    Rm { name: String },
    /// Let the model see a quarantined skill as it is now (a later change is scanned again).
    Trust { name: String },
}

/// What a cron job does about runs it missed while the daemon was down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MissedPolicyArg {
    /// Drop them; wait for the next time.
    Skip,
    /// Run once for all of them.
    Once,
    /// Run every one of them.
    All,
}

/// The settings of a cron job that `cron add` and `cron edit` share.
#[derive(Debug, Default, Args)]
pub struct CronJobArgs {
    /// A short name shown in lists.
    #[arg(long)]
    pub name: Option<String>,
    /// Load this skill for the run (repeat, or separate with commas).
    #[arg(long = "skill", value_name = "NAME", value_delimiter = ',')]
    pub skills: Vec<String>,
    /// Where the answer goes: local, origin, or <platform>:<chat>.
    #[arg(long, value_name = "TARGET")]
    pub deliver: Option<String>,
    /// Model of the run (default: the configured one).
    #[arg(long)]
    pub model: Option<String>,
    /// Time zone of the schedule, e.g. Europe/Berlin (default: the daemon's).
    #[arg(long = "tz", value_name = "ZONE")]
    pub timezone: Option<String>,
    /// Run this many times, then stop (0: forever).
    #[arg(long = "repeat", value_name = "N")]
    pub repeat_times: Option<u32>,
    /// Runs missed while the daemon was down: skip them, run once, or run all.
    #[arg(long = "missed", value_enum, value_name = "POLICY")]
    pub missed_policy: Option<MissedPolicyArg>,
    /// Enable only this toolset for the run (repeat, or separate with commas).
    #[arg(long = "toolset", value_name = "NAME", value_delimiter = ',')]
    pub toolsets: Vec<String>,
    /// Working directory of the run (made absolute here).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// A script in ~/.hermes/scripts/ (relative to it) run before each run: its output feeds
    /// the prompt; empty output or a last line {"wakeAgent": false} skips the run. `""` clears it.
    #[arg(long, value_name = "FILE")]
    pub script: Option<String>,
    /// No model call: the script's output is the message (empty output sends nothing).
    #[arg(long, conflicts_with = "agent")]
    pub no_agent: bool,
    /// Run the agent again after the script (undoes --no-agent).
    #[arg(long)]
    pub agent: bool,
    /// The job's own provider (e.g. custom, with --base-url).
    #[arg(long)]
    pub provider: Option<String>,
    /// The job's own OpenAI-compatible server.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum CronCommand {
    /// Add a job: the agent runs PROMPT on SCHEDULE in a session of its own.
    Add {
        /// "0 9 * * 1-5" (cron), "every 30m", "in 2h", or an ISO time such as 2026-06-01T09:00.
        #[arg(long)]
        schedule: String,
        /// What the agent is asked to do; `-` reads it from standard input.
        #[arg(long, required_unless_present = "no_agent")]
        prompt: Option<String>,
        #[command(flatten)]
        job: CronJobArgs,
    },
    /// Every job with its state, next run and last result.
    List,
    /// A job's settings in full and its latest runs.
    Show {
        /// Job id or name.
        id: String,
    },
    /// Change a job's settings (only the ones given).
    Edit {
        /// Job id or name.
        id: String,
        /// The new schedule (as for `cron add`).
        #[arg(long)]
        schedule: Option<String>,
        /// The new prompt; `-` reads it from standard input.
        #[arg(long)]
        prompt: Option<String>,
        #[command(flatten)]
        job: CronJobArgs,
        /// Load no skills any more.
        #[arg(long, conflicts_with = "skills")]
        no_skills: bool,
        /// Enable the default toolsets again instead of a chosen few.
        #[arg(long, conflicts_with = "toolsets")]
        no_toolsets: bool,
    },
    /// Stop running a job until `cron resume`.
    Pause {
        /// Job id or name.
        id: String,
        /// Why (recorded with the job).
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
    /// Schedule a paused job again.
    Resume {
        /// Job id or name.
        id: String,
    },
    /// Delete a job and the record of its runs.
    Rm {
        /// Job id or name.
        id: String,
    },
    /// Run a job now, outside its schedule.
    Run {
        /// Job id or name.
        id: String,
        /// Wait for the run to end and report it (exit code 1 unless it went ok).
        #[arg(long)]
        wait: bool,
    },
    /// A job's runs, most recent first.
    Runs {
        /// Job id or name.
        id: String,
        /// At most this many.
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn cron_edit_flags_parse_into_their_fields() {
        let cli = Cli::try_parse_from([
            "hermesctl",
            "cron",
            "edit",
            "job1",
            "--skill",
            "a,b",
            "--skill",
            "c",
            "--tz",
            "UTC",
            "--missed",
            "once",
            "--no-toolsets",
        ])
        .unwrap();
        let Command::Cron(command) = cli.command else {
            panic!("not cron: {:?}", cli.command);
        };
        let CronCommand::Edit {
            id,
            job,
            no_toolsets,
            no_skills,
            ..
        } = *command
        else {
            panic!("not cron edit");
        };
        assert_eq!(id, "job1");
        assert_eq!(job.skills, ["a", "b", "c"]);
        assert_eq!(job.timezone.as_deref(), Some("UTC"));
        assert_eq!(job.missed_policy, Some(MissedPolicyArg::Once));
        assert!(no_toolsets && !no_skills);
        assert!(
            Cli::try_parse_from([
                "hermesctl",
                "cron",
                "edit",
                "j",
                "--skill",
                "a",
                "--no-skills"
            ])
            .is_err()
        );
    }
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Every configured server: state (connecting, connected, failed, disabled), tools, error.
    List,
    /// Connect to a configured server once, apart from the daemon's connection, and list its tools.
    Test { name: String },
    /// Add a server to mcp_servers in config.yaml (then the daemon connects it).
    Add {
        name: String,
        /// A stdio server: the program to run.
        #[arg(long, conflicts_with = "url", required_unless_present = "url")]
        command: Option<String>,
        /// A Streamable HTTP server's URL.
        #[arg(long)]
        url: Option<String>,
        /// An environment variable for a stdio server, KEY=VALUE (repeatable).
        #[arg(long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// A header for an HTTP server, "Name: value" (repeatable).
        #[arg(long = "header", value_name = "NAME: VALUE")]
        headers: Vec<String>,
        /// The stdio server's arguments (last; a leading `--` is dropped).
        #[arg(long, num_args = 1.., allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Remove a server from mcp_servers in config.yaml.
    Rm { name: String },
    /// Be an MCP server on stdio for other agents (Claude Code, Cursor, another Hermes): list and
    /// read conversations, send a message and get the answer, search history. Every call goes
    /// through the daemon, so its approvals and limits apply. Register it with
    /// `claude mcp add hermes -- hermesctl mcp serve`.
    Serve,
}
