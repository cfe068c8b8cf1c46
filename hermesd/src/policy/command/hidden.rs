//! Code a command runs that its words do not show as a command: an awk program that calls
//! `system()` or pipes to or from a command, a `git -c` option or an assignment in front of `git`
//! naming a program (a pager, an editor, an ssh command, hooks, a `!` alias…), and text piped
//! into a bare shell or interpreter (`printf '…' | sh`), which runs whatever the text before it
//! makes.

use super::Danger;
use super::lex::shlex_split;
use super::shell::basename;
use super::wrappers::{Runs, program};

/// Key of an awk program that runs commands.
pub const AWK_COMMAND_KEY: &str = "awk program runs a command (system(), a pipe)";
/// Key of a `git -c` option that names a program.
pub const GIT_PROGRAM_KEY: &str = "git -c option names a program git runs";
/// Key of text piped into a shell.
pub const PIPE_SHELL_KEY: &str = "pipe into a shell or interpreter";

pub(super) const AWKS: &[&str] = &["awk", "gawk", "mawk", "nawk", "busybox"];

/// Shells and interpreters that run a program read from stdin when given none.
const STDIN_RUNNERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "python", "python3", "perl", "ruby", "node",
    "php",
];

/// git configuration keys (lower case) whose value is a program git runs: exact, or by prefix
/// and suffix (`filter.x.clean`).
const GIT_PROGRAM_KEYS: &[&str] = &[
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.hookspath",
    "core.fsmonitor",
    "core.askpass",
    "core.gitproxy",
    "sequence.editor",
    "diff.external",
    "credential.helper",
    "gpg.program",
    "uploadpack.packobjectshook",
    "include.path",
];
const GIT_PROGRAM_SUFFIXES: &[&str] = &[
    ".textconv",
    ".command",
    ".driver",
    ".clean",
    ".smudge",
    ".process",
    ".program",
    ".helper",
    ".uploadpack",
    ".receivepack",
    ".path",
    ".cmd",
    ".tool",
];
/// Pagers that run nothing else.
const PLAIN_PAGERS: &[&str] = &["", "cat", "less", "more", "less -r", "less -R", "less -FRX"];

/// The code one segment (`words`, split) runs unseen, if any; `piped` when the segment reads
/// the output of the one before it (`… | sh`). The program is found through its wrappers
/// (`… | timeout 5 sh`, `sudo -u bob git -c …`; see `wrappers`); a wrapper that runs a shell
/// (`… | sudo -s`) is a shell reading the pipe.
pub(crate) fn segment_code(words: &[String], piped: bool) -> Option<Danger> {
    segment_code_at(words, piped, 0)
}

fn segment_code_at(words: &[String], piped: bool, depth: usize) -> Option<Danger> {
    let at = match program(words) {
        Runs::Program(at) => at,
        // A command line a wrapper runs (`script -qc sh`), followed once more.
        Runs::CommandLine(line) if depth < 2 => {
            let inner = shlex_split(line, false)?;
            return segment_code_at(&inner, piped, depth + 1);
        }
        Runs::Shell if piped => return Some(Danger::named(PIPE_SHELL_KEY)),
        Runs::CommandLine(_) | Runs::Shell | Runs::Nothing => return None,
    };
    let name = basename(&words[at]);
    let args = &words[at + 1..];
    let key = if AWKS.contains(&name) {
        args.iter().any(|w| awk_runs(w)).then_some(AWK_COMMAND_KEY)
    } else if name == "git" {
        (git_program(args) || words[..at].iter().any(|w| git_env_program(w)))
            .then_some(GIT_PROGRAM_KEY)
    } else if piped && STDIN_RUNNERS.contains(&name) {
        reads_program_from_stdin(args).then_some(PIPE_SHELL_KEY)
    } else {
        None
    };
    key.map(Danger::named)
}

/// Whether awk program text calls `system()`, pipes to a command (`print | "sh"`, `|&`) or
/// reads one (`"cmd" | getline`).
pub(super) fn awk_runs(program: &str) -> bool {
    let compact: String = program.chars().filter(|c| !c.is_whitespace()).collect();
    compact.contains("system(")
        || compact.contains("|&")
        || compact.contains("|\"")
        || compact.contains("\"|")
        || compact.contains("|getline")
        || piped_to_variable(&compact)
}

/// `print | cmd` with the command in a variable: a `|` (not `||`) before a bare name that ends
/// a statement (`/a|b/` in a regex is followed by more pattern text).
fn piped_to_variable(compact: &str) -> bool {
    compact.match_indices('|').any(|(at, _)| {
        let before = compact[..at].ends_with('|');
        let rest = &compact[at + 1..];
        let name = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let ends = rest[name..].is_empty() || rest[name..].starts_with([';', '}', ')']);
        !before
            && !rest.starts_with('|')
            && name > 0
            && rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && ends
    })
}

/// Variables of git's environment whose value is a program it runs (`GIT_PAGER`, `PAGER`, the
/// editors, ssh and askpass helpers, `GIT_EXTERNAL_DIFF`), or configuration it reads as `-c`.
const GIT_ENV_PROGRAMS: &[&str] = &[
    "GIT_PAGER",
    "PAGER",
    "GIT_EDITOR",
    "EDITOR",
    "VISUAL",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_EXTERNAL_DIFF",
    "GIT_PROXY_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
];

/// Whether an assignment before `git` (`GIT_PAGER='sh -c id' git log`) names a program git
/// runs; a plain pager is not one.
pub(crate) fn git_env_program(word: &str) -> bool {
    let Some((name, value)) = word.split_once('=') else {
        return false;
    };
    let pager = name == "GIT_PAGER" || name == "PAGER";
    (GIT_ENV_PROGRAMS.contains(&name) || name.starts_with("GIT_CONFIG_KEY_"))
        && !(pager && PLAIN_PAGERS.contains(&value.trim()))
}

/// Whether git's options (before the subcommand) set a program-naming key.
fn git_program(args: &[String]) -> bool {
    let mut rest = args.iter();
    while let Some(word) = rest.next() {
        let setting = match word.as_str() {
            "-c" => rest.next().map(String::as_str),
            w if w.starts_with("--config-env=") => w.strip_prefix("--config-env="),
            "--config-env" => rest.next().map(String::as_str),
            w if w.starts_with('-') => continue,
            _ => break,
        };
        let Some(setting) = setting else { break };
        let (key, value) = setting.split_once('=').unwrap_or((setting, ""));
        let key = key.to_ascii_lowercase();
        let alias = key.starts_with("alias.") && value.trim_start().starts_with('!');
        let pager = (key == "core.pager" || key.starts_with("pager."))
            && !PLAIN_PAGERS.contains(&value.trim())
            && !["true", "false"].contains(&value.trim());
        let program = GIT_PROGRAM_KEYS.contains(&key.as_str())
            || (key.contains('.') && GIT_PROGRAM_SUFFIXES.iter().any(|s| key.ends_with(s)));
        if alias || pager || (program && key != "core.pager") {
            return true;
        }
    }
    false
}

/// Whether a shell or interpreter given `args` reads its program from stdin: no script or
/// program operand, or `-s` / `-`.
fn reads_program_from_stdin(args: &[String]) -> bool {
    for word in args {
        match word.as_str() {
            "-" | "-s" => return true,
            "-c" | "-e" | "-m" | "-E" | "-r" => return false,
            w if w.starts_with('-') => {}
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::policy::command::protected::split_words;
    use crate::policy::command::shell::top_level_segments;

    fn key(command: &str) -> Option<&'static str> {
        top_level_segments(command)
            .into_iter()
            .find_map(|(offset, segment)| {
                let piped = command[..offset].trim_end().ends_with('|')
                    && !command[..offset].trim_end().ends_with("||");
                segment_code(&split_words(segment)?.words, piped).map(|d| d.key)
            })
    }

    #[test]
    fn awk_git_and_shell_pipes() {
        assert_eq!(key("awk 'BEGIN {system(\"id\")}'"), Some(AWK_COMMAND_KEY));
        assert_eq!(key("awk '{print | \"sh\"}' f"), Some(AWK_COMMAND_KEY));
        assert_eq!(key("awk '{print $1}' f | sort"), None);
        assert_eq!(key("awk '/a|b/ || $2 > 1' f"), None);
        assert_eq!(key("awk '/ERROR|WARN/ {n++} END {print n}' f"), None);
        assert_eq!(
            key("awk '{c = \"sh\"; print | c}' f"),
            Some(AWK_COMMAND_KEY)
        );
        assert_eq!(
            key("git -c core.pager='sh -c id' log"),
            Some(GIT_PROGRAM_KEY)
        );
        assert_eq!(key("git -c alias.x='!id' x"), Some(GIT_PROGRAM_KEY));
        assert_eq!(key("git -c color.ui=always log"), None);
        assert_eq!(key("git -c core.pager=cat log"), None);
        assert_eq!(key("git log -c"), None);
        assert_eq!(key("GIT_PAGER='sh -c id' git log"), Some(GIT_PROGRAM_KEY));
        assert_eq!(
            key("env GIT_SSH_COMMAND='sh -c id' git fetch"),
            Some(GIT_PROGRAM_KEY)
        );
        assert_eq!(key("GIT_PAGER=cat git log"), None);
        assert_eq!(key("GIT_AUTHOR_NAME=x git commit -m y"), None);
        assert_eq!(key("printf 'x' | sh"), Some(PIPE_SHELL_KEY));
        assert_eq!(key("cat x | bash -s -- a"), Some(PIPE_SHELL_KEY));
        assert_eq!(key("cat x | bash build.sh"), None);
        assert_eq!(key("false || sh"), None);
    }

    #[test]
    fn programs_are_found_through_wrappers() {
        assert_eq!(key("printf 'x' | timeout 5 sh"), Some(PIPE_SHELL_KEY));
        assert_eq!(key("printf 'x' | nice -n 5 bash -s"), Some(PIPE_SHELL_KEY));
        assert_eq!(key("printf 'x' | sudo -s"), Some(PIPE_SHELL_KEY));
        assert_eq!(
            key("printf 'x' | script -qc sh /dev/null"),
            Some(PIPE_SHELL_KEY)
        );
        assert_eq!(
            key("sudo -u bob git -c core.pager='sh -c id' log"),
            Some(GIT_PROGRAM_KEY)
        );
        assert_eq!(
            key("timeout 5 awk 'BEGIN {system(\"id\")}'"),
            Some(AWK_COMMAND_KEY)
        );
        assert_eq!(key("printf 'x' | timeout 5 sort"), None);
    }
}
