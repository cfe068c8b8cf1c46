//! The one table of slash commands: `hermesctl chat`, the TUI and the chat gateway parse the
//! same names and aliases from it, `/help` lists it, and Telegram's command menu is built from
//! it. Skills add themselves as `/<skill-name>` at run time (the `ListCommands` RPC).

/// Where a command is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// Terminal clients and chat platforms.
    Everywhere,
    /// `hermesctl chat` and the TUI only (it drives the client itself).
    Terminal,
    /// Chat platforms only.
    Gateway,
}

/// One built-in slash command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    /// Without the slash.
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// e.g. `"[text]"`.
    pub args: &'static str,
    pub description: &'static str,
    pub surface: Surface,
}

impl Command {
    pub fn in_terminal(&self) -> bool {
        self.surface != Surface::Gateway
    }

    pub fn in_gateway(&self) -> bool {
        self.surface != Surface::Terminal
    }
}

const fn command(
    name: &'static str,
    aliases: &'static [&'static str],
    args: &'static str,
    description: &'static str,
    surface: Surface,
) -> Command {
    Command {
        name,
        aliases,
        args,
        description,
        surface,
    }
}

use Surface::{Everywhere, Gateway, Terminal};

/// Every built-in command, in the order `/help` lists them.
pub const COMMANDS: &[Command] = &[
    command("help", &["?", "commands"], "", "this list", Everywhere),
    command(
        "new",
        &["reset"],
        "",
        "start a new session (the old one is kept)",
        Everywhere,
    ),
    command(
        "status",
        &[],
        "",
        "this session and what it is doing",
        Gateway,
    ),
    command(
        "sessions",
        &[],
        "",
        "recent sessions and their state",
        Terminal,
    ),
    command(
        "model",
        &[],
        "",
        "the model answering, and the fallbacks",
        Everywhere,
    ),
    command("tools", &[], "", "the toolsets sessions get", Terminal),
    command(
        "image",
        &[],
        "<path>",
        "attach a local image file to your next message",
        Terminal,
    ),
    command(
        "busy",
        &[],
        "[queue|steer|interrupt]",
        "what input during a turn does",
        Everywhere,
    ),
    command(
        "voice",
        &[],
        "[on|off|tts|status]",
        "spoken replies: to voice messages (on), to every message (tts), or none (off)",
        Gateway,
    ),
    command(
        "stop",
        &["cancel"],
        "",
        "interrupt the running turn",
        Everywhere,
    ),
    command(
        "usage",
        &[],
        "",
        "tokens and cost of this session",
        Everywhere,
    ),
    command(
        "verbose",
        &[],
        "",
        "show or hide reasoning and tool details",
        Terminal,
    ),
    command(
        "title",
        &[],
        "[text]",
        "show the session's title, or set it",
        Everywhere,
    ),
    command(
        "branch",
        &["fork"],
        "[title]",
        "copy this conversation and continue in the copy",
        Terminal,
    ),
    command("undo", &[], "", "remove the last exchange", Everywhere),
    command(
        "retry",
        &[],
        "",
        "remove the last exchange and send its message again",
        Everywhere,
    ),
    command(
        "resume",
        &[],
        "ID|TITLE",
        "switch to another session",
        Terminal,
    ),
    command(
        "compress",
        &["compact"],
        "",
        "summarise older turns now to free context",
        Everywhere,
    ),
    command(
        "reload_mcp",
        &["reload-mcp"],
        "",
        "connect the MCP servers again (config.yaml read again)",
        Everywhere,
    ),
    command(
        "sethome",
        &["set-home"],
        "",
        "make this chat the platform's home channel (cron results, messages)",
        Gateway,
    ),
    command(
        "approve",
        &[],
        "[session|always]",
        "run the command waiting for approval",
        Gateway,
    ),
    command(
        "deny",
        &[],
        "",
        "refuse the command waiting for approval",
        Gateway,
    ),
    command(
        "detach",
        &[],
        "",
        "leave; the session goes on (also Ctrl-D)",
        Terminal,
    ),
    command("quit", &["exit"], "", "leave the client", Terminal),
];

/// The built-in command `word` names (its name or an alias, any case, without the slash).
pub fn lookup(word: &str) -> Option<&'static Command> {
    let word = word.trim().to_lowercase();
    COMMANDS
        .iter()
        .find(|c| c.name == word || c.aliases.contains(&word.as_str()))
}

/// `(name, rest of the line)` when `line` is a slash command; `None` otherwise. A Telegram
/// group command's `@botname` suffix is dropped.
pub fn split(line: &str) -> Option<(String, String)> {
    let rest = line.trim().strip_prefix('/')?;
    let (word, tail) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let word = word.split('@').next().unwrap_or(word);
    if word.is_empty() {
        return None;
    }
    Some((word.to_lowercase(), tail.trim().to_string()))
}

/// The closest of `candidates` to a mistyped `name`: a prefix match, else one within two edits.
pub fn suggest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str> + Clone,
) -> Option<&'a str> {
    let by_prefix = candidates
        .clone()
        .find(|candidate| !name.is_empty() && candidate.starts_with(name));
    by_prefix.or_else(|| {
        candidates
            .map(|candidate| (distance(name, candidate), candidate))
            .min()
            .filter(|(d, _)| *d <= 2)
            .map(|(_, candidate)| candidate)
    })
}

/// Levenshtein distance, for suggestions.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(current + 1);
            previous = current;
        }
    }
    row[b.len()]
}

/// The message a `/<skill-name> request` line sends: the request, asking for the skill.
pub fn skill_request(skill: &str, request: &str) -> String {
    let request = request.trim();
    if request.is_empty() {
        format!("Use the \"{skill}\" skill (load it with skill_view first).")
    } else {
        format!("Use the \"{skill}\" skill for this (load it with skill_view first): {request}")
    }
}

/// Whether `name` can be a Telegram bot command: 1-32 of `a-z`, `0-9`, `_`.
pub fn is_platform_command_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for c in COMMANDS {
            assert!(seen.insert(c.name), "{} twice", c.name);
            for a in c.aliases {
                assert!(seen.insert(a), "{a} twice");
            }
        }
    }

    #[test]
    fn aliases_resolve_and_bot_suffixes_drop() {
        assert_eq!(lookup("RESET").map(|c| c.name), Some("new"));
        assert_eq!(
            split("/retry@hermes_bot now"),
            Some(("retry".into(), "now".into()))
        );
        assert_eq!(split("not a command"), None);
        assert_eq!(split("/"), None);
    }

    #[test]
    fn gateway_commands_are_valid_platform_names() {
        for c in COMMANDS.iter().filter(|c| c.in_gateway()) {
            assert!(is_platform_command_name(c.name), "{}", c.name);
        }
    }

    #[test]
    fn suggestions() {
        let names = COMMANDS.iter().map(|c| c.name);
        assert_eq!(suggest("retr", names.clone()), Some("retry"));
        assert_eq!(suggest("compres", names.clone()), Some("compress"));
        assert_eq!(suggest("zzzzzz", names), None);
    }
}
