//! Commands that reach the files the path policy protects: every word of every segment that
//! names a path (also after `=` as in `of=…`, after a curl-style `@`, before the `:` of a
//! `src:dst` mount, and as a redirection target) is resolved as the file tools resolve it —
//! homes, the working directory (followed through `cd`), symlinks — and judged by
//! [`PathPolicy`]. The daemon's database and records may not be touched at all (an "always"
//! approval the agent wrote itself would be a forged one); settings and credentials may be
//! written only with the user's consent, and so may a Hermes home as a whole (`tar -C`,
//! `cp x ~/.hermes/`); a command that prints or copies a file the read tools deny asks, and so
//! do a write to a file the file tools write only with consent, a recursive copy or search of a
//! directory above a Hermes home, and running a file an earlier part of the command wrote. The
//! commands a segment runs on its behalf (`$(…)`, `find -exec`, `xargs`) are walked as commands.
//!
//! This file holds the entry and what it finds; `walk` walks the segments, `words` splits them,
//! `verbs` (with `flags`) says what each command does, `candidates` expands a word to paths,
//! `judgement` judges each path and `tree` walks the trees a recursive command reads.

mod candidates;
mod flags;
mod judgement;
mod tree;
mod verbs;
mod walk;
mod words;

use std::path::{Path, PathBuf};

use super::{Danger, SECRET_READ_KEY};
use crate::policy::paths::PathPolicy;

#[cfg(test)]
pub(in crate::policy::command) use self::tree::TREE_ENTRIES;
pub(in crate::policy::command) use self::words::UNKNOWN;
#[cfg(test)]
pub(in crate::policy::command) use self::words::split as split_words;

/// The pattern key (and reason) of a command that writes settings or credentials.
pub const SETTINGS_WRITE_KEY: &str = "write to Hermes settings or credentials";
/// The pattern key of a command that runs a file it wrote itself.
pub const RUNS_WRITTEN_KEY: &str = "run a file the same command writes";

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
    /// It copies or archives a file the read tools deny (`cp .env /tmp/x`): needs approval.
    SecretCopy(PathBuf),
    /// It copies, archives or searches a directory above a Hermes home whole (`tar czf x ~`).
    Above(PathBuf),
    /// A recursive search of `dir` prints `file`, which the read tools deny.
    Search { dir: PathBuf, file: PathBuf },
    /// A recursive copy or archive of `dir` copies `file`, which the read tools deny.
    CopyTree { dir: PathBuf, file: PathBuf },
    /// A recursive search, copy or archive of `dir` reads more than the tree walk looks at.
    TooLarge(PathBuf),
    /// It runs a file an earlier part of the same command writes.
    RunsWritten(PathBuf),
    /// A search that reads ignore files (`rg`, `ag`) after an earlier part of the same command
    /// wrote one: what it skips or whitelists (`!.env`) is not seen.
    IgnoreWritten(PathBuf),
    /// It writes a file the file tools write only with consent: needs approval, under the file
    /// tools' key.
    ConsentWrite {
        path: PathBuf,
        key: &'static str,
        reason: &'static str,
    },
}

impl Reach {
    /// The key and the reason of the question a reach other than the daemon's state asks,
    /// naming the path.
    pub fn question(&self) -> (&'static str, String) {
        match self {
            Self::DaemonState(path) => (
                SETTINGS_WRITE_KEY,
                format!("reaches {} (the daemon's records)", path.display()),
            ),
            Self::SettingsWrite(path) => (
                SETTINGS_WRITE_KEY,
                format!("writes {} (Hermes settings or credentials)", path.display()),
            ),
            Self::Home(path) => (
                SETTINGS_WRITE_KEY,
                format!(
                    "may write, copy or archive {} (a Hermes home: settings, credentials and \
                     records)",
                    path.display()
                ),
            ),
            Self::SecretRead(path) => (
                SECRET_READ_KEY,
                format!("prints {} (credentials)", path.display()),
            ),
            Self::SecretCopy(path) => (
                SECRET_READ_KEY,
                format!(
                    "copies {} (credentials) where the read tools do not guard it",
                    path.display()
                ),
            ),
            Self::Above(path) => (
                SECRET_READ_KEY,
                format!(
                    "copies, archives or searches {} whole, which holds a Hermes home \
                     (settings, credentials and records)",
                    path.display()
                ),
            ),
            Self::Search { dir, file } => (
                SECRET_READ_KEY,
                format!(
                    "searches {} recursively, which holds {} (credentials)",
                    dir.display(),
                    file.display()
                ),
            ),
            Self::CopyTree { dir, file } => (
                SECRET_READ_KEY,
                format!(
                    "copies or archives {} recursively, which holds {} (credentials)",
                    dir.display(),
                    file.display()
                ),
            ),
            Self::TooLarge(dir) => (
                SECRET_READ_KEY,
                format!(
                    "reads {} recursively, which is too large to check for credential files \
                     (more than {} entries)",
                    dir.display(),
                    tree::TREE_ENTRIES
                ),
            ),
            Self::RunsWritten(path) => (
                RUNS_WRITTEN_KEY,
                format!(
                    "runs {}, which the same command writes first: what it runs is not seen",
                    path.display()
                ),
            ),
            Self::IgnoreWritten(path) => (
                SECRET_READ_KEY,
                format!(
                    "searches after writing {}, an ignore file: what the search reads is not seen",
                    path.display()
                ),
            ),
            Self::ConsentWrite { path, key, reason } => {
                (key, format!("writes {}: {reason}", path.display()))
            }
        }
    }
}

/// What walking a command found: the strongest protected path it reaches (the daemon's state
/// first, else the first other reach found), the first code it runs unseen (an awk `system()`,
/// a `git -c` program, a pipe into a shell: `hidden`), and the commands it runs on its behalf
/// (`$(…)`, `find -exec`, `xargs`), for the pattern rules.
#[derive(Debug, Default)]
pub struct Reached {
    pub reach: Option<Reach>,
    pub hidden: Option<Danger>,
    pub nested: Vec<String>,
}

/// The daemon's database, named anywhere in a command (in any case).
const DATABASE: &[u8] = b"hermesd.db";

/// Walks `command`, run from `cwd`.
pub fn reach(command: &str, cwd: &Path, paths: &PathPolicy) -> Reached {
    let named = command
        .as_bytes()
        .windows(DATABASE.len())
        .any(|w| w.eq_ignore_ascii_case(DATABASE));
    if named {
        return Reached {
            reach: Some(Reach::DaemonState(paths.hermes_home().join("hermesd.db"))),
            ..Reached::default()
        };
    }
    walk::walk(command, paths.resolve(".", cwd), paths)
}
