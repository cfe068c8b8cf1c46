//! File-name search for `search_files` (`target="files"`): glob over an
//! ignore-aware walk, newest modification time first, like `rg --files --sortr=modified`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use crate::policy::paths::PathPolicy;

use super::search::{SearchOutcome, SearchRequest, build_walker, display_path};

/// Turns the model's pattern into the glob Hermes hands to `rg --files -g`:
/// only the last path segment is kept, and a bare name matches as a suffix.
fn name_glob(pattern: &str) -> String {
    let name = if pattern.starts_with("**/") || pattern.contains('/') {
        pattern.rsplit('/').next().unwrap_or(pattern)
    } else {
        pattern
    };
    if name.starts_with('*') {
        name.to_owned()
    } else {
        format!("*{name}")
    }
}

/// Heap key ordered so the smallest entry is the oldest (ties: last by path).
type Ranked = Reverse<(SystemTime, Reverse<PathBuf>)>;

/// Lists files below `root` whose names match `req.pattern`, newest first.
pub(crate) fn run(
    req: &SearchRequest,
    root: &Path,
    shown_root: &Path,
    glob_root: &Path,
    paths: &PathPolicy,
    cancel: &AtomicBool,
) -> SearchOutcome {
    let glob = name_glob(&req.pattern);
    let walker = match build_walker(root, glob_root, Some(&glob), false, paths) {
        Ok(walker) => walker,
        Err(message) => return SearchOutcome::failed(message),
    };
    let (offset, limit) = req.page();
    let keep = offset.saturating_add(limit);
    let mut newest: BinaryHeap<Ranked> = BinaryHeap::new();
    let mut outcome = SearchOutcome::default();
    let mut total = 0usize;
    for entry in walker {
        if cancel.load(Ordering::Relaxed) {
            outcome.limit_reason = Some("cancelled");
            break;
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        total += 1;
        let modified = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        newest.push(Reverse((modified, Reverse(entry.into_path()))));
        if newest.len() > keep {
            newest.pop();
        }
    }
    // Ascending order of `Ranked` is newest first, ties by path.
    outcome.files = newest
        .into_sorted_vec()
        .into_iter()
        .skip(offset)
        .map(|Reverse((_, Reverse(path)))| display_path(&path, root, shown_root))
        .collect();
    outcome.total_count = total;
    outcome.truncated = total > keep || outcome.limit_reason.is_some();
    outcome
}
