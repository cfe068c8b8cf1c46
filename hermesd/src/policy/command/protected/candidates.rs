//! The real paths a word may name: itself (one `lstat`), or for a glob every entry of the
//! filesystem it matches — as the shell expands it, a leading `.` only by a pattern that starts
//! with one — and, in a Hermes home, every protected name it matches. Text made at run time
//! ([`UNKNOWN`]) is matched like a `*` that also matches dot files; a word whose run-time part
//! may hold a `/` is also matched by its last component against a Hermes home's names.

use std::path::{Path, PathBuf};

use super::words::{UNKNOWN, all_unknown};
use crate::policy::paths::{PathPolicy, real};

/// At most this many directory entries are read to expand one glob word, and at most this
/// many directories are expanded for its directory part.
const GLOB_ENTRIES: usize = 4096;
const GLOB_DIRS: usize = 64;

/// What a word names.
pub(super) struct Candidates {
    pub(super) paths: Vec<PathBuf>,
    /// Found by matching a pattern (a glob, run-time text), not named literally.
    pub(super) matched: bool,
}

fn has_glob(text: &str) -> bool {
    text.contains(['*', '?', '[', UNKNOWN])
}

/// The real paths `word` may name from `cwd` (real). A word that is only run-time text in its
/// last component (`"$f"`, `/tmp/$x`) names something only for a command that prints what it
/// names (`prints`): it is then every entry of its directory.
pub(super) fn candidates(word: &str, cwd: &Path, paths: &PathPolicy, prints: bool) -> Candidates {
    if !has_glob(word) {
        let path = if word.contains('/') || word.starts_with(['~', '$']) || word == ".." {
            paths.resolve_in(word, cwd)
        } else {
            let path = cwd.join(word);
            let link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
            if link { real(&path) } else { path }
        };
        return Candidates {
            paths: vec![path],
            matched: false,
        };
    }
    let (dir, pattern) = match word.rsplit_once('/') {
        Some((dir, pattern)) => (if dir.is_empty() { "/" } else { dir }, pattern),
        None => (".", word),
    };
    let mut out = Vec::new();
    if all_unknown(pattern) && !prints {
        return Candidates {
            paths: out,
            matched: true,
        };
    }
    if let Some(matcher) = glob_matcher(pattern) {
        if word.contains(UNKNOWN) && names_a_file(pattern) {
            // The run-time text may hold a `/`: the word may end in any Hermes home.
            out.extend(
                PathPolicy::home_file_names()
                    .filter(|name| matcher.is_match(name))
                    .map(|name| paths.hermes_home().join(name)),
            );
        }
        let dirs = if has_glob(dir) {
            expand_dirs(dir, cwd, paths)
        } else {
            vec![paths.resolve_in(dir, cwd)]
        };
        // A literal name under a directory of a Hermes home picked at run time may be a file
        // the command is about to create (`> ~/.hermes/$d/run.sh`): it counts too.
        let literal = !has_glob(pattern) && !pattern.contains(UNKNOWN) && has_glob(dir);
        for dir in dirs {
            let in_a_home = paths.is_hermes_home(&dir)
                || dir
                    .parent()
                    .is_some_and(|parent| paths.is_hermes_home(parent));
            if literal && in_a_home {
                out.push(dir.join(pattern));
            }
            if paths.is_hermes_home(&dir) {
                out.extend(
                    PathPolicy::home_file_names()
                        .filter(|name| matcher.is_match(name))
                        .map(|name| dir.join(name)),
                );
            }
            out.extend(entries_matching(&dir, &matcher, dots(pattern)).map(|(path, _)| path));
        }
    }
    Candidates {
        paths: out,
        matched: true,
    }
}

/// Whether a last component with run-time text still names a file by itself: it has known
/// text, and not only an extension after run-time text (`$name.json` matches too much).
fn names_a_file(pattern: &str) -> bool {
    let known = pattern.trim_start_matches(UNKNOWN);
    let extension_only =
        known.len() < pattern.len() && known.starts_with('.') && !known.contains(UNKNOWN);
    !known.is_empty() && !extension_only
}

/// Whether a pattern matches dot files: it starts with `.`, or holds run-time text.
fn dots(pattern: &str) -> bool {
    pattern.starts_with('.') || pattern.contains(UNKNOWN)
}

fn glob_matcher(pattern: &str) -> Option<globset::GlobMatcher> {
    let pattern = pattern.replace(UNKNOWN, "*");
    globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// The entries of `dir` (real) whose names match, skipping dot files unless `dots`: each as a
/// real path, and whether it is a directory. Only a symlink costs a system call.
fn entries_matching<'m>(
    dir: &Path,
    matcher: &'m globset::GlobMatcher,
    dots: bool,
) -> impl Iterator<Item = (PathBuf, bool)> + 'm {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .take(GLOB_ENTRIES)
        .flatten()
        .filter(move |entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| (dots || !name.starts_with('.')) && matcher.is_match(name))
        })
        .map(|entry| {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if !kind.is_symlink() => (path, kind.is_dir()),
                _ => {
                    let path = real(&path);
                    let dir = path.is_dir();
                    (path, dir)
                }
            }
        })
}

/// The directories a directory part with globs (`~/.herm*`, `*/work`) expands to, real.
fn expand_dirs(dir: &str, cwd: &Path, paths: &PathPolicy) -> Vec<PathBuf> {
    let parts: Vec<&str> = dir.split('/').collect();
    let fixed = parts.iter().take_while(|p| !has_glob(p)).count();
    let base = match parts[..fixed].join("/") {
        prefix if prefix.is_empty() && dir.starts_with('/') => PathBuf::from("/"),
        prefix if prefix.is_empty() => cwd.to_path_buf(),
        prefix => paths.resolve_in(&prefix, cwd),
    };
    let mut dirs = vec![base];
    for part in parts.iter().skip(fixed).filter(|p| !p.is_empty()) {
        let next: Vec<PathBuf> = if has_glob(part) {
            let Some(matcher) = glob_matcher(part) else {
                return Vec::new();
            };
            dirs.iter()
                .flat_map(|d| entries_matching(d, &matcher, dots(part)).collect::<Vec<_>>())
                .filter_map(|(path, is_dir)| is_dir.then_some(path))
                .take(GLOB_DIRS)
                .collect()
        } else {
            dirs.iter().map(|d| paths.resolve_in(part, d)).collect()
        };
        dirs = next;
    }
    dirs
}
