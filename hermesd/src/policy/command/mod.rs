//! Dangerous shell command detection for the `terminal` tool (port of the detection half of
//! Hermes' `tools/approval.py`: hardline blocklist, dangerous patterns, structural checks).
//!
//! Every check first normalises the command (see `normalize`) and then matches the
//! lower-cased text and a few derived *variants* of it: quoted `grep -P` patterns blanked, the
//! scripts of `bash -c` / `rg --pre` style options, the command with a newline inserted at every
//! real command start (so `(reboot)` anchors), and the command with its command words
//! de-obfuscated (`r''m` → `rm`). Like Python, quoted text is *not* exempt: `echo 'rm -rf /'`
//! is reported. The first matching rule wins, in Python's order.

mod awk_files;
mod command_words;
mod exec_flags;
mod extra;
mod grep;
mod hidden;
mod judge;
mod lex;
mod nested;
mod normalize;
mod patterns;
mod protected;
mod reader;
mod shell;
mod stdin;
mod variants;
mod words;
mod wrappers;

#[cfg(test)]
mod behaviour_tests;
#[cfg(test)]
mod judge_tests;
#[cfg(test)]
mod quoting_tests;
#[cfg(test)]
mod reader_tests;
#[cfg(test)]
mod stdin_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tree_tests;

pub use self::extra::{OVERWRITE_KEY, SECRET_READ_KEY};
pub use self::hidden::{AWK_COMMAND_KEY, GIT_PROGRAM_KEY, PIPE_SHELL_KEY};
pub use self::judge::{Ask, Clearance, CommandPolicy, Pending, Verdict};
pub use self::protected::{RUNS_WRITTEN_KEY, SETTINGS_WRITE_KEY};
pub use self::stdin::{INTERPRETER_WRITE_KEY, complete_commands};

#[cfg(test)]
use std::path::Path;
use std::sync::LazyLock;

use regex::{Regex, RegexSet, RegexSetBuilder};

use self::exec_flags::MALFORMED_EXEC;
#[cfg(test)]
use self::extra::overwritten_existing_file;
use self::extra::secret_file_read;
#[cfg(test)]
use self::normalize::{normalize, parser_limit_exceeded};
use self::patterns::{Rule, RuleCheck, SUDO_STDIN, dangerous_rules, hardline_rules};
pub(super) use self::variants::Prepared;

/// A detected danger. `key` identifies the rule for "approved for this session / always";
/// for every rule ported from Hermes it equals Python's pattern key (its description), so
/// allowlists written by Hermes keep working.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Danger {
    /// Stable identifier of the rule (Hermes' `pattern_key`).
    pub key: &'static str,
    /// Human-readable reason shown to the user.
    pub description: &'static str,
}

impl Danger {
    pub(super) const fn named(text: &'static str) -> Self {
        Self {
            key: text,
            description: text,
        }
    }
}

/// Key of commands too large to inspect; they are always reported (fail closed).
pub const PARSER_LIMIT_KEY: &str = "command parser limit exceeded";
/// Key reported if the built-in patterns failed to compile (fail closed; never expected).
pub const PATTERNS_UNAVAILABLE_KEY: &str = "dangerous-command patterns unavailable";
const SUDO_STDIN_GUESS: &str = "sudo password guessing via stdin (sudo -S)";

/// A rule table compiled into one `RegexSet`, matched in table order.
pub(super) struct CompiledRules {
    set: RegexSet,
    rules: Vec<(&'static str, RuleCheck)>,
}

impl CompiledRules {
    fn compile(rules: Vec<Rule>) -> Option<Self> {
        let set = RegexSetBuilder::new(rules.iter().map(|r| r.pattern.as_str()))
            .case_insensitive(true)
            .dot_matches_new_line(true)
            .build()
            .ok()?;
        let rules = rules
            .into_iter()
            .map(|r| (r.description, r.check))
            .collect();
        Some(Self { set, rules })
    }

    /// Description of the first rule matching `text`.
    fn first_match(&self, text: &str) -> Option<&'static str> {
        self.set
            .matches(text)
            .iter()
            .filter_map(|index| self.rules.get(index))
            .find(|(_, check)| match check {
                RuleCheck::Plain => true,
                RuleCheck::DeleteWithoutWhere => delete_without_where(text),
            })
            .map(|(description, _)| *description)
    }

    /// Indexes of every rule whose regex matches `text` (for tests).
    #[cfg(test)]
    pub(super) fn matching_indexes(&self, text: &str) -> Vec<usize> {
        self.set.matches(text).iter().collect()
    }
}

pub(super) static HARDLINE: LazyLock<Option<CompiledRules>> =
    LazyLock::new(|| CompiledRules::compile(hardline_rules()));
pub(super) static DANGEROUS: LazyLock<Option<CompiledRules>> =
    LazyLock::new(|| CompiledRules::compile(dangerous_rules()));
static SUDO_STDIN_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!("(?i){SUDO_STDIN}")).ok());
static DELETE_FROM: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\bdelete\s+from\b").ok());
static WHERE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"(?i)\bwhere\b").ok());

#[cfg(test)]
pub(super) fn all_regexes_compile() -> bool {
    HARDLINE.is_some()
        && DANGEROUS.is_some()
        && SUDO_STDIN_RE.is_some()
        && DELETE_FROM.is_some()
        && WHERE.is_some()
}

/// Python's `\bDELETE\s+FROM\b(?![^\n]*\bWHERE\b)`: some `DELETE FROM` with no `WHERE` later
/// on its line.
fn delete_without_where(text: &str) -> bool {
    let (Some(delete), Some(where_)) = (DELETE_FROM.as_ref(), WHERE.as_ref()) else {
        return true;
    };
    delete.find_iter(text).any(|m| {
        let rest = &text[m.end()..];
        let line = rest.split('\n').next().unwrap_or(rest);
        !where_.is_match(line)
    })
}

/// Hermes' dangerous patterns plus this daemon's secret-file-read rule, on a normalised command.
fn detect_normalized(normalized: &str) -> Option<Danger> {
    detect_prepared(&Prepared::new(normalized))
}

/// [`detect_normalized`] on a prepared command.
pub(super) fn detect_prepared(prepared: &Prepared<'_>) -> Option<Danger> {
    let Some(rules) = DANGEROUS.as_ref() else {
        return Some(Danger::named(PATTERNS_UNAVAILABLE_KEY));
    };
    if let Some(description) = prepared.first_match(rules) {
        return Some(Danger::named(description));
    }
    if let Some(description) = prepared.first_flag {
        return Some(Danger::named(description));
    }
    secret_file_read(&prepared.words)
}

#[cfg(test)] // the daemon judges through CommandPolicy, with its own homes
/// Whether `command` needs the user's approval before the `terminal` tool runs it.
///
/// Covers every `DANGEROUS_PATTERNS` rule of Hermes (recursive/root deletes, `chmod 777`,
/// `mkfs`, `dd`, SQL drops, `curl … | sh`, decode-and-execute pipes, writes to `/etc`,
/// shell rc files, `~/.ssh`, credential files, project `.env`/`config.yaml`, destructive
/// git, gateway/docker lifecycle, `sudo -S`/`-s`, …), the structural checks (`python -c`,
/// interpreter heredocs, `bash -c`, `rg --pre`, `man -P`, …), the parser limits, and — an
/// addition over Hermes — reading secret files (`cat .env`, `head ~/.netrc`, `cat id_rsa`).
/// Pure string work; run [`detect_hardline`] first, as Hermes does.
pub fn detect_dangerous(command: &str) -> Option<Danger> {
    if parser_limit_exceeded(command) {
        return Some(Danger::named(PARSER_LIMIT_KEY));
    }
    detect_normalized(&normalize(command))
}

#[cfg(test)] // the daemon judges through CommandPolicy, with its own homes
/// [`detect_dangerous`] plus one filesystem-dependent rule (not in Hermes): a `>` / `>|` / `&>`
/// redirection that would truncate an *existing regular file*. Relative targets resolve
/// against `cwd`, `~` against `$HOME`. This calls `stat`, so from async code run it on a
/// blocking thread.
pub fn detect_dangerous_in(command: &str, cwd: &Path) -> Option<Danger> {
    if parser_limit_exceeded(command) {
        return Some(Danger::named(PARSER_LIMIT_KEY));
    }
    let normalized = normalize(command);
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    detect_normalized(&normalized)
        .or_else(|| overwritten_existing_file(&normalized, cwd, home.as_deref()))
}

#[cfg(test)] // the daemon judges through CommandPolicy, with its own homes
/// Hermes' unconditional blocklist: commands refused even in "yolo" / approvals-off mode
/// (`rm -rf /` and system/home roots, `mkfs`, `dd`/redirect to raw disks, fork bomb,
/// `kill -1`, shutdown/reboot/halt/init 0). Also refuses oversized or malformed input.
pub fn detect_hardline(command: &str) -> Option<Danger> {
    if parser_limit_exceeded(command) {
        return Some(Danger::named(PARSER_LIMIT_KEY));
    }
    hardline_normalized(&normalize(command))
}

/// [`detect_hardline`] on a normalised command.
fn hardline_normalized(normalized: &str) -> Option<Danger> {
    hardline_prepared(&Prepared::new(normalized))
}

/// [`detect_hardline`] on a prepared command.
pub(super) fn hardline_prepared(prepared: &Prepared<'_>) -> Option<Danger> {
    if prepared.malformed {
        return Some(Danger::named(MALFORMED_EXEC));
    }
    let Some(rules) = HARDLINE.as_ref() else {
        return Some(Danger::named(PATTERNS_UNAVAILABLE_KEY));
    };
    prepared.first_match(rules).map(Danger::named)
}

#[cfg(test)] // the daemon judges through CommandPolicy, with its own homes
/// `sudo -S` at a command start: the model piping a guessed password to sudo. Hermes blocks
/// this unconditionally when no sudo password is configured; the caller checks that.
pub fn detect_sudo_stdin_guess(command: &str) -> Option<Danger> {
    sudo_stdin_normalized(&normalize(command))
}

/// [`detect_sudo_stdin_guess`] on a normalised command.
fn sudo_stdin_normalized(normalized: &str) -> Option<Danger> {
    let normalized = self::shell::lowercase(normalized);
    match SUDO_STDIN_RE.as_ref() {
        Some(re) if re.is_match(&normalized) => Some(Danger::named(SUDO_STDIN_GUESS)),
        Some(_) => None,
        None => Some(Danger::named(PATTERNS_UNAVAILABLE_KEY)),
    }
}
