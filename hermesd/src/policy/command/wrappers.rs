//! Wrappers: programs that run the program given in their operands — `sudo`, `env`, `timeout`,
//! `nice`, `stdbuf`, `nohup`, `xargs`… — each with its own options, option values and operands,
//! so that the rules judge the program that really runs (`timeout -s KILL 60 bash` runs
//! `bash`, `script -qc 'python3 -i' /dev/null` runs `python3 -i`, `sudo -s` a shell).
//!
//! [`Skipper`] reads the command-position words of one command one at a time and says what
//! each is; [`program`] runs it over a command's words. Wrappers stop reading options at their
//! first operand, as they do (`getopt` with `+`).

use super::shell::basename;
use super::words::is_env_assignment;

/// How one wrapper reads its arguments.
struct Wrapper {
    name: &'static str,
    /// Short options that take a value, in the next word or attached (`-u bob`, `-ubob`).
    short_valued: &'static str,
    /// Short options whose value can only be attached (`xargs -i{}`, `xargs -l5`).
    short_optional: &'static str,
    /// Long options that take a value, in the next word or after `=` (`--user=bob`).
    long_valued: &'static [&'static str],
    /// Operands before the program: `timeout`'s duration, `chrt`'s priority, `taskset`'s mask.
    operands: usize,
    /// The option whose value is a command line the wrapper runs (`script -c`, `env -S`).
    command: Option<(u8, &'static str)>,
    /// Options that make it run a shell when given no program (`sudo -s`, `sudo -i`).
    shell: (&'static str, &'static [&'static str]),
    /// Runs a shell unless a command line is given; its operands are files (`script`).
    shell_unless_command: bool,
}

const fn plain(name: &'static str) -> Wrapper {
    Wrapper {
        name,
        short_valued: "",
        short_optional: "",
        long_valued: &[],
        operands: 0,
        command: None,
        shell: ("", &[]),
        shell_unless_command: false,
    }
}

/// Every wrapper, with what its options take (from their manual pages).
const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        short_valued: "CDghpRrTtUuc",
        long_valued: &[
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--close-from",
            "--chdir",
            "--chroot",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
            "--login-class",
        ],
        shell: ("si", &["--shell", "--login"]),
        ..plain("sudo")
    },
    Wrapper {
        short_valued: "uC",
        shell: ("s", &[]),
        ..plain("doas")
    },
    Wrapper {
        short_valued: "uCP",
        long_valued: &["--unset", "--chdir"],
        command: Some((b'S', "--split-string")),
        ..plain("env")
    },
    Wrapper {
        short_valued: "ks",
        long_valued: &["--kill-after", "--signal"],
        operands: 1,
        ..plain("timeout")
    },
    Wrapper {
        short_valued: "n",
        long_valued: &["--adjustment"],
        ..plain("nice")
    },
    Wrapper {
        short_valued: "cnpPu",
        long_valued: &["--class", "--classdata", "--pid", "--pgid", "--uid"],
        ..plain("ionice")
    },
    Wrapper {
        short_valued: "TPD",
        long_valued: &["--sched-runtime", "--sched-period", "--sched-deadline"],
        operands: 1,
        ..plain("chrt")
    },
    Wrapper {
        operands: 1,
        ..plain("taskset")
    },
    Wrapper {
        short_valued: "ioe",
        long_valued: &["--input", "--output", "--error"],
        ..plain("stdbuf")
    },
    plain("nohup"),
    plain("setsid"),
    Wrapper {
        short_valued: "fo",
        long_valued: &["--format", "--output"],
        ..plain("time")
    },
    plain("command"),
    Wrapper {
        short_valued: "a",
        ..plain("exec")
    },
    plain("builtin"),
    plain("unbuffer"),
    Wrapper {
        short_valued: "EIOBTmo",
        long_valued: &[
            "--echo",
            "--log-in",
            "--log-out",
            "--log-io",
            "--log-timing",
            "--logging-format",
            "--output-limit",
        ],
        command: Some((b'c', "--command")),
        shell_unless_command: true,
        ..plain("script")
    },
    Wrapper {
        short_valued: "aEIdLnPs",
        short_optional: "eil",
        long_valued: &[
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ],
        ..plain("xargs")
    },
    Wrapper {
        short_valued: "bCDefFgHlOPqsStwz",
        short_optional: "apm",
        ..plain("rlwrap")
    },
    plain("eatmydata"),
];

/// What one command-position word is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step<'w> {
    /// A `NAME=value` assignment.
    Assignment,
    /// A wrapper's name (`sudo`, `/usr/bin/timeout`).
    Wrapper,
    /// An option, an option's value or an operand of the wrapper before it (`-u`, `bob`, `60`).
    Argument,
    /// A command line the wrapper runs (`script -c 'bash -i'`, `env -S 'python3 -u'`): this
    /// word, or the part of it after an attached option.
    CommandLine(&'w str),
    /// The program that runs.
    Program,
}

/// What the next word is to the wrapper before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Expect {
    #[default]
    Word,
    Value,
    CommandLine,
}

/// Reads the command-position words of one command, one at a time (see [`Skipper::step`]).
#[derive(Default)]
pub(super) struct Skipper {
    wrapper: Option<&'static Wrapper>,
    /// The wrapper's options may still follow.
    options: bool,
    operands: usize,
    expect: Expect,
    /// A wrapper seen runs a shell when no program follows (`sudo -s`, `script`).
    shell_if_bare: bool,
}

impl Skipper {
    /// What `word` is, the words before it read. Words are compared as given: the command
    /// judge passes them lower-cased, so `SUDO` is a wrapper there.
    pub(super) fn step<'w>(&mut self, word: &'w str) -> Step<'w> {
        match std::mem::take(&mut self.expect) {
            Expect::Value => return Step::Argument,
            Expect::CommandLine => return Step::CommandLine(word),
            Expect::Word => {}
        }
        if let Some(wrapper) = self.wrapper {
            if self.options {
                if word == "--" {
                    self.options = false;
                    return Step::Argument;
                }
                if word == "-" && wrapper.name == "env" {
                    return Step::Argument;
                }
                if word.starts_with("--") {
                    return self.long_option(wrapper, word);
                }
                if word.len() > 1 && word.starts_with('-') {
                    return self.short_options(wrapper, word);
                }
                self.options = false;
            }
            if self.operands > 0 {
                self.operands -= 1;
                return Step::Argument;
            }
            if wrapper.shell_unless_command {
                return Step::Argument;
            }
        }
        if is_env_assignment(word) {
            return Step::Assignment;
        }
        let name = basename(word);
        match WRAPPERS.iter().find(|w| w.name == name) {
            Some(wrapper) => {
                *self = Self {
                    wrapper: Some(wrapper),
                    options: true,
                    operands: wrapper.operands,
                    expect: Expect::Word,
                    shell_if_bare: self.shell_if_bare || wrapper.shell_unless_command,
                };
                Step::Wrapper
            }
            None => Step::Program,
        }
    }

    /// `--name` or `--name=value` of `wrapper`.
    fn long_option<'w>(&mut self, wrapper: &Wrapper, word: &'w str) -> Step<'w> {
        let (name, value) = match word.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (word, None),
        };
        if wrapper.command.is_some_and(|(_, option)| option == name) {
            return match value {
                Some(value) => Step::CommandLine(value),
                None => {
                    self.expect = Expect::CommandLine;
                    Step::Argument
                }
            };
        }
        if value.is_none() && wrapper.long_valued.contains(&name) {
            self.expect = Expect::Value;
        }
        self.shell_if_bare |= wrapper.shell.1.contains(&name);
        Step::Argument
    }

    /// A cluster of short options of `wrapper` (`-Eu bob`, `-oL`, `-qc cmd`).
    fn short_options<'w>(&mut self, wrapper: &Wrapper, word: &'w str) -> Step<'w> {
        for (at, option) in word.bytes().enumerate().skip(1) {
            let attached = word.get(at + 1..).unwrap_or_default();
            if wrapper.command.is_some_and(|(short, _)| short == option) {
                if attached.is_empty() {
                    self.expect = Expect::CommandLine;
                    return Step::Argument;
                }
                return Step::CommandLine(attached);
            }
            if wrapper.short_valued.as_bytes().contains(&option) {
                if attached.is_empty() {
                    self.expect = Expect::Value;
                }
                return Step::Argument;
            }
            if wrapper.short_optional.as_bytes().contains(&option) {
                return Step::Argument;
            }
            self.shell_if_bare |= wrapper.shell.0.as_bytes().contains(&option);
        }
        Step::Argument
    }
}

/// What a command runs once its assignments and wrappers are skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Runs<'w> {
    /// The word at this index is the program; its arguments follow it.
    Program(usize),
    /// A wrapper runs this command line (`script -c`, `env -S`).
    CommandLine(&'w str),
    /// A wrapper runs a shell (`sudo -s`, `sudo -i`, `doas -s`, `script` without `-c`).
    Shell,
    /// Nothing runs but wrappers (`env`, `nohup`), or there are no words.
    Nothing,
}

/// What `words` (one command, split as the shell splits it) run.
pub(super) fn program<S: AsRef<str>>(words: &[S]) -> Runs<'_> {
    let mut skipper = Skipper::default();
    for (index, word) in words.iter().enumerate() {
        match skipper.step(word.as_ref()) {
            Step::Program => return Runs::Program(index),
            Step::CommandLine(line) => return Runs::CommandLine(line),
            Step::Assignment | Step::Wrapper | Step::Argument => {}
        }
    }
    if skipper.shell_if_bare {
        Runs::Shell
    } else {
        Runs::Nothing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(command: &str) -> String {
        let words: Vec<&str> = command.split(' ').collect();
        match program(&words) {
            Runs::Program(at) => words[at..].join(" "),
            Runs::CommandLine(line) => format!("line {line}"),
            Runs::Shell => "shell".into(),
            Runs::Nothing => "nothing".into(),
        }
    }

    #[test]
    fn wrappers_are_skipped_with_their_options_and_operands() {
        for (command, program) in [
            ("bash -i", "bash -i"),
            ("FOO=1 bash", "bash"),
            ("timeout 60 bash", "bash"),
            ("timeout -s KILL --kill-after=5 60 bash", "bash"),
            ("timeout --signal KILL 60 bash", "bash"),
            ("nice -n 5 python3", "python3"),
            ("nice -n5 python3", "python3"),
            ("nice -10 python3", "python3"),
            ("env -i -- FOO=1 bash", "bash"),
            ("env - bash", "bash"),
            ("env -u HOME -C /tmp bash", "bash"),
            ("stdbuf -oL -e L bash", "bash"),
            ("sudo -Eu bob -- node x.js", "node x.js"),
            ("sudo --user=bob -H bash", "bash"),
            ("sudo -u bob FOO=1 bash", "bash"),
            ("ionice -c3 bash", "bash"),
            ("ionice -c 2 -n 7 bash", "bash"),
            ("chrt -f 1 bash", "bash"),
            ("chrt --fifo 1 bash", "bash"),
            ("taskset -c 0 bash", "bash"),
            ("taskset 0x3 bash", "bash"),
            ("time -p bash", "bash"),
            ("/usr/bin/time -f %e -o t.txt bash", "bash"),
            ("exec -a name bash", "bash"),
            ("doas -u bob bash", "bash"),
            ("xargs -n 1 -I {} -0 bash -c x", "bash -c x"),
            ("xargs -i{} bash", "bash"),
            ("rlwrap -a -H h.txt python3", "python3"),
            ("nohup nice -n 5 /usr/bin/timeout 1h setsid -w bash", "bash"),
            ("script -q -c bash /dev/null", "line bash"),
            ("script -qc bash /dev/null", "line bash"),
            ("script --command=bash /dev/null", "line bash"),
            ("env -S bash", "line bash"),
            ("script -q /dev/null", "shell"),
            ("sudo -s", "shell"),
            ("sudo -i", "shell"),
            ("sudo --login", "shell"),
            ("doas -s", "shell"),
            ("sudo -s bash", "bash"),
            ("env FOO=1", "nothing"),
            ("nohup", "nothing"),
        ] {
            assert_eq!(runs(command), program, "{command}");
        }
    }
}
