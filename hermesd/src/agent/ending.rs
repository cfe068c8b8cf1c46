//! What ends with a conversation when it is deleted (`Sessions.Delete`) or pruned: its running
//! turns and reviews are interrupted first and given a moment to stop, then its rows go (every
//! segment, with the reviews and subagents it owns), then what it held outside the database:
//! its live session, its background processes and its spilled tool results. Nothing of it is
//! left on disk or in memory.

use super::TurnRunner;
use std::{path::Path, sync::Arc, time::Duration};

use crate::store::{self, StoreError};

/// How long a delete waits for the conversation's running turns to stop after interrupting
/// them (an interrupted turn stops at once; this bounds a stuck one).
const STOP_WITHIN: Duration = Duration::from_secs(5);

/// Delete the conversations `references` belong to (any segment id of each), with everything
/// they own. `why` is stored as who interrupted their running turns. Returns the ids of the
/// sessions removed.
pub async fn delete_conversations(
    state: &Arc<TurnRunner>,
    references: Vec<String>,
    why: &str,
) -> Result<Vec<String>, StoreError> {
    let lookup = references.clone();
    let owned: Vec<String> = state
        .store
        .read(move |conn| {
            let mut all = Vec::new();
            for reference in &lookup {
                match store::owned_sessions(conn, reference) {
                    Ok(ids) => all.extend(ids),
                    Err(StoreError::SessionNotFound(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(all)
        })
        .await?;
    stop_turns(state, &owned, why).await;
    let removed = state
        .store
        .write(move |tx| store::delete_conversations(tx, &references))
        .await?;
    release(state, &removed).await;
    Ok(removed)
}

/// Interrupt the turns running in any of `sessions` and wait (bounded) for them to end.
async fn stop_turns(state: &Arc<TurnRunner>, sessions: &[String], why: &str) {
    let live: Vec<_> = sessions
        .iter()
        .filter_map(|id| state.hub.find(id))
        .collect();
    for session in &live {
        // Turns queued behind the running one are interrupted as they begin, too.
        session.end_for(why);
    }
    let waiting = async {
        for session in &live {
            drop(session.turn_lock.lock().await);
        }
    };
    if tokio::time::timeout(STOP_WITHIN, waiting).await.is_err() {
        tracing::warn!("a deleted conversation's turn did not stop in time; deleting anyway");
    }
}

/// What the removed sessions held outside the database: live sessions, background processes
/// (killed), spilled results (removed).
async fn release(state: &Arc<TurnRunner>, removed: &[String]) {
    let mut killed = 0;
    for id in removed {
        if let Some(live) = state.hub.find(id) {
            state.hub.remove(live.conversation());
        }
        state.tool_services.browsers.close(id).await;
        let processes = state.tool_services.processes.scoped(id);
        killed += processes.kill_all().await;
        processes.forget_finished();
    }
    if killed > 0 {
        tracing::info!(killed, "background processes of deleted sessions stopped");
    }
    let home = state.home.dir.clone();
    let ids = removed.to_vec();
    let removed_dirs = tokio::task::spawn_blocking(move || {
        ids.iter().filter(|id| remove_spill_dir(&home, id)).count()
    })
    .await
    .unwrap_or(0);
    tracing::debug!(removed_dirs, "spilled results of deleted sessions removed");
}

/// Remove the spill directory of session `id`; true when one was removed.
fn remove_spill_dir(home: &Path, id: &str) -> bool {
    let dir = crate::tools::spill_dir(home, id);
    match std::fs::remove_dir_all(&dir) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot remove spilled results");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_imported_id_with_a_path_in_it_removes_nothing_outside_the_cache() {
        let home = tempfile::tempdir().unwrap();
        let outside = home.path().join("keep");
        std::fs::create_dir_all(&outside).unwrap();
        let odd = crate::tools::spill_dir(home.path(), "../../keep");
        assert!(
            odd.starts_with(crate::tools::spill_root(home.path())),
            "{odd:?}"
        );
        std::fs::create_dir_all(&odd).unwrap();
        assert!(remove_spill_dir(home.path(), "../../keep"));
        assert!(outside.exists() && !odd.exists());
        let inside = crate::tools::spill_dir(home.path(), "s1");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::write(inside.join("c1.txt"), "x").unwrap();
        assert!(remove_spill_dir(home.path(), "s1"));
        assert!(!inside.exists());
    }
}
