//! Commands that reach the files the path policy protects: every word of every segment that
//! names a path (also after `=` as in `of=…`, after a curl-style `@`, before the `:` of a
//! `src:dst` mount, and as a redirection target) is resolved as the file tools resolve it — homes, the working directory (followed
//! through `cd`), symlinks — and judged by [`PathPolicy`]. The daemon's database and records may
//! not be touched at all (an "always" approval the agent wrote itself would be a forged one);
//! settings and credentials may be written only with the user's consent, and so may a Hermes
//! home as a whole (`tar -C`, `cp x ~/.hermes/`); a command that prints a file the read tools
//! deny (`cat` of a symlink to `.env`, of `auth.json`) asks, and so does a write to a file the
//! file tools write only with consent (shell start-up files, prompt sources). Globs are expanded
//! against the filesystem, and in a Hermes home also matched against its protected names.

use std::path::{Path, PathBuf};

use super::lex::shlex_split;
use super::shell::{basename, top_level_segments};
use crate::policy::paths::{PathPolicy, Protected, WriteVerdict};

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

/// Commands that print (or encode) the contents of the files they name: naming a file the read
/// tools deny is a secret read.
const PRINTERS: &[&str] = &[
    "cat", "tac", "less", "more", "head", "tail", "grep", "rg", "egrep", "fgrep", "zgrep", "zcat",
    "diff", "bat", "batcat", "yq", "jq", "nl", "strings", "od", "xxd", "hexdump", "base64", "awk",
    "view", "sed", "sort", "cut", "uniq", "paste", "column", "fold", "rev", "tr",
];

/// Commands that may write every path operand they are given.
const WRITERS: &[&str] = &["tee", "truncate", "touch", "rm", "unlink", "shred"];

/// Commands whose last operand is what they write: a file, or a directory they write into.
const COPIERS: &[&str] = &["cp", "mv", "install", "ln", "rsync", "scp"];

/// At most this many directory entries are read to expand one glob word, and at most this
/// many directories are expanded for its directory part.
const GLOB_ENTRIES: usize = 4096;
const GLOB_DIRS: usize = 64;

/// What a command does to a protected path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// It names the daemon's own state: refused, with the path.
    DaemonState(PathBuf),
    /// It may write settings or credentials: needs approval, with the path.
    SettingsWrite(PathBuf),
    /// It names a Hermes home (or its `profiles`) as a whole with a command that may write,
    /// copy or archive it (`tar -C`, `cp -r … ~/.hermes/`, `mv`): needs approval.
    Home(PathBuf),
    /// It prints a file the read tools deny, or reads a Hermes home as a whole: needs approval.
    SecretRead(PathBuf),
    /// It writes a file the file tools write only with consent: needs approval, under the file
    /// tools' key.
    ConsentWrite {
        path: PathBuf,
        key: &'static str,
        reason: &'static str,
    },
}

/// How one segment's command treats the paths it names.
struct Verb<'a> {
    name: &'a str,
    /// Only reads what it names (`cat`, `grep`, `ls`…): settings it names are not written.
    reader: bool,
    /// Prints what it reads.
    prints: bool,
    /// Writes every path operand (`tee`, `touch`, `sed -i`…).
    writes_all: bool,
}

impl<'a> Verb<'a> {
    fn of(words: &'a [String]) -> Self {
        let name = words
            .iter()
            .map(String::as_str)
            .find(|w| !w.contains('=') && !["sudo", "env", "command", "exec", "nohup"].contains(w))
            .map(basename)
            .unwrap_or_default();
        let in_place = edits_in_place(name, words);
        Self {
            name,
            reader: READERS.contains(&name) && !in_place,
            prints: PRINTERS.contains(&name) && !in_place,
            writes_all: WRITERS.contains(&name) || in_place,
        }
    }
}

/// Whether `verb` edits its files in place: `sed -i`, `perl -pi`, `ruby -i`, `yq -i`.
fn edits_in_place(verb: &str, words: &[String]) -> bool {
    let before_i = match verb {
        "sed" => "nEersuz",
        "perl" | "ruby" => "pnlaew",
        "yq" => "PCMenr",
        _ => return false,
    };
    words.iter().any(|w| {
        if let Some(long) = w.strip_prefix("--") {
            return long == "inplace" || long == "in-place" || long.starts_with("in-place=");
        }
        w.strip_prefix('-').is_some_and(|flags| {
            let lead = flags.trim_start_matches(|c| before_i.contains(c));
            lead.starts_with('i')
        })
    })
}

/// The strongest protected path `command` reaches from `cwd`, if any: the daemon's state first,
/// else the first other reach found.
pub fn reach(command: &str, cwd: &Path, paths: &PathPolicy) -> Option<Reach> {
    if command.to_ascii_lowercase().contains("hermesd.db") {
        return Some(Reach::DaemonState(paths.hermes_home().join("hermesd.db")));
    }
    let mut found = None;
    let mut cwd = paths.resolve(".", cwd);
    for (_, segment) in top_level_segments(command) {
        let words = shlex_split(segment, false)
            .unwrap_or_else(|| segment.split_whitespace().map(str::to_string).collect());
        let verb = Verb::of(&words);
        let into = copy_destination(&verb, &words, &cwd, paths);
        let last = last_operand(&words);
        let mut after_redirect = false;
        for (index, word) in words.iter().enumerate() {
            let (target, redirected) = redirect_target(word, after_redirect);
            after_redirect = is_redirect_operator(word);
            let Some(target) = target else { continue };
            let written = redirected
                || verb.writes_all
                || (COPIERS.contains(&verb.name) && Some(index) == last)
                || (verb.name == "dd" && word.starts_with("of="));
            let mut reached = candidates(target, &cwd, paths);
            if let Some((source, _)) = target.split_once(':')
                && source.starts_with(['/', '~', '$', '.'])
            {
                // A `src:dst` mount (`docker run -v ~/.hermes:/h`).
                reached.extend(candidates(source, &cwd, paths));
            }
            if let Some(dir) = into.as_ref().filter(|_| Some(index) != last) {
                reached.extend(
                    Path::new(target)
                        .file_name()
                        .map(|name| crate::policy::paths::real(&dir.join(name))),
                );
            }
            for path in reached {
                let found_here = judge_path(&path, &verb, redirected, written, paths);
                if let Some(Reach::DaemonState(_)) = found_here {
                    return found_here;
                }
                if found.is_none() {
                    found = found_here;
                }
            }
        }
        if let (true, Some(dir)) = (["cd", "pushd"].contains(&verb.name), words.get(1)) {
            cwd = paths.resolve(dir, &cwd);
        }
    }
    found
}

/// What naming `path` (real) does, for a command `verb`.
fn judge_path(
    path: &Path,
    verb: &Verb<'_>,
    redirected: bool,
    written: bool,
    paths: &PathPolicy,
) -> Option<Reach> {
    let writes = redirected || !verb.reader;
    match paths.protected(path) {
        Some(Protected::DaemonState) => return Some(Reach::DaemonState(path.to_path_buf())),
        Some(Protected::Settings) if writes => {
            return Some(Reach::SettingsWrite(path.to_path_buf()));
        }
        _ => {}
    }
    if holds_hermes_homes(path, paths) {
        if writes {
            return Some(Reach::Home(path.to_path_buf()));
        }
        if verb.prints {
            return Some(Reach::SecretRead(path.to_path_buf()));
        }
    }
    if verb.prints && !redirected && paths.check_read(path).is_err() {
        return Some(Reach::SecretRead(path.to_path_buf()));
    }
    if written && let WriteVerdict::NeedsApproval { key, reason } = paths.check_write(path) {
        return Some(Reach::ConsentWrite {
            path: path.to_path_buf(),
            key,
            reason,
        });
    }
    None
}

/// Whether `dir` (real) is a Hermes home or the `profiles` directory of one: a command that
/// copies, extracts or archives it reaches every protected file in it.
fn holds_hermes_homes(dir: &Path, paths: &PathPolicy) -> bool {
    paths.is_hermes_home(dir)
        || (dir.file_name().is_some_and(|n| n == "profiles")
            && dir.parent().is_some_and(|p| paths.is_hermes_home(p)))
}

/// The index of the last operand of a command (not an option, not a redirection).
fn last_operand(words: &[String]) -> Option<usize> {
    let mut last = None;
    let mut after_redirect = false;
    for (index, word) in words.iter().enumerate().skip(1) {
        let redirect = is_redirect_operator(word);
        let attached = redirect_target(word, false).1;
        if !std::mem::replace(&mut after_redirect, redirect)
            && !redirect
            && !attached
            && !word.starts_with('-')
        {
            last = Some(index);
        }
    }
    last
}

/// The directory a `cp`/`mv`/`install`/`ln`/`rsync` writes its sources into, if its last
/// operand is one (an existing directory, or written with a trailing `/`).
fn copy_destination(
    verb: &Verb<'_>,
    words: &[String],
    cwd: &Path,
    paths: &PathPolicy,
) -> Option<PathBuf> {
    if !COPIERS.contains(&verb.name) {
        return None;
    }
    let word = words.get(last_operand(words)?)?;
    if word.contains(['*', '?', '[']) {
        return None;
    }
    let dir = paths.resolve(word, cwd);
    (word.ends_with('/') || dir.is_dir()).then_some(dir)
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
    let value = value
        .strip_prefix('@')
        .filter(|v| !v.is_empty())
        .unwrap_or(value);
    (
        Some(value).filter(|v| !v.is_empty() && !v.starts_with('-')),
        false,
    )
}

fn has_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// The real paths `word` may name from `cwd` (real): itself, or for a glob every entry of the
/// filesystem it matches (as the shell expands it: a leading `.` only by a pattern that starts
/// with one) and, in a Hermes home, every protected name it matches. A plain name costs one
/// `lstat`.
fn candidates(word: &str, cwd: &Path, paths: &PathPolicy) -> Vec<PathBuf> {
    if !has_glob(word) {
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
    let Some(matcher) = glob_matcher(pattern) else {
        return Vec::new();
    };
    let dirs = if has_glob(dir) {
        expand_dirs(dir, cwd, paths)
    } else {
        vec![paths.resolve(dir, cwd)]
    };
    let mut out = Vec::new();
    for dir in dirs {
        if paths.is_hermes_home(&dir) {
            out.extend(
                PathPolicy::home_file_names()
                    .filter(|name| matcher.is_match(name))
                    .map(|name| dir.join(name)),
            );
        }
        out.extend(
            entries_matching(&dir, &matcher, pattern.starts_with('.'))
                .map(|path| crate::policy::paths::real(&path)),
        );
    }
    out
}

fn glob_matcher(pattern: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// The entries of `dir` whose names match, skipping dot files unless `dots`.
fn entries_matching<'m>(
    dir: &Path,
    matcher: &'m globset::GlobMatcher,
    dots: bool,
) -> impl Iterator<Item = PathBuf> + 'm {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .take(GLOB_ENTRIES)
        .flatten()
        .map(|entry| entry.path())
        .filter(move |path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|name| (dots || !name.starts_with('.')) && matcher.is_match(name))
        })
}

/// The directories a directory part with globs (`~/.herm*`, `*/work`) expands to, real.
fn expand_dirs(dir: &str, cwd: &Path, paths: &PathPolicy) -> Vec<PathBuf> {
    let parts: Vec<&str> = dir.split('/').collect();
    let fixed = parts.iter().take_while(|p| !has_glob(p)).count();
    let base = match parts[..fixed].join("/") {
        prefix if prefix.is_empty() && dir.starts_with('/') => PathBuf::from("/"),
        prefix if prefix.is_empty() => paths.resolve(".", cwd),
        prefix => paths.resolve(&prefix, cwd),
    };
    let mut dirs = vec![base];
    for part in parts.iter().skip(fixed).filter(|p| !p.is_empty()) {
        let next: Vec<PathBuf> = if has_glob(part) {
            let Some(matcher) = glob_matcher(part) else {
                return Vec::new();
            };
            dirs.iter()
                .flat_map(|d| {
                    entries_matching(d, &matcher, part.starts_with('.')).collect::<Vec<_>>()
                })
                .map(|path| crate::policy::paths::real(&path))
                .filter(|path| path.is_dir())
                .take(GLOB_DIRS)
                .collect()
        } else {
            dirs.iter().map(|d| paths.resolve(part, d)).collect()
        };
        dirs = next;
    }
    dirs
}
