//! Writes to a background process's stdin, as the command rules see them.
//!
//! The receiving program is found through the wrappers the process runs under (`timeout 60
//! bash`, `sudo -u bob python3`, `script -qc bash /dev/null`: see `wrappers`). A process whose
//! program is an interpreter — a shell, python, node, sqlite3, a remote shell… — runs whatever
//! it is sent, so writing to it needs the user's consent.
//!
//! What is written is cut into the complete commands it holds, and only those are sent (and
//! judged); the rest waits in the process's buffer until a later write completes it. A shell
//! joins lines as bash reads them (`reader`): a line ending in a backslash continues on the
//! next, so does an open quote or `$(…)`, and a here-document is one command with its body, up
//! to its delimiter line; a command ends at a newline or `;` outside all of them. Any other
//! program gets each line at its newline or `;`, a line ending in a backslash joined with the
//! next (an apostrophe in an answer to `npm init` is text, not an open quote).

use super::lex::{decode_quoting, shlex_split};
use super::reader::{Input, Mark, scan};
use super::shell::{basename, top_level_segments};
use super::wrappers::{Runs, program};

/// The pattern key (and reason) of a write to an interpreter's stdin.
pub const INTERPRETER_WRITE_KEY: &str = "write to a background interpreter's stdin";

/// Shells: they join lines as bash does (compared by basename).
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "ash", "yash", "posh",
    "busybox",
];

/// Programs that pass what they read to a shell elsewhere: a remote login (`ssh`, `su`), or a
/// container's program when that is a shell (`docker exec -it web sh`).
const REMOTE_SHELLS: &[&str] = &["ssh", "su"];
const CONTAINERS: &[&str] = &["docker", "podman", "kubectl", "lxc", "nerdctl"];

/// Programs other than shells that execute what they read (compared by basename;
/// `python3.11` is `python`). `xargs` is one whatever it runs: what it reads becomes the
/// arguments of its program (`xargs rm -rf` sent `/`).
const INTERPRETERS: &[&str] = &[
    "python",
    "ipython",
    "pypy",
    "node",
    "nodejs",
    "deno",
    "bun",
    "ruby",
    "irb",
    "perl",
    "php",
    "lua",
    "luajit",
    "r",
    "rscript",
    "julia",
    "ghci",
    "scala",
    "clojure",
    "tclsh",
    "wish",
    "expect",
    "sqlite3",
    "psql",
    "mysql",
    "mariadb",
    "redis-cli",
    "mongo",
    "mongosh",
    "duckdb",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "ssh",
    "gdb",
    "lldb",
    "docker",
    "podman",
    "kubectl",
    "su",
    "xargs",
    "tmux",
    "screen",
    "at",
    "batch",
    "crontab",
];

/// How deep command lines run by wrappers (`script -c '…'`) are followed.
const MAX_DEPTH: usize = 4;

/// What reads the stdin of a process started with `command`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Receivers {
    /// Some program that reads it executes what it reads.
    interpreter: bool,
    /// Some program that reads it is a shell, which joins lines as bash does.
    shell: bool,
}

/// The programs at every command start of `command` (the stdin of `a && b` or `a | b` may
/// reach either), each found through its wrappers.
fn receivers(command: &str, depth: usize) -> Receivers {
    let mut found = Receivers::default();
    let command = decode_quoting(command);
    for (_, segment) in top_level_segments(&command) {
        let words = shlex_split(segment, false)
            .unwrap_or_else(|| segment.split_whitespace().map(str::to_string).collect());
        let (interpreter, shell) = match program(&words) {
            Runs::Program(at) => {
                let name = basename(&words[at]);
                let shell = is_named(name, SHELLS)
                    || is_named(name, REMOTE_SHELLS)
                    || (is_named(name, CONTAINERS)
                        && words[at + 1..]
                            .iter()
                            .any(|w| is_named(basename(w), SHELLS)));
                (shell || is_named(name, INTERPRETERS), shell)
            }
            Runs::CommandLine(line) if depth < MAX_DEPTH => {
                let inner = receivers(line, depth + 1);
                (inner.interpreter, inner.shell)
            }
            // A command line too deep to follow is taken for a shell.
            Runs::CommandLine(_) | Runs::Shell => (true, true),
            Runs::Nothing => (false, false),
        };
        found.interpreter |= interpreter;
        found.shell |= shell;
    }
    found
}

/// Whether `name`, lower-cased and without a version suffix (`python3.11`), is in `list`.
fn is_named(name: &str, list: &[&str]) -> bool {
    let name = name.to_ascii_lowercase();
    let bare = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    list.contains(&name.as_str()) || list.contains(&bare)
}

/// Whether `command` (what a background process was started with) runs an interpreter at any of
/// its command starts, through any wrappers.
pub fn runs_interpreter(command: &str) -> bool {
    receivers(command, 0).interpreter
}

/// `pending + data`, written to the stdin of a process started with `process_command`, cut into
/// the complete commands it holds (each with its terminator) and the incomplete rest: as a
/// shell reads it when the process runs one, else at each newline or `;` not escaped by a
/// backslash (see the module docs).
pub fn complete_commands(
    process_command: &str,
    pending: &str,
    data: &str,
) -> (Vec<String>, String) {
    let text = format!("{pending}{data}");
    let ends = if receivers(process_command, 0).shell {
        shell_command_ends(&text)
    } else {
        line_ends(&text)
    };
    let mut commands = Vec::with_capacity(ends.len());
    let mut start = 0;
    for end in ends {
        commands.push(text[start..end].to_string());
        start = end;
    }
    let rest = text[start..].to_string();
    (commands, rest)
}

/// Where the complete commands a shell reads from `text` end.
fn shell_command_ends(text: &str) -> Vec<usize> {
    scan(text, Input::Stream)
        .marks
        .into_iter()
        .filter_map(|mark| match mark {
            Mark::End { at } => Some(at),
            _ => None,
        })
        .collect()
}

/// Where the lines of `text` end for a program that is no shell: past each newline or `;`, but
/// a newline after an odd number of backslashes continues the line.
fn line_ends(text: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut backslashes = 0usize;
    for (at, byte) in text.bytes().enumerate() {
        match byte {
            b'\n' if backslashes % 2 == 1 => {}
            b'\n' | b';' => ends.push(at + 1),
            _ => {}
        }
        backslashes = if byte == b'\\' { backslashes + 1 } else { 0 };
    }
    ends
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpreters_are_recognised_at_any_command_start() {
        for command in [
            "bash",
            "python3 -i",
            "cd x && sqlite3 db",
            "FOO=1 node",
            "python3.11",
            "docker exec -it web sh",
        ] {
            assert!(runs_interpreter(command), "{command}");
        }
        for command in [
            "sleep 100",
            "tail -f log",
            "npm run dev",
            "cargo watch",
            "env",
            "sudo cat",
        ] {
            assert!(!runs_interpreter(command), "{command}");
        }
    }

    #[test]
    fn shells_are_told_from_other_programs() {
        for command in [
            "bash",
            "nohup bash -i",
            "ssh host",
            "docker exec -it web bash",
            "sudo -s",
            "script -qc 'env bash' /dev/null",
        ] {
            assert!(receivers(command, 0).shell, "{command}");
        }
        for command in [
            "python3",
            "cat",
            "docker exec -it db psql",
            "sqlite3 app.db",
        ] {
            assert!(!receivers(command, 0).shell, "{command}");
        }
    }

    #[test]
    fn input_is_cut_at_newlines_and_semicolons() {
        let (done, rest) = complete_commands("cat", "rm -r", "f /tmp/x\necho a; ech");
        assert_eq!(done, vec!["rm -rf /tmp/x\n", "echo a;"]);
        assert_eq!(rest, " ech");
    }
}
