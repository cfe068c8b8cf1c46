//! Shell-shape post-filters: does a pipeline feed a download or decoded data into a program
//! that executes its stdin (`| sh`, `| sudo bash -s`, `| python3 -`, but not `| sha256sum`,
//! `| python3 -c '…json…'` or `| bash -c 'cat > f'`); is a downloaded file run in the same
//! line; what does `rm -r` delete.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::checks::compile;
use super::text::{after, code_spans, is_table_row};

/// Which kind of program executes the piped data.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Sink {
    /// sh, bash, zsh, …
    Shell,
    /// python, perl, ruby, node, php.
    Interpreter,
}

static DOWNLOAD: LazyLock<Option<Regex>> = LazyLock::new(|| compile(r"\b(?:curl|wget|fetch)\b"));
static CURL: LazyLock<Option<Regex>> = LazyLock::new(|| compile(r"\b(?:curl|fetch)\b"));
static WGET: LazyLock<Option<Regex>> = LazyLock::new(|| compile(r"\bwget\b"));
static ECHO: LazyLock<Option<Regex>> = LazyLock::new(|| compile(r"\b(?:echo|printf)\b"));
static DECODER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r"\bbase64\s+(?:[^|;&]*\s)?(?:-\w*d\w*|--decode)\b|\bbase32\s+(?:[^|;&]*\s)?(?:-d|--decode)\b|\bxxd\s+(?:[^|;&]*\s)?-\w*r|\bopenssl\s+(?:enc|base64|aes\S*|des\S*)\b[^|;&]*\s-d\b|\b(?:gunzip|zcat|uudecode|bunzip2|unxz|xzcat)\b|\bgzip\s+-\w*d|\brev\b",
    )
});

fn is_shell(name: &str) -> bool {
    matches!(
        name,
        "sh" | "bash" | "zsh" | "ksh" | "dash" | "fish" | "mksh" | "ash"
    )
}

fn is_interpreter(name: &str) -> bool {
    let python = name
        .strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'));
    python
        || matches!(
            name,
            "pypy" | "pypy3" | "perl" | "ruby" | "node" | "nodejs" | "php"
        )
}

/// Characters that end a command word (`sh;`, `sh)`, `sh"` inside `sh -c "… | sh"`).
const WORD_END: &[char] = &[';', ')', '"', '\'', '`', '&', '|', '}'];

/// The program a pipe stage runs executes its stdin as code: `Some(kind)` if so.
fn stage_executes_stdin(stage: &str) -> Option<Sink> {
    let mut tokens = stage.split_whitespace().peekable();
    let program = loop {
        let token = tokens.next()?.trim_start_matches(['(', '{']);
        let name = token.rsplit('/').next().unwrap_or(token);
        match name {
            "sudo" | "doas" => {
                while let Some(flag) = tokens.next_if(|t| t.starts_with('-')) {
                    if matches!(
                        flag,
                        "-u" | "-g" | "-C" | "-D" | "-h" | "-p" | "-U" | "-r" | "-t"
                    ) {
                        tokens.next();
                    }
                }
            }
            "env" => {
                while tokens
                    .next_if(|t| t.starts_with('-') || t.contains('='))
                    .is_some()
                {}
            }
            "exec" | "command" | "nohup" | "time" | "nice" => {}
            _ => break token,
        }
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    let bare = name.trim_end_matches(WORD_END);
    let kind = if is_shell(bare) {
        Sink::Shell
    } else if is_interpreter(bare) {
        Sink::Interpreter
    } else {
        return None;
    };
    if bare.len() != name.len() {
        return Some(kind);
    }
    let mut reads_script_from_stdin_with_args = false;
    for token in tokens {
        if token.starts_with(['|', '&', ';', ')', '#', '>', '<']) || token.starts_with("2>") {
            return Some(kind);
        }
        let word = token.trim_end_matches(WORD_END);
        let ends_command = word.len() != token.len();
        if word == "-" || word == "--" {
            return Some(kind);
        }
        if let Some(flags) = word.strip_prefix('-') {
            let runs_argument = match kind {
                Sink::Shell => !flags.starts_with('-') && flags.contains('c'),
                Sink::Interpreter => {
                    flags.starts_with("-eval")
                        || flags.starts_with("-print")
                        || (!flags.starts_with('-')
                            && flags.contains(['c', 'm', 'e', 'E', 'r', 'p', 'n']))
                }
            };
            if runs_argument {
                return None;
            }
            reads_script_from_stdin_with_args |=
                kind == Sink::Shell && !flags.starts_with('-') && flags.contains('s');
        } else if !reads_script_from_stdin_with_args {
            return None;
        }
        if ends_command {
            return Some(kind);
        }
    }
    Some(kind)
}

/// Executing sinks fed by pipes found after byte `from` of `text`.
fn pipe_sinks(text: &str, from: usize) -> Vec<Sink> {
    let bytes = text.as_bytes();
    let mut sinks = Vec::new();
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        let single = b == b'|'
            && bytes.get(i + 1) != Some(&b'|')
            && (i == 0 || bytes[i - 1] != b'|')
            && (i == 0 || bytes[i - 1] != b'\\');
        if single && let Some(kind) = stage_executes_stdin(after(text, i + 1)) {
            sinks.push(kind);
        }
    }
    sinks
}

/// Runs `analyse(text, source_position)` on the line, or on each code span of a table row
/// (whose bare pipes separate cells).
fn on_commands(
    line: &str,
    m: &Range<usize>,
    source: &LazyLock<Option<Regex>>,
    analyse: impl Fn(&str, usize) -> bool,
) -> bool {
    if !is_table_row(line) {
        return analyse(line, m.start);
    }
    let Some(source) = source.as_ref() else {
        return true;
    };
    code_spans(line)
        .iter()
        .any(|span| source.find(span).is_some_and(|s| analyse(span, s.start())))
}

fn feeds(
    source: &'static LazyLock<Option<Regex>>,
    line: &str,
    m: Range<usize>,
    want: Sink,
) -> bool {
    on_commands(line, &m, source, |text, at| {
        pipe_sinks(text, at).contains(&want)
    })
}

/// `curl … | sh` (and `| sudo bash -s --`, `| tee x | sh`).
pub(super) fn curl_to_shell(line: &str, m: Range<usize>) -> bool {
    feeds(&CURL, line, m, Sink::Shell)
}

/// `wget … | sh`.
pub(super) fn wget_to_shell(line: &str, m: Range<usize>) -> bool {
    feeds(&WGET, line, m, Sink::Shell)
}

/// `curl/wget … | python3` (stdin as program).
pub(super) fn download_to_interpreter(line: &str, m: Range<usize>) -> bool {
    feeds(&DOWNLOAD, line, m, Sink::Interpreter)
}

/// `echo … | sh`.
pub(super) fn echo_to_executor(line: &str, m: Range<usize>) -> bool {
    on_commands(line, &m, &ECHO, |text, at| !pipe_sinks(text, at).is_empty())
}

/// `… | base64 -d | sh`, `xxd -r -p | bash`, `openssl enc -d … | sh`.
pub(super) fn decoded_to_executor(line: &str, m: Range<usize>) -> bool {
    on_commands(line, &m, &DECODER, |text, _| {
        let Some(decoder) = DECODER.as_ref() else {
            return true;
        };
        decoder
            .find_iter(text)
            .any(|d| !pipe_sinks(text, d.end()).is_empty())
    })
}

/// `curl -o f URL && sh f`, `wget URL/get-pip.py && python3 get-pip.py`: a downloaded file
/// run on the same line, without a chance to read it first.
pub(super) fn runs_download(line: &str, m: Range<usize>) -> bool {
    let rest = after(line, m.start);
    let mut commands = rest
        .split(['&', ';', '|'])
        .map(str::trim)
        .filter(|c| !c.is_empty());
    let Some(download) = commands.next() else {
        return false;
    };
    commands.any(|command| {
        let mut words = command
            .split_whitespace()
            .skip_while(|w| *w == "sudo" || w.starts_with('-'));
        let Some(program) = words.next() else {
            return false;
        };
        let target = if program.starts_with("./") {
            Some(program)
        } else if is_shell(program)
            || is_interpreter(program)
            || program == "source"
            || program == "."
        {
            words.find(|w| !w.starts_with('-'))
        } else {
            None
        };
        target
            .map(|t| t.trim_start_matches("./").trim_matches(['"', '\'']))
            .and_then(|t| t.rsplit('/').next())
            .is_some_and(|file| file.len() > 2 && download.contains(file))
    })
}

/// What an `rm -r` argument points at.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum RmTarget {
    Temp,
    System,
    HomeItself,
    Deep,
    Relative,
}

const SYSTEM_DIRS: &[&str] = &[
    "/etc",
    "/boot",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/sys",
    "/proc",
    "/dev",
    "/root",
];
const TEMP_DIRS: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];

fn under(path: &str, dir: &str) -> bool {
    path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Classifies one `rm` argument.
pub(super) fn classify_rm_target(raw: &str) -> RmTarget {
    let unquoted = raw.replace(['"', '\''], "");
    let target = unquoted.as_str();
    for home in ["~", "${HOME}", "$HOME"] {
        if let Some(rest) = target.strip_prefix(home) {
            return if matches!(rest, "" | "/" | "/*" | "/.*") {
                RmTarget::HomeItself
            } else if rest.starts_with('/') {
                RmTarget::Deep
            } else {
                RmTarget::Relative
            };
        }
    }
    if !target.starts_with('/') {
        return RmTarget::Relative;
    }
    let path = target.trim_end_matches(['*', '/']);
    if TEMP_DIRS.iter().any(|d| under(path, d)) {
        RmTarget::Temp
    } else if path.is_empty()
        || path.starts_with("/$")
        || !path[1..].contains('/')
        || SYSTEM_DIRS.iter().any(|d| under(path, d))
    {
        RmTarget::System
    } else {
        RmTarget::Deep
    }
}

/// The non-flag arguments of the `rm` command starting at `start`.
fn rm_targets(line: &str, start: usize) -> impl Iterator<Item = RmTarget> + '_ {
    after(line, start)
        .split_whitespace()
        .skip(1)
        .take_while(|w| !w.starts_with(['|', '&', ';', '>', '#']))
        .filter(|w| !w.starts_with('-'))
        .map(|w| classify_rm_target(w.trim_end_matches([';', ')', '`'])))
}

/// `rm -r` of `/`, a top-level directory or a system directory (temp roots exempt).
pub(super) fn rm_system(line: &str, m: Range<usize>) -> bool {
    after(line, m.start).contains("--no-preserve-root")
        || rm_targets(line, m.start).any(|t| t == RmTarget::System)
}

/// `rm -r ~`, `rm -rf $HOME/*`.
pub(super) fn rm_home(line: &str, m: Range<usize>) -> bool {
    rm_targets(line, m.start).any(|t| t == RmTarget::HomeItself)
}

/// `rm -r` of some other absolute or home path.
pub(super) fn rm_deep(line: &str, m: Range<usize>) -> bool {
    rm_targets(line, m.start).any(|t| t == RmTarget::Deep)
}
