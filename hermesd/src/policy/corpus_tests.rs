//! The corpus test of the policy layer (issue 17): hundreds of real-world benign commands and
//! paths must pass untouched, so the rules stay usable, and every attempt to get around them
//! must be asked or refused. The fixtures are plain text under `corpus/` (see the header of each
//! file for its format); every line is judged against one layout built in a temporary
//! directory, and a failure lists *every* line that did not get the expected verdict.
//!
//! Layout (`U` is the user's home; the daemon's home is `U/.hermes`, commands run in
//! `U/project`):
//!
//! - `U/.hermes/`: `config.yaml`, `.env`, `auth.json`, `hermesd.db` (+ `-wal`), `state.db`,
//!   `processes.json`, `SOUL.md`, `memories/MEMORY.md`, `skills/demo/SKILL.md`,
//!   `skills/.hub/index.json`, `mcp-tokens/github.json`, `pairing/`;
//!   `profiles/work/{config.yaml,.env,hermesd.db}`.
//! - `U/.ssh/` (keys, `known_hosts`, `authorized_keys`, `config`), `U/.bashrc`, `U/.zshrc`,
//!   `U/.aws/credentials`, `U/.kube/config`, `U/.netrc`, `U/.config/app/settings.toml`…
//! - `U/project/`: a few project files (`README.md`, `Cargo.toml`, `.env`, `.env.example`,
//!   `app.db`, `logs/app.log`, `services/api/.env`…) and symlinks into the protected places: `db` → the database,
//!   `settings.yaml` → `config.yaml`, `secrets` → `.env`, `creds` → `auth.json`, `h` → the
//!   home, `work` → the profile, `keys` → `~/.ssh`, `rc` → `~/.bashrc`, `dangling` → the
//!   profile's (missing) `auth.json`.
//!
//! In command fixtures `{U}` stands for the absolute user home. Run with `HERMESD_CORPUS_DUMP=1`
//! (and `--no-capture`) to print the verdict on every command, with the keys of what it asks.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::command::{CommandPolicy, Verdict};
use super::paths::{PathPolicy, WriteVerdict};

const BENIGN_COMMANDS: &str = include_str!("corpus/benign_commands.txt");
const ASKED_COMMANDS: &str = include_str!("corpus/asked_commands.txt");
const ATTACK_COMMANDS: &str = include_str!("corpus/attack_commands.txt");
const KNOWN_GAPS: &str = include_str!("corpus/known_gaps.txt");
const STDIN_CASES: &str = include_str!("corpus/stdin_cases.txt");
const BENIGN_PATHS: &str = include_str!("corpus/benign_paths.txt");
const ATTACK_PATHS: &str = include_str!("corpus/attack_paths.txt");

struct Layout {
    _dir: tempfile::TempDir,
    user: PathBuf,
    paths: PathPolicy,
    policy: CommandPolicy,
}

fn file(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

impl Layout {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let user = std::fs::canonicalize(dir.path()).unwrap().join("u");
        let at = |rel: &str| user.join(rel);
        for (rel, text) in [
            (
                ".hermes/config.yaml",
                "model:\n  default: x\napprovals:\n  mode: manual\n",
            ),
            (".hermes/.env", "OPENROUTER_API_KEY=sk-secret\n"),
            (".hermes/auth.json", "{}\n"),
            (".hermes/hermesd.db", ""),
            (".hermes/hermesd.db-wal", ""),
            (".hermes/state.db", ""),
            (".hermes/processes.json", "[]\n"),
            (".hermes/SOUL.md", "You are Hermes.\n"),
            (".hermes/memories/MEMORY.md", "- the user likes tea\n"),
            (".hermes/skills/demo/SKILL.md", "---\nname: demo\n---\n"),
            (".hermes/skills/.hub/index.json", "{}\n"),
            (".hermes/mcp-tokens/github.json", "{}\n"),
            (".hermes/pairing/telegram.json", "{}\n"),
            (".hermes/profiles/work/config.yaml", "model: {}\n"),
            (".hermes/profiles/work/.env", "KEY=x\n"),
            (".hermes/profiles/work/hermesd.db", ""),
            (".ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n"),
            (".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n"),
            (".ssh/id_ed25519.pub", "ssh-ed25519 AAAA me@host\n"),
            (".ssh/known_hosts", "github.com ssh-ed25519 AAAA\n"),
            (".ssh/authorized_keys", "ssh-ed25519 AAAA me@host\n"),
            (".ssh/config", "Host *\n"),
            (".bashrc", "export PATH=$HOME/bin:$PATH\n"),
            (".zshrc", "\n"),
            (".profile", "\n"),
            (".gitconfig", "[user]\n\tname = me\n"),
            (".aws/credentials", "[default]\n"),
            (".kube/config", "apiVersion: v1\n"),
            (".docker/config.json", "{}\n"),
            (".netrc", "machine x\n"),
            (".git-credentials", "https://u:p@host\n"),
            (".vault-token", "s.x\n"),
            (".config/gh/hosts.yml", "github.com: {}\n"),
            (".config/app/settings.toml", "theme = 'dark'\n"),
            ("project/README.md", "# Project\n"),
            ("project/CHANGELOG.md", "# Changes\n"),
            ("project/notes.md", "notes\n"),
            (
                "project/Cargo.toml",
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\n",
            ),
            ("project/src/main.rs", "fn main() {}\n"),
            (
                "project/package.json",
                "{\"name\": \"app\", \"version\": \"0.1.0\"}\n",
            ),
            ("project/requirements.txt", "requests\n"),
            ("project/Makefile", "test:\n\ttrue\n"),
            ("project/Dockerfile", "FROM scratch\n"),
            ("project/docker-compose.yml", "services: {}\n"),
            ("project/config.yaml", "port: 8080\n"),
            ("project/config/settings.toml", "host = 'localhost'\n"),
            ("project/.env", "DATABASE_URL=postgres://u:p@db/app\n"),
            ("project/.env.example", "DATABASE_URL=\n"),
            (
                "project/services/api/.env",
                "DATABASE_URL=postgres://u:p@db/api\n",
            ),
            ("project/.gitignore", "target/\n"),
            ("project/app.db", ""),
            ("project/logs/app.log", "ERROR x\n"),
            ("project/data/users.json", "[]\n"),
            ("project/certs/server.pem", "-----BEGIN CERTIFICATE-----\n"),
        ] {
            file(&at(rel), text);
        }
        std::fs::create_dir_all(at(".gnupg")).unwrap();
        for (link, target) in [
            ("project/db", ".hermes/hermesd.db"),
            ("project/settings.yaml", ".hermes/config.yaml"),
            ("project/secrets", ".hermes/.env"),
            ("project/creds", ".hermes/auth.json"),
            ("project/h", ".hermes"),
            ("project/work", ".hermes/profiles/work"),
            ("project/keys", ".ssh"),
            ("project/rc", ".bashrc"),
            ("project/dangling", ".hermes/profiles/work/auth.json"),
        ] {
            std::os::unix::fs::symlink(at(target), at(link)).unwrap();
        }
        let paths = PathPolicy::new(&at(".hermes"), Some(&user));
        let (policy, bad) = CommandPolicy::new(paths.clone(), &[]);
        assert!(bad.is_empty(), "{bad:?}");
        Self {
            _dir: dir,
            user,
            paths,
            policy,
        }
    }

    fn cwd(&self) -> PathBuf {
        self.user.join("project")
    }

    fn fill(&self, text: &str) -> String {
        text.replace("{U}", &self.user.to_string_lossy())
    }

    /// The verdict on `command`; with `HERMESD_CORPUS_DUMP` set, every verdict is printed (to
    /// review why each line is asked or refused).
    fn judge(&self, command: &str) -> Outcome {
        let outcome = Outcome::of(&self.policy.judge(&self.fill(command), &self.cwd()));
        if std::env::var_os("HERMESD_CORPUS_DUMP").is_some() {
            eprintln!("{command:?} → {outcome}");
        }
        outcome
    }

    /// A fixture path: absolute, starting with `~` / `$`, or `./` / `../` (from the project),
    /// resolved as written from the project; otherwise relative to the user's home.
    fn path(&self, text: &str) -> PathBuf {
        let text = self.fill(text);
        if text.starts_with(['/', '~', '$']) || text.starts_with("./") || text.starts_with("../") {
            self.paths.resolve(&text, &self.cwd())
        } else {
            self.paths.resolve(&format!("~/{text}"), &self.cwd())
        }
    }
}

/// A verdict as the fixtures name it, with what it said.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Run,
    Ask(Vec<String>),
    Refuse(String),
}

impl Outcome {
    fn of(verdict: &Verdict) -> Self {
        match verdict {
            Verdict::Run(_) => Self::Run,
            Verdict::Ask(pending) => {
                Self::Ask(pending.asks.iter().map(|a| a.key.clone()).collect())
            }
            Verdict::Refuse(why) => Self::Refuse(why.chars().take(100).collect()),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Ask(_) => "ask",
            Self::Refuse(_) => "refuse",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Run => write!(f, "run"),
            Self::Ask(keys) => write!(f, "ask [{}]", keys.join("; ")),
            Self::Refuse(why) => write!(f, "refuse ({why}…)"),
        }
    }
}

/// The items of a fixture, with the line each starts on. `#` starts a comment line, blank
/// lines are skipped, and a line indented by two spaces continues the item above it (joined by
/// a newline, the two spaces removed): heredoc bodies and `\` continuations.
fn items(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut open = false;
    for (index, line) in text.lines().enumerate() {
        if let (true, Some(rest)) = (open, line.strip_prefix("  ")) {
            if let Some((_, item)) = out.last_mut() {
                item.push('\n');
                item.push_str(rest);
            }
            continue;
        }
        open = false;
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        out.push((index + 1, line.trim().to_string()));
        open = true;
    }
    out
}

/// `\n`, `\t` and `\\` in a stdin fixture field.
fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

fn report(file: &str, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} line(s) of corpus/{file} did not get the expected verdict:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn at_least(file: &str, count: usize, minimum: usize) {
    assert!(
        count >= minimum,
        "corpus/{file} holds {count} items, expected at least {minimum}"
    );
}

#[test]
fn benign_commands_all_run() {
    let layout = Layout::new();
    let items = items(BENIGN_COMMANDS);
    at_least("benign_commands.txt", items.len(), 300);
    let failures: Vec<String> = items
        .iter()
        .filter_map(|(line, command)| {
            let outcome = layout.judge(command);
            (outcome != Outcome::Run).then(|| format!("  {line}: {command:?} → {outcome}"))
        })
        .collect();
    report("benign_commands.txt", &failures);
}

#[test]
fn commands_asked_on_purpose_are_asked_never_refused() {
    let layout = Layout::new();
    let items = items(ASKED_COMMANDS);
    at_least("asked_commands.txt", items.len(), 20);
    let failures: Vec<String> = items
        .iter()
        .filter_map(|(line, command)| {
            let outcome = layout.judge(command);
            (!matches!(outcome, Outcome::Ask(_)))
                .then(|| format!("  {line}: {command:?} → {outcome} (expected ask)"))
        })
        .collect();
    report("asked_commands.txt", &failures);
}

#[test]
fn attacks_are_all_asked_or_refused() {
    let layout = Layout::new();
    let items = items(ATTACK_COMMANDS);
    at_least("attack_commands.txt", items.len(), 100);
    let mut failures = Vec::new();
    for (line, item) in &items {
        let (must_refuse, command) = match item.strip_prefix("[refuse] ") {
            Some(command) => (true, command),
            None => (false, item.as_str()),
        };
        let outcome = layout.judge(command);
        let ok = match outcome {
            Outcome::Run => false,
            Outcome::Ask(_) => !must_refuse,
            Outcome::Refuse(_) => true,
        };
        if !ok {
            let expected = if must_refuse {
                "refuse"
            } else {
                "ask or refuse"
            };
            failures.push(format!(
                "  {line}: {command:?} → {outcome} (expected {expected})"
            ));
        }
    }
    report("attack_commands.txt", &failures);
}

/// The attacks the rules do not catch yet, each with why. They must still run: once one is
/// caught, it belongs in `attack_commands.txt`.
#[test]
fn known_gaps_are_documented_and_still_open() {
    let layout = Layout::new();
    let mut failures = Vec::new();
    for (line, item) in items(KNOWN_GAPS) {
        let Some((command, reason)) = item.rsplit_once(" ## ") else {
            failures.push(format!("  {line}: {item:?} has no ` ## reason`"));
            continue;
        };
        if reason.trim().is_empty() {
            failures.push(format!("  {line}: {command:?} has an empty reason"));
            continue;
        }
        let outcome = layout.judge(command);
        if outcome != Outcome::Run {
            failures.push(format!(
                "  {line}: {command:?} → {outcome}: no longer a gap, move it to \
                 attack_commands.txt"
            ));
        }
    }
    report("known_gaps.txt", &failures);
}

#[test]
fn stdin_writes_get_the_expected_verdict() {
    let layout = Layout::new();
    let items = items(STDIN_CASES);
    at_least("stdin_cases.txt", items.len(), 20);
    let mut failures = Vec::new();
    for (line, item) in &items {
        let fields: Vec<&str> = item.splitn(4, " | ").collect();
        let [expected, process, pending, data] = fields[..] else {
            failures.push(format!(
                "  {line}: {item:?} is not `verdict | process | pending | data`"
            ));
            continue;
        };
        let verdict = layout.policy.judge_stdin(
            &layout.fill(process),
            &layout.cwd(),
            &unescape(pending),
            &layout.fill(&unescape(data)),
        );
        let outcome = Outcome::of(&verdict);
        if outcome.name() != expected.trim() {
            failures.push(format!(
                "  {line}: {process:?} ← {pending:?}+{data:?} → {outcome} (expected {expected})"
            ));
        }
    }
    report("stdin_cases.txt", &failures);
}

/// The verdict of a path fixture's operation, in the fixtures' words.
fn path_verdict(layout: &Layout, op: &str, path: &Path) -> Result<&'static str, String> {
    Ok(match op {
        "read" => match layout.paths.check_read(path) {
            Ok(()) => "allow",
            Err(_) => "deny",
        },
        "write" => match layout.paths.check_write(path) {
            WriteVerdict::Allowed => "allow",
            WriteVerdict::Refused(_) => "refuse",
            WriteVerdict::NeedsApproval { .. } => "ask",
        },
        "workdir" => match layout.paths.check_workdir(path) {
            Ok(()) => "allow",
            Err(_) => "deny",
        },
        other => return Err(format!("unknown operation `{other}`")),
    })
}

fn check_paths(file: &str, text: &str, default: Option<&str>, minimum: usize) {
    let layout = Layout::new();
    let items = items(text);
    at_least(file, items.len(), minimum);
    let mut failures = Vec::new();
    for (line, item) in &items {
        let words: Vec<&str> = item.split_whitespace().collect();
        let (op, path, expected) = match (&words[..], default) {
            ([op, path], Some(default)) => (*op, *path, default),
            ([op, path, expected], None) => (*op, *path, *expected),
            _ => {
                failures.push(format!("  {line}: {item:?} is malformed"));
                continue;
            }
        };
        let real = layout.path(path);
        match path_verdict(&layout, op, &real) {
            Ok(got) if got == expected => {}
            Ok(got) => {
                let mut message = format!("  {line}: {op} {path} → {got} (expected {expected})");
                let _ = write!(message, " [real path {}]", real.display());
                failures.push(message);
            }
            Err(e) => failures.push(format!("  {line}: {e}")),
        }
    }
    report(file, &failures);
}

#[test]
fn benign_paths_are_all_allowed() {
    check_paths("benign_paths.txt", BENIGN_PATHS, Some("allow"), 40);
}

#[test]
fn attack_paths_are_denied_refused_or_asked() {
    check_paths("attack_paths.txt", ATTACK_PATHS, None, 100);
}

#[test]
fn fixture_lines_are_parsed_as_documented() {
    let parsed = items("# c\n\ncat > a <<'EOF'\n  x\n    y\n  EOF\nls \\\n  -la\n# d\n  z\nb\n");
    assert_eq!(
        parsed,
        vec![
            (3, "cat > a <<'EOF'\nx\n  y\nEOF".to_string()),
            (7, "ls \\\n-la".to_string()),
            (10, "z".to_string()),
            (11, "b".to_string()),
        ]
    );
    assert_eq!(unescape(r"a\nb\\n\t"), "a\nb\\n\t");
}
