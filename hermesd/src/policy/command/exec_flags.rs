//! Structural checks of the terminal guard: interpreter `-c`/`-e` flags, interpreter heredocs,
//! `bash -c` payloads and program-running options of read-only tools (`rg --pre`, `man -P`, …).

use std::sync::LazyLock;

use regex::Regex;

use super::command_words::{CommandWord, segment_command_words};
use super::lex::shlex_split;
use super::shell::{basename, lowercase};

/// Description (and key) of a command whose program-bearing part cannot be parsed.
pub(super) const MALFORMED_EXEC: &str = "command parser limit or malformed executable payload";
const SCRIPT_FLAG: &str = "script execution via -e/-c flag";
const SCRIPT_HEREDOC: &str = "script execution via heredoc";
const SHELL_FLAG: &str = "shell command via -c/-lc flag";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Python,
    Node,
    Perl,
    Ruby,
    Php,
    PowerShell,
}

impl Family {
    fn exec_flags(self) -> &'static [&'static str] {
        match self {
            Family::Python => &["-c"],
            Family::Node => &["-e", "--eval", "-p", "--print"],
            Family::Perl => &["-e", "--eval"],
            Family::Ruby => &["-e"],
            Family::Php => &["-r"],
            Family::PowerShell => &["-command", "-c", "-file", "-f"],
        }
    }

    fn options_with_arg(self) -> &'static [&'static str] {
        match self {
            Family::Python => &["-W", "-X", "--check-hash-based-pycs"],
            Family::Node => &[
                "-C",
                "--conditions",
                "--cpu-prof-dir",
                "--diagnostic-dir",
                "--icu-data-dir",
                "--import",
                "--loader",
                "--openssl-config",
                "--require",
                "--title",
            ],
            Family::Perl => &["-0", "-F", "-I", "-M", "-m", "-x"],
            Family::Ruby => &["-C", "-E", "-F", "-I", "-K", "-r"],
            Family::Php => &["-c", "-d", "-z"],
            Family::PowerShell => &[
                "-configurationname",
                "-custompipename",
                "-executionpolicy",
                "-inputformat",
                "-outputformat",
                "-settingsfile",
                "-version",
                "-windowstyle",
                "-workingdirectory",
            ],
        }
    }
}

static INTERPRETER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\A(?:(?P<python>py(?:\.exe)?|python[23]?(?:\.\d+)*(?:\.exe)?)",
        r"|(?P<node>node(?:js)?(?:\.exe)?)",
        r"|(?P<perl>perl[0-9]*(?:\.\d+)*(?:\.exe)?)",
        r"|(?P<ruby>ruby[0-9.]*(?:\.exe)?)",
        r"|(?P<php>php(?:\.exe)?)",
        r"|(?P<powershell>powershell(?:\.exe)?|pwsh(?:\.exe)?))\z",
    ))
    .ok()
});

#[cfg(test)]
pub(super) fn all_regexes_compile() -> bool {
    INTERPRETER.is_some()
}

/// The family of an interpreter by its lower-cased basename `name`.
fn interpreter_family(name: &str) -> Option<Family> {
    // Every interpreter's name starts with one of these (`py…`, `node…`, `perl`, `ruby`, `php`,
    // `pwsh`, `powershell`): others are not matched at all.
    if !name.starts_with(['p', 'n', 'r']) {
        return None;
    }
    let caps = INTERPRETER.as_ref()?.captures(name)?;
    [
        ("python", Family::Python),
        ("node", Family::Node),
        ("perl", Family::Perl),
        ("ruby", Family::Ruby),
        ("php", Family::Php),
        ("powershell", Family::PowerShell),
    ]
    .into_iter()
    .find_map(|(group, family)| caps.name(group).map(|_| family))
}

pub(super) fn split_option(token: &str) -> (&str, Option<&str>) {
    match token.split_once('=') {
        Some((option, value)) => (option, Some(value)),
        None => (token, None),
    }
}

/// Whether the interpreter arguments carry an inline-code option (`python -c`, `node -e`, …).
fn has_interpreter_exec_flag(family: Family, args: &[String]) -> bool {
    let flags = family.exec_flags();
    let with_arg = family.options_with_arg();
    let powershell = family == Family::PowerShell;
    let mut skip_value = false;
    for token in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if token == "--" || (!powershell && !token.starts_with('-')) {
            break;
        }
        let (option, attached) = split_option(token);
        let comparable = if powershell {
            option.to_lowercase()
        } else {
            option.to_owned()
        };
        if flags.contains(&comparable.as_str()) {
            return true;
        }
        let attached_value = with_arg.iter().any(|short| {
            !short.starts_with("--") && option.starts_with(short) && option.len() > short.len()
        });
        if !powershell
            && !option.starts_with("--")
            && option.chars().count() > 2
            && !attached_value
            && option
                .chars()
                .skip(1)
                .any(|c| flags.iter().any(|f| f.len() == 2 && f.ends_with(c)))
        {
            return true;
        }
        if with_arg.contains(&comparable.as_str()) && attached.is_none() {
            skip_value = true;
        }
    }
    false
}

const BASH_OPTIONS_WITH_ARG: [&str; 6] = ["-O", "+O", "-o", "+o", "--init-file", "--rcfile"];
const BASH_SHORT_LETTERS: &str = "ilrsDcabefhkmnptuvxBCEHPTOo";

/// Whether a shell's arguments contain `-c` (also bundled, e.g. `-lc`), and the script it owns.
fn bash_exec_payload(args: &[String]) -> (bool, Option<&str>) {
    let mut index = 0;
    while let Some(token) = args.get(index) {
        if token == "--" || !(token.starts_with('-') || token.starts_with('+')) {
            break;
        }
        if BASH_OPTIONS_WITH_ARG.contains(&token.as_str()) {
            index += 2;
            continue;
        }
        if token.starts_with("--") {
            index += 1;
            continue;
        }
        let letters = &token[1..];
        if !letters.chars().all(|c| BASH_SHORT_LETTERS.contains(c)) {
            index += 1;
            continue;
        }
        let consumes_arg = usize::from(letters.contains(['O', 'o']));
        if !letters.contains('c') {
            index += 1 + consumes_arg;
            continue;
        }
        return (true, args.get(index + 1 + consumes_arg).map(String::as_str));
    }
    (false, None)
}

/// Read-only tools with an option that runs an arbitrary program. Option lists are
/// space-separated; `*_with_arg` options own the next argument.
#[derive(Clone, Copy)]
struct ReadTool {
    name: &'static str,
    exec_flags: &'static str,
    long_with_arg: &'static str,
    short_with_arg: &'static str,
}

impl ReadTool {
    fn has_exec_flag(&self, option: &str) -> bool {
        self.exec_flags.split(' ').any(|flag| flag == option)
    }

    fn long_option_takes_arg(&self, option: &str) -> bool {
        self.long_with_arg.split(' ').any(|flag| flag == option)
    }
}

const READ_TOOLS: [ReadTool; 4] = [
    ReadTool {
        name: "sort",
        exec_flags: "--compress-program",
        long_with_arg: "--batch-size --buffer-size --compress-program --field-separator \
            --files0-from --key --output --parallel --random-source --sort \
            --temporary-directory",
        short_with_arg: "koStT",
    },
    ReadTool {
        name: "rg",
        exec_flags: "--pre --hostname-bin",
        long_with_arg: "--after-context --before-context --color --colors --context \
            --context-separator --dfa-size-limit --encoding --engine \
            --field-context-separator --field-match-separator --file --generate \
            --glob --hostname-bin --hyperlink-format --iglob --ignore-file \
            --max-columns --max-count --max-depth --max-filesize --path-separator \
            --pre --pre-glob --regex-size-limit --regexp --replace --sort --sortr \
            --threads --type --type-add --type-clear --type-not",
        short_with_arg: "efEmjgdtTABCMr",
    },
    ReadTool {
        name: "ag",
        exec_flags: "--pager",
        long_with_arg: "--ackmate-dir-filter --color-line-number --color-match --color-path \
            --depth --filename-pattern --file-search-regex --ignore --ignore-dir \
            --max-count --pager --path-to-ignore --width --workers",
        short_with_arg: "gGmpW",
    },
    ReadTool {
        name: "man",
        exec_flags: "--pager --html -P -H",
        long_with_arg: "--config-file --encoding --extension --locale --manpath --pager \
            --preprocessor --prompt --recode --sections --systems",
        short_with_arg: "CRLmMSserEPp",
    },
];

/// Description for `tool` + `option`, as Python formats `arbitrary program execution via …`.
fn read_tool_description(tool: &str, option: &str) -> &'static str {
    match (tool, option) {
        ("sort", _) => "arbitrary program execution via sort --compress-program",
        ("rg", "--pre") => "arbitrary program execution via rg --pre",
        ("rg", _) => "arbitrary program execution via rg --hostname-bin",
        ("ag", _) => "arbitrary program execution via ag --pager",
        ("man", "--pager") => "arbitrary program execution via man --pager",
        ("man", "--html") => "arbitrary program execution via man --html",
        ("man", "-P") => "arbitrary program execution via man -P",
        _ => "arbitrary program execution via man -H",
    }
}

/// The program-running option of a read-only tool and the program it names.
fn read_tool_exec_flag<'a>(tool: &ReadTool, args: &'a [String]) -> Option<(&'a str, &'a str)> {
    let mut index = 0;
    while let Some(token) = args.get(index) {
        if token == "--" {
            break;
        }
        let (option, mut payload) = split_option(token);
        let mut matched = tool.has_exec_flag(option).then_some(option);
        if tool.name == "man"
            && (token.starts_with("-P") || token.starts_with("-H"))
            && token.chars().count() > 2
        {
            matched = Some(&token[..2]);
            payload = Some(&token[2..]);
        }
        if let Some(matched) = matched {
            if payload.is_none() {
                payload = args.get(index + 1).map(String::as_str);
            }
            if let Some(program) = payload.filter(|p| !p.is_empty()) {
                return Some((matched, program));
            }
            index += if payload.is_some() && !token.contains('=') {
                2
            } else {
                1
            };
            continue;
        }
        if tool.long_option_takes_arg(option) && payload.is_none() {
            index += 2;
            continue;
        }
        if token.starts_with('-') && !token.starts_with("--") && token.len() > 1 {
            let total = token.chars().count();
            let owner = token
                .chars()
                .enumerate()
                .skip(1)
                .find(|&(_, c)| tool.short_with_arg.contains(c));
            index += match owner {
                Some((at, _)) if at == total - 1 => 2,
                _ => 1,
            };
            continue;
        }
        index += 1;
    }
    None
}

/// One execution mechanism found in a command, and the script it will run if known.
pub(super) struct ExecFinding {
    pub(super) description: &'static str,
    pub(super) payload: Option<String>,
}

/// Every inline-code flag, interpreter heredoc, shell `-c` and program-running tool option.
pub(super) fn execution_flag_findings(command: &str) -> Vec<ExecFinding> {
    execution_flag_findings_in(&segment_command_words(command))
}

/// [`execution_flag_findings`] of a command whose command words are `words`
/// ([`segment_command_words`]).
pub(super) fn execution_flag_findings_in(words: &[CommandWord<'_>]) -> Vec<ExecFinding> {
    let mut findings = Vec::new();
    let mut push = |description: &'static str, payload: Option<&str>| {
        findings.push(ExecFinding {
            description,
            payload: payload.map(str::to_owned),
        });
    };
    for word in words {
        let (segment, start) = (word.segment, word.start);
        let name = lowercase(basename(&word.executable));
        let family = interpreter_family(&name);
        let read_tool = READ_TOOLS.iter().find(|tool| tool.name == name);
        let shell = matches!(&*name, "bash" | "sh" | "zsh" | "ksh");
        if family.is_none() && read_tool.is_none() && !shell {
            // Nothing below looks at this command's arguments.
            continue;
        }
        let Some(tokens) = shlex_split(&segment[start..], true) else {
            if family.is_some() || read_tool.is_some() {
                push(MALFORMED_EXEC, None);
            }
            continue;
        };
        let Some((_, args)) = tokens.split_first() else {
            continue;
        };
        if let Some(family) = family {
            if has_interpreter_exec_flag(family, args) {
                push(SCRIPT_FLAG, None);
                continue;
            }
            if args.iter().any(|token| token.starts_with("<<")) {
                push(SCRIPT_HEREDOC, None);
                continue;
            }
        }
        if shell {
            let (found, payload) = bash_exec_payload(args);
            if found {
                push(SHELL_FLAG, payload);
            }
        }
        if let Some(tool) = read_tool
            && let Some((option, program)) = read_tool_exec_flag(tool, args)
        {
            push(read_tool_description(tool.name, option), Some(program));
        }
    }
    findings
}
