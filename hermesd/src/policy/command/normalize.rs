//! Normalisation of a shell command before dangerous-pattern matching, and the parser limits.
//!
//! Mirrors Hermes' `_normalize_command_for_detection`: strip ANSI/ECMA-48 escapes and NUL
//! bytes, NFKC-fold (fullwidth letters etc.), join backslash-newline continuations, fold the
//! absolute Hermes home and user home into `~/.hermes/` and `~/`, drop backslash escapes and
//! empty `''`/`""` literals, and expand `$IFS` / `${IFS…}` to a space. One step more than
//! Hermes, before the folds: bash's `$'…'` and `$"…"` quoting is decoded
//! ([`decode_quoting`]: `$'\x72\x6d'` → `rm`), so every rule sees the word bash runs.

use std::borrow::Cow;
#[cfg(test)]
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::{Captures, Regex};
use unicode_normalization::UnicodeNormalization;

use super::super::ansi::strip_ansi;
use super::lex::decode_quoting;

const MAX_COMMAND_CHARS: usize = 128_000;
const MAX_SEPARATOR_FREE_CHARS: usize = 4_096;
const MAX_SEGMENTS: usize = 25_000;

/// Whether a command is too large to inspect (fail closed), like Python's parser limits:
/// over 128 000 characters, over 4 096 without any `;&|` or newline, or 25 000 separators.
pub(super) fn parser_limit_exceeded(command: &str) -> bool {
    if command.len() > MAX_SEPARATOR_FREE_CHARS {
        let chars = command.chars().count();
        if chars > MAX_COMMAND_CHARS {
            return true;
        }
        if chars > MAX_SEPARATOR_FREE_CHARS && !command.contains([';', '&', '|', '\n']) {
            return true;
        }
    }
    command
        .bytes()
        .filter(|b| matches!(b, b';' | b'&' | b'|' | b'\n'))
        .count()
        >= MAX_SEGMENTS
}

static LINE_CONTINUATION: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\\\r?\n").ok());
static BACKSLASH_ESCAPE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\\([^\n])").ok());
static EMPTY_QUOTES: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r#"''|"""#).ok());
static IFS_EXPANSION: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\$\{IFS\b[^}]*\}|\$IFS\b").ok());

#[cfg(test)]
pub(super) fn all_regexes_compile() -> bool {
    [
        &LINE_CONTINUATION,
        &BACKSLASH_ESCAPE,
        &EMPTY_QUOTES,
        &IFS_EXPANSION,
    ]
    .iter()
    .all(|re| re.is_some())
}

fn replace<'a>(re: &LazyLock<Option<Regex>>, text: Cow<'a, str>, with: &str) -> Cow<'a, str> {
    match re.as_ref() {
        Some(re) if re.is_match(&text) => Cow::Owned(re.replace_all(&text, with).into_owned()),
        _ => text,
    }
}

/// Absolute home prefixes folded into `~/.hermes` and `~` before matching.
pub(super) struct HomeFolds {
    rules: Vec<Fold>,
}

/// One home's fold. Its regex is compiled on the first command that holds the home's longest
/// component (every match holds it), so building a policy — at start and on every reload —
/// compiles nothing.
struct Fold {
    home: String,
    longest: String,
    replacement: &'static str,
    /// `None` inside: a home with fewer than two components, which is never folded.
    regex: std::sync::OnceLock<Option<Regex>>,
}

impl HomeFolds {
    /// Build folds for the given Hermes-home and user-home spellings (longest first in each).
    pub(super) fn new(hermes_homes: &[String], user_homes: &[String]) -> Self {
        let mut rules = Vec::new();
        for (homes, replacement) in [(hermes_homes, "~/.hermes"), (user_homes, "~")] {
            let mut sorted: Vec<&String> = homes.iter().filter(|h| !h.is_empty()).collect();
            sorted.sort_by_key(|h| std::cmp::Reverse(h.chars().count()));
            sorted.dedup();
            rules.extend(sorted.into_iter().map(|home| {
                Fold {
                    home: home.clone(),
                    longest: home
                        .split(['/', '\\'])
                        .max_by_key(|c| c.len())
                        .unwrap_or_default()
                        .to_string(),
                    replacement,
                    regex: std::sync::OnceLock::new(),
                }
            }));
        }
        Self { rules }
    }

    /// Folds from the process environment: `HERMES_HOME` (default `~/.hermes`) and `HOME`,
    /// each also in its symlink-resolved form (for the tests of Hermes' free functions; the
    /// daemon's policy folds its own homes).
    #[cfg(test)]
    fn from_env() -> Self {
        let home = std::env::var("HOME").unwrap_or_default();
        let hermes = std::env::var("HERMES_HOME")
            .ok()
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .map(|h| expand_tilde(&h, &home))
            .unwrap_or_else(|| Path::new(&home).join(".hermes"));
        let with_resolved = |path: PathBuf| {
            let resolved = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            [path, resolved].map(|p| p.to_string_lossy().into_owned())
        };
        let user: Vec<String> = if home.is_empty() {
            Vec::new()
        } else {
            let [plain, resolved] = with_resolved(PathBuf::from(&home));
            vec![plain, resolved, home.clone()]
        };
        Self::new(&with_resolved(hermes), &user)
    }

    fn apply<'a>(&self, mut command: Cow<'a, str>) -> Cow<'a, str> {
        for fold in &self.rules {
            if !command.contains(fold.longest.as_str()) {
                continue;
            }
            let Some(re) = fold.regex.get_or_init(|| home_prefix_regex(&fold.home)) else {
                continue;
            };
            if re.is_match(&command) {
                let replacement = fold.replacement;
                let folded = re.replace_all(&command, |caps: &Captures<'_>| {
                    let tail = caps.name("tail").map_or("", |m| m.as_str());
                    format!("{replacement}{}", tail.replace('\\', "/"))
                });
                command = Cow::Owned(folded.into_owned());
            }
        }
        command
    }
}

#[cfg(test)]
fn expand_tilde(path: &str, home: &str) -> PathBuf {
    match path.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(format!("{home}{rest}"))
        }
        _ => PathBuf::from(path),
    }
}

/// Regex matching `path` as an absolute prefix with either separator, capturing the rest of
/// the path token as `tail`; `None` for homes with fewer than two components (`/`, `C:\`).
fn home_prefix_regex(path: &str) -> Option<Regex> {
    let components: Vec<&str> = path.split(['/', '\\']).filter(|c| !c.is_empty()).collect();
    if components.len() < 2 {
        return None;
    }
    let body: Vec<String> = components.iter().map(|c| regex::escape(c)).collect();
    let pattern = format!(
        r#"[/\\]*{}(?P<tail>(?:[/\\][^/\\\s'"`;|&<>()]*)+)"#,
        body.join(r"[/\\]+")
    );
    Regex::new(&pattern).ok()
}

/// Home folds of this process, resolved once on first use.
#[cfg(test)]
static PROCESS_HOME_FOLDS: LazyLock<HomeFolds> = LazyLock::new(HomeFolds::from_env);

/// Normalise `command` with the process's home folds.
#[cfg(test)]
pub(super) fn normalize(command: &str) -> String {
    normalize_with(command, &PROCESS_HOME_FOLDS)
}

/// Normalise `command` as Hermes does before matching (see the module docs for the steps).
pub(super) fn normalize_with(command: &str, folds: &HomeFolds) -> String {
    let mut text = strip_ansi(command);
    if text.contains('\0') {
        text = Cow::Owned(text.replace('\0', ""));
    }
    if !text.is_ascii() {
        text = Cow::Owned(text.nfkc().collect());
    }
    if text.contains('\\') {
        text = replace(&LINE_CONTINUATION, text, "");
    }
    if let Cow::Owned(decoded) = decode_quoting(&text) {
        text = Cow::Owned(decoded);
    }
    text = folds.apply(text);
    if text.contains('\\') {
        text = replace(&BACKSLASH_ESCAPE, text, "${1}");
    }
    if text.contains("''") || text.contains("\"\"") {
        text = replace(&EMPTY_QUOTES, text, "");
    }
    if text.contains("$IFS") || text.contains("${IFS") {
        text = replace(&IFS_EXPANSION, text, " ");
    }
    text.into_owned()
}
