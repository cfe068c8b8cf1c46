//! Writes to a background process's stdin, as the command rules see them: the text is cut into
//! complete commands at each newline or `;` (the rest waits in the process's buffer until it is
//! complete), and a process whose command is an interpreter — a shell, python, node, sqlite3, a
//! remote shell… — runs whatever it is sent, so writing to it needs the user's consent.

use super::lex::shlex_split;
use super::shell::{basename, top_level_segments};

/// The pattern key (and reason) of a write to an interpreter's stdin.
pub const INTERPRETER_WRITE_KEY: &str = "write to a background interpreter's stdin";

/// Programs that execute what they read (compared by basename; `python3.11` is `python`).
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "fish",
    "csh",
    "tcsh",
    "ash",
    "busybox",
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
    "sudo",
    "doas",
    "xargs",
    "env",
    "script",
    "tmux",
    "screen",
    "at",
    "batch",
    "crontab",
];

/// Whether `command` (what a background process was started with) runs an interpreter at any of
/// its command starts.
pub fn runs_interpreter(command: &str) -> bool {
    top_level_segments(command).iter().any(|(_, segment)| {
        let words = shlex_split(segment, false)
            .unwrap_or_else(|| segment.split_whitespace().map(str::to_string).collect());
        words
            .iter()
            .find(|w| {
                !w.contains('=') && !["exec", "nohup", "command", "time"].contains(&w.as_str())
            })
            .is_some_and(|word| is_interpreter(basename(word)))
    })
}

fn is_interpreter(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let bare = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERPRETERS.contains(&name.as_str()) || INTERPRETERS.contains(&bare)
}

/// `pending + data` cut into the complete commands it holds (each ending at a newline or an
/// unquoted-or-not `;`, terminator kept) and the incomplete rest.
pub fn complete_commands(pending: &str, data: &str) -> (Vec<String>, String) {
    let text = format!("{pending}{data}");
    let mut commands = Vec::new();
    let mut start = 0;
    for (at, c) in text.char_indices() {
        if c == '\n' || c == ';' {
            let end = at + c.len_utf8();
            commands.push(text[start..end].to_string());
            start = end;
        }
    }
    let rest = text[start..].to_string();
    (commands, rest)
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
        ] {
            assert!(runs_interpreter(command), "{command}");
        }
        for command in ["sleep 100", "tail -f log", "npm run dev", "cargo watch"] {
            assert!(!runs_interpreter(command), "{command}");
        }
    }

    #[test]
    fn input_is_cut_at_newlines_and_semicolons() {
        let (done, rest) = complete_commands("rm -r", "f /tmp/x\necho a; ech");
        assert_eq!(done, vec!["rm -rf /tmp/x\n", "echo a;"]);
        assert_eq!(rest, " ech");
    }
}
