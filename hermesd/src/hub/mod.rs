//! The hub: the one way into a live session. It holds every conversation loaded in memory,
//! keyed by the conversation (so a compression hand-off never makes a second live session),
//! numbers and publishes their events (`publisher.rs`, bounded queues in `inbox.rs` and
//! `fanout.rs`), joins stored and live events for an attaching client (`replay.rs`), evicts
//! sessions nobody uses, and tracks the tasks that work on them — turns, reviews, cron runs —
//! so that stopping the daemon interrupts each and waits for it to store how it ended.
//!
//! The hub imports only the store and the protocol: the agent, the server, cron and the
//! gateway all enter sessions through it.

mod fanout;
mod inbox;
mod live;
mod publisher;
pub mod replay;
mod turn_handle;

use std::{
    collections::HashMap,
    future::Future,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

pub use fanout::{CLIENT_BUDGET, Partial, Received, Subscription};
pub use inbox::INBOX_BUDGET;
pub use live::{Answer, ClientGuard, InteractiveGuard, LiveSession};
pub use publisher::{PendingWrite, PersistFn, RESERVE_BLOCK};
use tokio_util::task::TaskTracker;
pub use turn_handle::TurnHandle;

use crate::store::{SessionRow, Store};

/// Why a turn stopped when the daemon stopped it (its `turn_interrupted.by`).
pub const STOPPING: &str = "the daemon is stopping";

/// Every conversation loaded in memory, and the tasks working on them.
#[derive(Debug)]
pub struct Hub {
    store: Store,
    map: Mutex<HashMap<String, Arc<LiveSession>>>,
    tasks: TaskTracker,
}

impl Hub {
    pub fn new(store: Store) -> Self {
        Self {
            store,
            map: Mutex::new(HashMap::new()),
            tasks: TaskTracker::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LiveSession>>> {
        match self.map.lock() {
            Ok(map) => map,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The live session of the conversation whose newest segment is `row` (resolved with
    /// `store::resolve_conversation`), loading it when absent.
    pub fn load(&self, row: &SessionRow) -> Arc<LiveSession> {
        let mut map = self.lock();
        let live = Arc::clone(
            map.entry(row.conversation_id.clone())
                .or_insert_with(|| LiveSession::start(row, self.store.clone())),
        );
        if let Ok(mut idle) = live.idle_since.lock() {
            *idle = None;
        }
        live
    }

    /// The live session of conversation `conversation_id`, if loaded.
    pub fn get(&self, conversation_id: &str) -> Option<Arc<LiveSession>> {
        self.lock().get(conversation_id).cloned()
    }

    /// The live session whose conversation or newest segment is `id`, if loaded (for callers
    /// holding only an id; with a resolved row, use [`Hub::get`] with its `conversation_id`).
    pub fn find(&self, id: &str) -> Option<Arc<LiveSession>> {
        let map = self.lock();
        map.get(id)
            .or_else(|| map.values().find(|live| live.id() == id))
            .cloned()
    }

    /// Unload the conversation (it was deleted): its attached clients' streams end now, and its
    /// publisher ends once its queue is stored and the last user lets go.
    pub fn remove(&self, conversation_id: &str) -> Option<Arc<LiveSession>> {
        let removed = self.lock().remove(conversation_id);
        if let Some(live) = &removed {
            live.close_subscriptions();
        }
        removed
    }

    /// Note that a user of `live` is done; once nothing uses it, its idle time starts.
    pub fn release(&self, live: Arc<LiveSession>) {
        let key = live.conversation().to_string();
        drop(live);
        if let Some(live) = self.lock().get(&key)
            && live.unused()
            && let Ok(mut idle) = live.idle_since.lock()
        {
            idle.get_or_insert_with(Instant::now);
        }
    }

    /// Evict sessions unused for at least `max_idle`; returns how many went.
    pub fn sweep(&self, max_idle: Duration) -> usize {
        let mut map = self.lock();
        let before = map.len();
        map.retain(|_, live| {
            if !live.unused() {
                if let Ok(mut idle) = live.idle_since.lock() {
                    *idle = None;
                }
                return true;
            }
            let since = live
                .idle_since
                .lock()
                .ok()
                .map(|mut idle| *idle.get_or_insert_with(Instant::now));
            since.is_none_or(|since| since.elapsed() < max_idle)
        });
        before - map.len()
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Run `work` (a turn, a review, a cron run) as a task the hub waits for when the daemon
    /// stops. After [`Hub::stop`] began, nothing new starts: `None`.
    pub fn spawn<F>(&self, work: F) -> Option<tokio::task::JoinHandle<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        if self.tasks.is_closed() {
            return None;
        }
        Some(self.tasks.spawn(work))
    }

    /// Mark a turn of `live` as running and return its cancel token; when the daemon is
    /// stopping, the token comes back cancelled (so a turn that was waiting never runs).
    pub fn begin_turn(
        &self,
        live: &LiveSession,
        stop: Option<&tokio_util::sync::CancellationToken>,
    ) -> tokio_util::sync::CancellationToken {
        let token = live.begin_turn(stop);
        if self.is_stopping() {
            live.interrupt_for(STOPPING);
        }
        token
    }

    /// Whether the daemon is stopping (no new work is taken).
    pub fn is_stopping(&self) -> bool {
        self.tasks.is_closed()
    }

    /// Stop: take no new work, interrupt every running turn ([`STOPPING`]), and wait up to
    /// `within` for the tracked tasks to store how they ended. Returns how many were still
    /// running when the time was up.
    pub async fn stop(&self, within: Duration) -> usize {
        self.tasks.close();
        let live: Vec<Arc<LiveSession>> = self.lock().values().cloned().collect();
        let interrupted = live.iter().filter(|l| l.interrupt_for(STOPPING)).count();
        drop(live);
        if interrupted > 0 {
            tracing::info!(interrupted, "stopping: running turns interrupted");
        }
        match tokio::time::timeout(within, self.tasks.wait()).await {
            Ok(()) => 0,
            Err(_) => self.tasks.len(),
        }
    }

    /// Tasks running now (turns, reviews, cron runs).
    pub fn running_tasks(&self) -> usize {
        self.tasks.len()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::store::{self, NewSession};

    /// A new root session in `store`.
    pub(super) async fn root_session(store: &Store) -> SessionRow {
        store
            .write(|tx| store::insert_session(tx, &NewSession::root("cli")))
            .await
            .unwrap()
    }

    async fn live_session() -> (tempfile::TempDir, Hub, Arc<LiveSession>) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let row = root_session(&store).await;
        let hub = Hub::new(store);
        let live = hub.load(&row);
        (dir, hub, live)
    }

    #[tokio::test]
    async fn a_conversation_that_is_ending_interrupts_every_turn_as_it_begins() {
        let (_dir, hub, live) = live_session().await;
        let running = hub.begin_turn(&live, None);
        live.end_for("the session was deleted");
        assert!(running.is_cancelled(), "the running turn is interrupted");
        drop(live.end_turn());
        // A turn that was queued behind it begins cancelled, with the same reason.
        let queued = hub.begin_turn(&live, None);
        assert!(queued.is_cancelled());
        assert_eq!(live.interrupted_by(), "the session was deleted");
        assert!(live.steer("more".into()).is_err(), "no input is steered in");
    }

    #[tokio::test]
    async fn steered_input_the_turn_never_took_goes_back_to_its_sender() {
        let (_dir, hub, live) = live_session().await;
        let _running = hub.begin_turn(&live, None);
        let taken = live.steer_or_return("taken".into()).unwrap();
        assert_eq!(live.take_steered(), vec!["taken".to_string()]);
        assert!(
            taken.await.is_err(),
            "taken input closes its return channel"
        );
        let late = live.steer_or_return("late".into()).unwrap();
        live.steer("anyone's".into()).unwrap();
        assert_eq!(
            live.end_turn(),
            vec!["anyone's".to_string()],
            "only unclaimed input runs next"
        );
        assert_eq!(late.await.unwrap(), "late", "the sender gets its text back");
        assert!(live.steer_or_return("idle".into()).is_err(), "no turn runs");
    }

    #[tokio::test]
    async fn a_stopping_hub_takes_no_new_work_and_begins_turns_cancelled() {
        let (_dir, hub, live) = live_session().await;
        assert_eq!(hub.stop(Duration::from_secs(1)).await, 0);
        assert!(hub.spawn(async {}).is_none());
        let token = hub.begin_turn(&live, None);
        assert!(token.is_cancelled());
        assert_eq!(live.interrupted_by(), STOPPING);
    }
}
