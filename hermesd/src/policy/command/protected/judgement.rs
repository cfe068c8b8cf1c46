//! What naming one real path does, for one command: the daemon's records (refused), settings and
//! credentials written, a Hermes home or a directory above one taken whole, a secret printed or
//! copied, a consent file written.

use std::path::Path;

use super::Reach;
use super::verbs::Verb;
use crate::policy::paths::{PathPolicy, Protected, WriteVerdict};

/// How a word names its path.
pub(super) struct Role {
    /// A redirection target.
    pub(super) redirected: bool,
    /// The command may write it.
    pub(super) written: bool,
    /// A copier's or an archiver's source.
    pub(super) copied: bool,
    /// Found by a pattern (a glob, run-time text), not named literally.
    pub(super) matched: bool,
}

/// What naming `path` (real) does, for a command `verb`.
pub(super) fn judge_path(
    path: &Path,
    verb: &Verb<'_>,
    role: &Role,
    paths: &PathPolicy,
) -> Option<Reach> {
    let writes = role.redirected || !verb.reader;
    match paths.protected(path) {
        // A listing (`ls ~/.hermes/*`, `du -sh h/*`) shows the records' names, not their text.
        Some(Protected::DaemonState) if role.matched && verb.lists && !role.redirected => {
            return None;
        }
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
    if verb.recursive
        && !role.redirected
        && (role.copied || !verb.copies)
        && paths
            .homes_below(path)
            .any(|rest| verb.hidden || !hidden(rest))
    {
        return Some(Reach::Above(path.to_path_buf()));
    }
    if (verb.prints || role.copied) && !role.redirected && paths.check_read(path).is_err() {
        return Some(if verb.prints {
            Reach::SecretRead(path.to_path_buf())
        } else {
            Reach::SecretCopy(path.to_path_buf())
        });
    }
    if role.written
        && let WriteVerdict::NeedsApproval { key, reason } = paths.check_write(path)
    {
        return Some(Reach::ConsentWrite {
            path: path.to_path_buf(),
            key,
            reason,
        });
    }
    None
}

/// Whether a path below a searched directory passes through a hidden name (`.hermes`).
fn hidden(rest: &Path) -> bool {
    rest.components()
        .any(|c| c.as_os_str().to_str().is_some_and(|n| n.starts_with('.')))
}

/// Whether `dir` (real) is a Hermes home or the `profiles` directory of one: a command that
/// copies, extracts or archives it reaches every protected file in it.
pub(super) fn holds_hermes_homes(dir: &Path, paths: &PathPolicy) -> bool {
    paths.is_hermes_home(dir)
        || (dir.file_name().is_some_and(|n| n == "profiles")
            && dir.parent().is_some_and(|p| paths.is_hermes_home(p)))
}
