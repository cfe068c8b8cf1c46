//! Commands that reach the files the path policy protects: every word of every segment that
//! names a path (also after `=` as in `of=…`, and as a redirection target) is resolved as the
//! file tools resolve it — homes, the working directory (followed through `cd`), symlinks — and
//! judged by [`PathPolicy::protected`]. The daemon's database and records may not be touched at
//! all (an "always" approval the agent wrote itself would be a forged one); settings and
//! credentials may be written only with the user's consent. Globs in a Hermes home are matched
//! against its protected names.

use std::path::{Path, PathBuf};

use super::lex::shlex_split;
use super::shell::{basename, top_level_segments};
use crate::policy::paths::{PathPolicy, Protected};

/// The pattern key (and reason) of a command that writes settings or credentials.
pub const SETTINGS_WRITE_KEY: &str = "write to Hermes settings or credentials";

/// Commands that only read the files they name.
const READERS: &[&str] = &[
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "grep",
    "rg",
    "egrep",
    "fgrep",
    "wc",
    "diff",
    "cmp",
    "stat",
    "ls",
    "file",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "bat",
    "batcat",
    "yq",
    "jq",
    "realpath",
    "readlink",
    "test",
    "[",
    "du",
    "cd",
    "pushd",
    "echo",
    "printf",
];

/// What a command does to a protected path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// It names the daemon's own state: refused, with the path.
    DaemonState(PathBuf),
    /// It may write settings or credentials: needs approval, with the path.
    SettingsWrite(PathBuf),
}

/// The first protected path `command` reaches from `cwd`, if any.
pub fn reach(command: &str, cwd: &Path, paths: &PathPolicy) -> Option<Reach> {
    if command.to_ascii_lowercase().contains("hermesd.db") {
        return Some(Reach::DaemonState(paths.hermes_home().join("hermesd.db")));
    }
    let mut cwd = paths.resolve(".", cwd);
    for (_, segment) in top_level_segments(command) {
        let words = shlex_split(segment, false)
            .unwrap_or_else(|| segment.split_whitespace().map(str::to_string).collect());
        let verb = words
            .iter()
            .map(String::as_str)
            .find(|w| !w.contains('=') && !["sudo", "env", "command", "exec", "nohup"].contains(w))
            .map(basename)
            .unwrap_or_default();
        let mut after_redirect = false;
        for word in &words {
            let (target, redirected) = redirect_target(word, after_redirect);
            after_redirect = is_redirect_operator(word);
            let Some(target) = target else { continue };
            for path in candidates(target, &cwd, paths) {
                match paths.protected(&path) {
                    Some(Protected::DaemonState) => return Some(Reach::DaemonState(path)),
                    Some(Protected::Settings) if redirected || !READERS.contains(&verb) => {
                        return Some(Reach::SettingsWrite(path));
                    }
                    _ => {}
                }
            }
        }
        if let (true, Some(dir)) = (["cd", "pushd"].contains(&verb), words.get(1)) {
            cwd = paths.resolve(dir, &cwd);
        }
    }
    None
}

fn is_redirect_operator(word: &str) -> bool {
    let stripped = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
    matches!(stripped, ">" | ">>" | ">|" | "<>")
}

/// The path-like part of `word` and whether it is a redirection target.
fn redirect_target(word: &str, after_redirect: bool) -> (Option<&str>, bool) {
    if after_redirect {
        return (Some(word), true);
    }
    let stripped = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
    if let Some(rest) = stripped
        .strip_prefix(">>")
        .or_else(|| stripped.strip_prefix('>'))
    {
        let rest = rest.trim_start_matches('|');
        return ((!rest.is_empty()).then_some(rest), true);
    }
    let value = match word.split_once('=') {
        Some((name, value)) if !name.is_empty() && !value.is_empty() => value,
        _ => word,
    };
    (
        Some(value).filter(|v| !v.is_empty() && !v.starts_with('-')),
        false,
    )
}

/// The real paths `word` may name from `cwd` (real): itself, or for a glob in a Hermes home
/// every protected name the glob matches there. A plain name costs one `lstat`.
fn candidates(word: &str, cwd: &Path, paths: &PathPolicy) -> Vec<PathBuf> {
    if !word.contains(['*', '?', '[']) {
        if word.contains('/') || word.starts_with(['~', '$']) || word == ".." {
            return vec![paths.resolve(word, cwd)];
        }
        let path = cwd.join(word);
        let link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        return vec![if link {
            crate::policy::paths::real(&path)
        } else {
            path
        }];
    }
    let (dir, pattern) = match word.rsplit_once('/') {
        Some((dir, pattern)) => (if dir.is_empty() { "/" } else { dir }, pattern),
        None => (".", word),
    };
    if dir.contains(['*', '?', '[']) {
        return Vec::new();
    }
    let dir = paths.resolve(dir, cwd);
    let Ok(glob) = globset::Glob::new(pattern) else {
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    if !paths.is_hermes_home(&dir) {
        return Vec::new();
    }
    PathPolicy::home_file_names()
        .filter(|name| matcher.is_match(name))
        .map(|name| dir.join(name))
        .collect()
}
