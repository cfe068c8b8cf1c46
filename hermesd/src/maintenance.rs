//! Keeping the database and the home bounded and fast: pruning conversations older than the
//! retention period (on request, or daily when `sessions.auto_prune` is on), returning freed pages
//! to the file system in small incremental-vacuum steps, merging the full-text indexes' segments,
//! and aging spilled tool results (`tool_results`) — all on background tasks in short steps, never
//! in the path of a turn.

mod tool_results;

use std::{sync::Arc, time::Duration};

pub use tool_results::{Aged, age_tool_results};

use crate::{agent::TurnRunner, store};

/// Free pages returned per step; each step holds the writer for a moment only.
const VACUUM_PAGES_PER_STEP: u32 = 256;
/// Index pages merged per step, and how often the indexes are looked at.
const MERGE_PAGES_PER_STEP: u32 = 16;
const MERGE_EVERY: Duration = Duration::from_secs(60);
const DAY: Duration = Duration::from_secs(24 * 3600);

/// What a prune found and did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Conversations removed (or that would be, for a dry run).
    pub conversations: usize,
    /// Conversations old enough but kept because a turn runs or a client is attached.
    pub kept_live: usize,
}

/// Remove conversations whose last activity is more than `days` days old, except live ones;
/// with `dry_run`, only count them. Space is given back in the background afterwards.
pub async fn prune(
    state: &Arc<TurnRunner>,
    days: u32,
    dry_run: bool,
) -> Result<Pruned, store::StoreError> {
    let cutoff = store::now_ms() - i64::from(days) * 86_400_000;
    let stale = state
        .store
        .read(move |conn| store::stale_conversations(conn, cutoff))
        .await?;
    let (live, idle): (Vec<String>, Vec<String>) = stale.into_iter().partition(|id| {
        state
            .hub
            .find(id)
            .is_some_and(|l| l.is_running() || l.clients() > 0)
    });
    let pruned = Pruned {
        conversations: idle.len(),
        kept_live: live.len(),
    };
    if dry_run || idle.is_empty() {
        return Ok(pruned);
    }
    let removed =
        crate::agent::ending::delete_conversations(state, idle, "the session was pruned").await?;
    tracing::info!(
        conversations = pruned.conversations,
        sessions = removed.len(),
        days,
        "old sessions pruned"
    );
    if state.config().settings.sessions.vacuum_after_prune {
        spawn_vacuum(state);
    }
    Ok(pruned)
}

/// Give free pages back to the file system, a few at a time, off the hot path.
pub fn spawn_vacuum(state: &Arc<TurnRunner>) {
    let store = state.store.clone();
    tokio::spawn(async move {
        let mut returned_steps = 0u32;
        loop {
            let store = store.clone();
            let step = tokio::task::spawn_blocking(move || {
                store.with_writer_blocking(|conn| store::vacuum_step(conn, VACUUM_PAGES_PER_STEP))
            })
            .await;
            match step {
                Ok(Ok(0)) => break,
                Ok(Ok(_)) => returned_steps += 1,
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "incremental vacuum stopped");
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "incremental vacuum task failed");
                    break;
                }
            }
            // Let waiting writers in between steps.
            tokio::task::yield_now().await;
        }
        tracing::debug!(steps = returned_steps, "incremental vacuum done");
    });
}

/// Merge the full-text indexes' segments a step at a time, every minute, until the daemon stops.
/// (Their automatic merging on commit is off, see migration 6; FTS5 still merges on its own if
/// 16 segments of one level ever pile up.)
pub async fn merge_indexes(state: Arc<TurnRunner>) {
    loop {
        tokio::select! {
            () = state.shutdown.cancelled() => return,
            () = tokio::time::sleep(MERGE_EVERY) => {}
        }
        let mut steps = 0u32;
        loop {
            let store = state.store.clone();
            let step = tokio::task::spawn_blocking(move || {
                store.with_writer_blocking(|conn| store::fts_merge_step(conn, MERGE_PAGES_PER_STEP))
            })
            .await;
            match step {
                Ok(Ok(true)) if !state.shutdown.is_cancelled() => steps += 1,
                Ok(Ok(_)) => break,
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "full-text index merge stopped");
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "full-text index merge task failed");
                    break;
                }
            }
            // Let waiting writers in between steps.
            tokio::task::yield_now().await;
        }
        if steps > 0 {
            tracing::debug!(steps, "full-text index segments merged");
        }
    }
}

/// Prune daily while `sessions.auto_prune` is on (checked at each tick, so a reload applies),
/// until the daemon stops.
pub async fn auto_prune(state: Arc<TurnRunner>) {
    loop {
        let retention = state.config().settings.sessions;
        if retention.auto_prune
            && let Err(e) = prune(&state, retention.retention_days, false).await
        {
            tracing::warn!(error = %e, "automatic prune failed");
        }
        tokio::select! {
            () = state.shutdown.cancelled() => return,
            () = tokio::time::sleep(DAY) => {}
        }
    }
}
