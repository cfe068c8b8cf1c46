//! Aging spilled tool results (`$HERMES_HOME/cache/tool-results/<session>/`): once at start and
//! then daily, a session's directory goes when its newest file is older than
//! `tool_results.keep_days` (30; 0 keeps them for as long as the session lives), and at once when
//! the session is no longer in the store. Only real directories directly under the spill root are
//! looked at or removed: a symlink there is never followed, and the root itself must not be one.

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, SystemTime},
};

use crate::{agent::TurnRunner, store::Store, tools};

const DAY: Duration = Duration::from_secs(24 * 3600);

/// What one sweep removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Aged {
    /// Directories whose newest file was older than the limit.
    pub old: usize,
    /// Directories of sessions no longer in the store.
    pub orphaned: usize,
}

/// Sweep once now and then daily (reading `tool_results.keep_days` each time, so a reload
/// applies), until the daemon stops.
pub async fn age_tool_results(state: Arc<TurnRunner>) {
    loop {
        let days = state.config().settings.tool_results.keep_days;
        match sweep(&state.home.dir, &state.store, days, SystemTime::now()).await {
            Ok(aged) if aged != Aged::default() => tracing::info!(
                old = aged.old,
                orphaned = aged.orphaned,
                keep_days = days,
                "spilled tool results removed"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "aging spilled tool results failed"),
        }
        tokio::select! {
            () = state.shutdown.cancelled() => return,
            () = tokio::time::sleep(DAY) => {}
        }
    }
}

/// One sweep of `hermes_home`'s spill root as of `now`. The directories are listed before the
/// sessions are read, so a directory made meanwhile for a new session is never taken for an
/// orphan (its session row exists before any of its results is spilled).
pub async fn sweep(
    hermes_home: &Path,
    store: &Store,
    keep_days: u32,
    now: SystemTime,
) -> Result<Aged, String> {
    let root = tools::spill_root(hermes_home);
    let listed = root.clone();
    let candidates = tokio::task::spawn_blocking(move || list(&listed))
        .await
        .map_err(|e| format!("listing {}: the task failed: {e}", root.display()))??;
    if candidates.is_empty() {
        return Ok(Aged::default());
    }
    let known = store
        .read(|conn| {
            let mut statement = conn
                .prepare("SELECT id FROM sessions")
                .map_err(crate::store::StoreError::sql("list session ids"))?;
            let ids = statement
                .query_map([], |row| row.get::<_, String>(0))
                .map_err(crate::store::StoreError::sql("list session ids"))?
                .collect::<Result<Vec<String>, _>>()
                .map_err(crate::store::StoreError::sql("list session ids"))?;
            Ok(ids
                .iter()
                .map(|id| tools::spill_dir_name(id))
                .collect::<HashSet<String>>())
        })
        .await
        .map_err(|e| format!("reading the session ids: {e}"))?;
    // None: no age limit (0), or one reaching back before the clock's range.
    let cutoff = if keep_days == 0 {
        None
    } else {
        now.checked_sub(DAY * keep_days)
    };
    tokio::task::spawn_blocking(move || remove(candidates, &known, cutoff))
        .await
        .map_err(|e| format!("removing spilled results: the task failed: {e}"))
}

/// A directory under the root, with the time of its newest entry.
struct Candidate {
    name: String,
    path: PathBuf,
    newest: SystemTime,
}

/// The real directories directly under `root` (none when it is missing or a symlink).
fn list(root: &Path) -> Result<Vec<Candidate>, String> {
    match std::fs::symlink_metadata(root) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            tracing::warn!(root = %root.display(), "the spill root is not a directory; not aging it");
            return Ok(Vec::new());
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("inspecting {}: {e}", root.display())),
    }
    let entries =
        std::fs::read_dir(root).map_err(|e| format!("listing {}: {e}", root.display()))?;
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        // DirEntry::metadata does not follow a symlink: one is neither a directory nor entered.
        let Ok(meta) = entry.metadata() else { continue };
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let mut newest = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        match std::fs::read_dir(&path) {
            Ok(files) => {
                for file in files.flatten() {
                    if let Ok(modified) = file.metadata().and_then(|m| m.modified()) {
                        newest = newest.max(modified);
                    }
                }
            }
            Err(e) => {
                tracing::warn!(dir = %path.display(), error = %e, "cannot list spilled results");
                continue;
            }
        }
        found.push(Candidate { name, path, newest });
    }
    Ok(found)
}

fn remove(candidates: Vec<Candidate>, known: &HashSet<String>, cutoff: Option<SystemTime>) -> Aged {
    let mut aged = Aged::default();
    for candidate in candidates {
        let orphan = !known.contains(&candidate.name);
        let old = cutoff.is_some_and(|cutoff| candidate.newest < cutoff);
        if !orphan && !old {
            continue;
        }
        // Still a real directory (not swapped for a symlink since it was listed)?
        let still_dir = std::fs::symlink_metadata(&candidate.path).is_ok_and(|m| m.is_dir());
        if !still_dir {
            continue;
        }
        // remove_dir_all removes symlinks inside without following them.
        match std::fs::remove_dir_all(&candidate.path) {
            Ok(()) if orphan => aged.orphaned += 1,
            Ok(()) => aged.old += 1,
            Err(e) => tracing::warn!(
                dir = %candidate.path.display(), error = %e, "cannot remove spilled results"
            ),
        }
    }
    aged
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::store::{self, Lineage, NewSession};

    async fn session(store: &Store) -> String {
        let new = NewSession {
            source: "cli".into(),
            title: None,
            model: String::new(),
            cwd: "/".into(),
            parent_session_id: None,
            lineage: Lineage::Root,
        };
        store
            .write(move |tx| store::insert_session(tx, &new))
            .await
            .unwrap()
            .id
    }

    /// A spill directory with one result written `age` ago (the directory too).
    fn spilled(dir: &Path, age: Duration) {
        std::fs::create_dir_all(dir).unwrap();
        let file = dir.join("call_1.txt");
        std::fs::write(&file, "result").unwrap();
        let when = SystemTime::now() - age;
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(when)
            .unwrap();
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn old_and_orphaned_directories_go_fresh_ones_and_symlink_targets_stay() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("hermesd.db")).unwrap();
        let root = tools::spill_root(home.path());
        let fresh = session(&store).await;
        let old = session(&store).await;
        spilled(
            &tools::spill_dir(home.path(), &fresh),
            Duration::from_secs(3600),
        );
        spilled(&tools::spill_dir(home.path(), &old), DAY * 31);
        let orphan = root.join("s_gone");
        spilled(&orphan, Duration::from_secs(60));
        // A symlink in the root to a directory outside, old and named by no session.
        let outside = tempfile::tempdir().unwrap();
        spilled(outside.path(), DAY * 90);
        let link = root.join("elsewhere");
        std::os::unix::fs::symlink(outside.path(), &link).unwrap();

        let aged = sweep(home.path(), &store, 30, SystemTime::now())
            .await
            .unwrap();

        assert_eq!(
            aged,
            Aged {
                old: 1,
                orphaned: 1
            }
        );
        assert!(
            tools::spill_dir(home.path(), &fresh)
                .join("call_1.txt")
                .exists()
        );
        assert!(
            !tools::spill_dir(home.path(), &old).exists(),
            "older than 30 days"
        );
        assert!(!orphan.exists(), "its session is not in the store");
        assert!(
            outside.path().join("call_1.txt").exists(),
            "the symlink is not followed"
        );
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());

        // keep_days 0: no age limit, the fresh and the (re-made) old directory both stay.
        spilled(&tools::spill_dir(home.path(), &old), DAY * 400);
        let aged = sweep(home.path(), &store, 0, SystemTime::now())
            .await
            .unwrap();
        assert_eq!(aged, Aged::default());
        assert!(tools::spill_dir(home.path(), &old).exists());
    }

    #[tokio::test]
    async fn a_missing_or_symlinked_root_is_left_alone() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("hermesd.db")).unwrap();
        assert_eq!(
            sweep(home.path(), &store, 30, SystemTime::now()).await,
            Ok(Aged::default())
        );
        let outside = tempfile::tempdir().unwrap();
        spilled(&outside.path().join("s_gone"), DAY * 90);
        let root = tools::spill_root(home.path());
        std::fs::create_dir_all(root.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(outside.path(), &root).unwrap();
        assert_eq!(
            sweep(home.path(), &store, 30, SystemTime::now()).await,
            Ok(Aged::default())
        );
        assert!(outside.path().join("s_gone/call_1.txt").exists());
    }
}
