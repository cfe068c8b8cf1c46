//! The agent: sessions loaded live, the turn loop, the system prompt and its layers, the loop
//! guard, orphan repair, and the port through which tools reach the user.

pub mod attachments;
mod auxiliary;
mod batch;
mod compaction;
pub mod compress;
mod compress_now;
mod context_files;
mod delegation;
mod described;
pub mod ending;
mod history;
mod identity;
mod loop_guard;
mod media;
mod port;
mod process_reports;
mod prompt;
mod repair;
mod review;
mod review_prompts;
mod runner;
mod session;
mod session_context;
mod session_prompt;
mod settings;
mod title;
mod turn;
mod turn_room;
mod unattended;
mod vision;

pub use compaction::stored_rows;
pub use compress_now::{CompressError, compress_conversation};
pub use delegation::{Delegator, SUBAGENT_SOURCE};
pub use history::{parse_tool_calls, to_chat};
pub use process_reports::deliver_process_reports;
pub use review::REVIEW_SOURCE;
pub use runner::TurnRunner;
pub use session::{
    BusyPolicy, MAX_INPUT_BYTES, Submitted, Target, TurnError, TurnInput, prepare,
    prepare_with_images, prepare_with_loaded, run_prepared, send, spawn_turn, submit,
};
pub use turn::{TurnEnd, TurnOutcome, pb_cost_status};
pub use vision::VisionModel;

/// Evict live sessions nobody has used for `sessions.evict_after` seconds (default 600), until
/// the daemon stops. Their transcripts and events stay in the store.
pub async fn evict_idle_sessions(state: std::sync::Arc<TurnRunner>) {
    loop {
        let max_idle = state.config().settings.sessions.evict_after;
        let every = (max_idle / 4).clamp(
            std::time::Duration::from_millis(250),
            std::time::Duration::from_secs(60),
        );
        tokio::select! {
            () = state.shutdown.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        let evicted = state.hub.sweep(max_idle);
        if evicted > 0 {
            // What they held is free now: give it back (the database's page caches, then the
            // heaps), or the daemon keeps its peak for good.
            let store = state.store.clone();
            let idle = state.hub.is_empty();
            let trimmed = tokio::task::spawn_blocking(move || {
                store.release_memory_blocking();
                // With nothing live the daemon is idle again: the code the burst ran goes too.
                if idle {
                    let released = crate::residency::release_unused_memory();
                    tracing::info!(
                        mapped_bytes = released.mapped_bytes,
                        "no live session left: unused memory released"
                    );
                    released.heap_trimmed
                } else {
                    crate::residency::trim_heaps()
                }
            })
            .await
            .unwrap_or(false);
            tracing::debug!(
                evicted,
                live = state.hub.len(),
                trimmed,
                "idle sessions evicted"
            );
        }
    }
}
