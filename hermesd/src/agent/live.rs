//! Sessions loaded in memory: each has its publisher (see `publisher.rs`), the running turn's
//! cancel token, questions waiting for a client's answer, its attached clients, and its turn
//! state. Sessions nobody uses are evicted after an idle time.

use std::{
    collections::{HashMap, HashSet},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use hermes_proto::pb::{self, session_event::Kind};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::publisher::{Emit, Outbox, publish};
pub use super::publisher::{Partial, PendingWrite, PersistFn};
use crate::store::{Store, StoreError};

/// An answer a client gave to a question (approval decision or clarify text) and who gave it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub text: String,
    pub by: String,
}

/// The running turn, if any: its cancel token and input steered into it.
#[derive(Default)]
struct RunState {
    cancel: Option<CancellationToken>,
    steer: Vec<String>,
}

/// One session in memory.
pub struct LiveSession {
    /// The conversation's newest segment: where its messages and events are stored.
    segment: Mutex<String>,
    outbox: Arc<Outbox>,
    emit: mpsc::UnboundedSender<Emit>,
    /// Held by the running turn: turns of a session run one at a time, in arrival order.
    pub turn_lock: tokio::sync::Mutex<()>,
    running: Mutex<RunState>,
    pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    interactive: AtomicUsize,
    /// Danger patterns the user approved for this session.
    pub approved_keys: Mutex<HashSet<String>>,
    state: Mutex<pb::SessionState>,
    /// Clients attached now, interactive or not.
    clients: AtomicUsize,
    /// When the session last became unused (no turn, no client); `None` while in use.
    idle_since: Mutex<Option<Instant>>,
    /// The learning loop's counters (see `review`).
    pub learning: Mutex<super::review::LearningCounters>,
    /// Until when automatic compression skips the summary model after it failed.
    pub compression_cooldown: Mutex<Option<Instant>>,
    /// Whether stored messages without events were announced (see `announce_history`).
    announced_history: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for LiveSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveSession")
            .field("id", &self.id())
            .finish()
    }
}

impl LiveSession {
    fn start(id: String, last_seq: u64, store: Store) -> Arc<Self> {
        let outbox = Outbox::new();
        let (emit, inbox) = mpsc::unbounded_channel();
        tokio::spawn(publish(
            id.clone(),
            last_seq,
            store,
            Arc::clone(&outbox),
            inbox,
        ));
        Arc::new(Self {
            segment: Mutex::new(id),
            outbox,
            emit,
            turn_lock: tokio::sync::Mutex::new(()),
            running: Mutex::new(RunState::default()),
            pending: Mutex::new(HashMap::new()),
            interactive: AtomicUsize::new(0),
            approved_keys: Mutex::new(HashSet::new()),
            state: Mutex::new(pb::SessionState::Idle),
            clients: AtomicUsize::new(0),
            idle_since: Mutex::new(None),
            learning: Mutex::new(super::review::LearningCounters::default()),
            compression_cooldown: Mutex::new(None),
            announced_history: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The id of the conversation's newest segment.
    pub fn id(&self) -> String {
        self.segment
            .lock()
            .map(|s| s.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }

    /// The conversation continues in segment `id` (after compression): events queued from now on
    /// are stored there, after the ones queued before.
    fn continue_in(&self, id: &str) {
        let _ = self.emit.send(Emit::Segment(id.to_string()));
        if let Ok(mut segment) = self.segment.lock() {
            *segment = id.to_string();
        }
    }

    /// Give messages stored without events (an imported conversation) their `UserMessage` /
    /// `AssistantMessage` events, once per live session, numbered by the publisher like any
    /// other event so they can never collide with a turn's. Returns the last write, to wait for
    /// before reading the stored events (`None` when announced already or nothing to announce).
    pub fn announce_history(
        &self,
        messages: Vec<crate::store::MessageRow>,
    ) -> Option<PendingWrite> {
        if self.announced_history.swap(true, Ordering::SeqCst) {
            return None;
        }
        let mut last = None;
        for message in messages {
            let id = message.id.max(0) as u64;
            let kind = if message.role == "user" {
                Kind::UserMessage(pb::UserMessage {
                    message_id: id,
                    text: message.content,
                })
            } else {
                Kind::AssistantMessage(pb::AssistantMessage {
                    message_id: id,
                    text: message.content,
                    reasoning: message.reasoning.unwrap_or_default(),
                    tool_calls: message.tool_calls.unwrap_or_default(),
                })
            };
            last = Some(self.queue_durable("", Box::new(move |_| Ok((kind, 0)))));
        }
        last
    }

    /// Live events from now on, and the text the current model call streamed before them.
    pub fn subscribe(&self) -> (broadcast::Receiver<Arc<pb::SessionEvent>>, Partial) {
        self.outbox.subscribe()
    }

    /// Clients attached now.
    pub fn clients(&self) -> usize {
        self.clients.load(Ordering::SeqCst)
    }

    /// Count an attached client while the guard lives; everyone is told the new count.
    pub fn client_guard(self: &Arc<Self>) -> ClientGuard {
        let now = self.clients.fetch_add(1, Ordering::SeqCst) + 1;
        self.announce_clients(now);
        ClientGuard(Arc::clone(self))
    }

    fn announce_clients(&self, clients: usize) {
        self.emit_transient(
            "",
            Kind::ClientsChanged(pb::ClientsChanged {
                clients: clients as u32,
            }),
        );
    }

    /// Publish an event that is not stored (deltas, progress, state).
    pub fn emit_transient(&self, turn_id: &str, kind: Kind) {
        let _ = self.emit.send(Emit::Transient {
            turn_id: turn_id.to_string(),
            kind,
        });
    }

    /// Queue an event (built by `make` inside the transaction) to be stored, then published;
    /// the receiver gets the outcome. Events are stored and published in queue order.
    pub fn queue_durable(&self, turn_id: &str, make: PersistFn) -> PendingWrite {
        let (reply, answer) = oneshot::channel();
        let _ = self.emit.send(Emit::Durable {
            turn_id: turn_id.to_string(),
            make,
            reply,
        });
        PendingWrite(answer)
    }

    /// Store an event (built by `make` inside the transaction), then publish it.
    pub async fn emit_durable_with(
        &self,
        turn_id: &str,
        make: PersistFn,
    ) -> Result<i64, StoreError> {
        self.queue_durable(turn_id, make).wait().await
    }

    /// Store and publish an event.
    pub async fn emit_durable(&self, turn_id: &str, kind: Kind) -> Result<(), StoreError> {
        self.emit_durable_with(turn_id, Box::new(move |_| Ok((kind, 0))))
            .await
            .map(|_| ())
    }

    pub fn state(&self) -> pb::SessionState {
        self.state.lock().map_or(pb::SessionState::Idle, |s| *s)
    }

    /// Change the turn state and tell subscribers.
    pub fn set_state(&self, turn_id: &str, state: pb::SessionState) {
        if let Ok(mut current) = self.state.lock() {
            if *current == state {
                return;
            }
            *current = state;
        }
        self.emit_transient(
            turn_id,
            Kind::StateChanged(pb::StateChanged {
                state: state as i32,
            }),
        );
    }

    /// Mark a turn as running; its token is cancelled by [`LiveSession::interrupt`].
    pub fn begin_turn(&self) -> CancellationToken {
        let token = CancellationToken::new();
        if let Ok(mut running) = self.running.lock() {
            running.cancel = Some(token.clone());
        }
        token
    }

    /// The turn is over; input steered into it too late to be taken comes back (to run next).
    pub fn end_turn(&self) -> Vec<String> {
        match self.running.lock() {
            Ok(mut running) => {
                running.cancel = None;
                std::mem::take(&mut running.steer)
            }
            Err(_) => Vec::new(),
        }
    }

    pub fn is_running(&self) -> bool {
        self.running.lock().is_ok_and(|r| r.cancel.is_some())
    }

    /// Interrupt the running turn; false when none runs.
    pub fn interrupt(&self) -> bool {
        match self.running.lock() {
            Ok(running) => running.cancel.as_ref().is_some_and(|token| {
                token.cancel();
                true
            }),
            Err(_) => false,
        }
    }

    /// Hand `text` to the running turn, which takes it at its next step; false (and `text` back)
    /// when no turn runs.
    pub fn steer(&self, text: String) -> Result<(), String> {
        match self.running.lock() {
            Ok(mut running) if running.cancel.is_some() => {
                running.steer.push(text);
                Ok(())
            }
            _ => Err(text),
        }
    }

    /// Input steered into the running turn since it last looked.
    pub fn take_steered(&self) -> Vec<String> {
        self.running
            .lock()
            .map(|mut r| std::mem::take(&mut r.steer))
            .unwrap_or_default()
    }

    /// Register a question; the receiver gets the first answer.
    pub fn ask(&self, question_id: &str) -> oneshot::Receiver<Answer> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(question_id.to_string(), tx);
        }
        rx
    }

    /// Forget a question that timed out or was cancelled.
    pub fn forget(&self, question_id: &str) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.remove(question_id);
        }
    }

    /// Deliver an answer; false when no such question is waiting (answered already, or unknown).
    pub fn answer(&self, question_id: &str, answer: Answer) -> bool {
        let sender = self
            .pending
            .lock()
            .ok()
            .and_then(|mut p| p.remove(question_id));
        sender.is_some_and(|s| s.send(answer).is_ok())
    }

    /// Interactive clients attached now (they can answer approvals and questions).
    pub fn interactive_clients(&self) -> usize {
        self.interactive.load(Ordering::SeqCst)
    }

    /// Count an interactive client while the guard lives.
    pub fn interactive_guard(self: &Arc<Self>) -> InteractiveGuard {
        self.interactive.fetch_add(1, Ordering::SeqCst);
        InteractiveGuard(Arc::clone(self))
    }

    fn unused(self: &Arc<Self>) -> bool {
        !self.is_running() && self.outbox.subscribers() == 0 && Arc::strong_count(self) == 1
    }
}

/// Keeps one attached client counted.
#[derive(Debug)]
pub struct ClientGuard(Arc<LiveSession>);

impl Drop for ClientGuard {
    fn drop(&mut self) {
        let now = self
            .0
            .clients
            .fetch_sub(1, Ordering::SeqCst)
            .saturating_sub(1);
        self.0.announce_clients(now);
    }
}

/// Keeps one interactive client counted.
#[derive(Debug)]
pub struct InteractiveGuard(Arc<LiveSession>);

impl Drop for InteractiveGuard {
    fn drop(&mut self) {
        self.0.interactive.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Every session loaded in memory.
#[derive(Debug, Default)]
pub struct LiveSessions {
    map: Mutex<HashMap<String, Arc<LiveSession>>>,
}

impl LiveSessions {
    /// The live session `id`, loading it (its events continue after `last_seq`) when absent.
    pub fn load(&self, id: &str, last_seq: u64, store: &Store) -> Arc<LiveSession> {
        let mut map = match self.map.lock() {
            Ok(map) => map,
            Err(poisoned) => poisoned.into_inner(),
        };
        let live = Arc::clone(
            map.entry(id.to_string())
                .or_insert_with(|| LiveSession::start(id.to_string(), last_seq, store.clone())),
        );
        if let Ok(mut idle) = live.idle_since.lock() {
            *idle = None;
        }
        live
    }

    /// The conversation of live session `live` continues in segment `id`: it is found under
    /// that id from now on, and stores its events there.
    pub fn continue_in(&self, live: &Arc<LiveSession>, id: &str) {
        let mut map = match self.map.lock() {
            Ok(map) => map,
            Err(poisoned) => poisoned.into_inner(),
        };
        map.remove(&live.id());
        live.continue_in(id);
        map.insert(id.to_string(), Arc::clone(live));
    }

    pub fn get(&self, id: &str) -> Option<Arc<LiveSession>> {
        self.map.lock().ok().and_then(|m| m.get(id).cloned())
    }

    /// Note that a user of `id` is done; once nothing uses it, its idle time starts.
    pub fn release(&self, id: &str) {
        if let Ok(map) = self.map.lock()
            && let Some(live) = map.get(id)
            && live.unused()
            && let Ok(mut idle) = live.idle_since.lock()
        {
            idle.get_or_insert_with(Instant::now);
        }
    }

    /// Evict sessions unused for at least `max_idle`; returns how many went.
    pub fn sweep(&self, max_idle: Duration) -> usize {
        let Ok(mut map) = self.map.lock() else {
            return 0;
        };
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
        self.map.lock().map_or(0, |m| m.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
