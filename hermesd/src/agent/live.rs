//! Sessions loaded in memory: each has one publisher task that numbers its events, stores the
//! durable ones and broadcasts all of them in order; the running turn's cancel token; questions
//! waiting for a client's answer; and the count of interactive clients.

use std::{
    collections::{HashMap, HashSet},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
};

use hermes_proto::pb::{self, session_event::Kind};
use prost::Message;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::store::{self, Store, StoreError};

/// Live events a slow subscriber may fall behind by before it is told it lagged.
const SUBSCRIBER_BUFFER: usize = 1024;

/// Builds a durable event inside the write transaction (e.g. after inserting the message it
/// refers to) and returns it with a value for the caller.
pub type PersistFn =
    Box<dyn FnOnce(&rusqlite::Transaction<'_>) -> Result<(Kind, i64), StoreError> + Send>;

enum Emit {
    Transient {
        turn_id: String,
        kind: Kind,
    },
    Durable {
        turn_id: String,
        make: PersistFn,
        reply: oneshot::Sender<Result<i64, StoreError>>,
    },
}

/// A queued durable event; dropping it does not cancel the write.
#[derive(Debug)]
pub struct PendingWrite(oneshot::Receiver<Result<i64, StoreError>>);

impl PendingWrite {
    /// Wait until it is stored (or failed).
    pub async fn wait(self) -> Result<i64, StoreError> {
        self.0
            .await
            .map_err(|_| StoreError::Task("the session's publisher stopped".into()))?
    }

    /// `Some` once it is stored or failed, without waiting.
    pub fn poll_done(&mut self) -> Option<Result<i64, StoreError>> {
        match self.0.try_recv() {
            Ok(result) => Some(result),
            Err(oneshot::error::TryRecvError::Empty) => None,
            Err(oneshot::error::TryRecvError::Closed) => Some(Err(StoreError::Task(
                "the session's publisher stopped".into(),
            ))),
        }
    }
}

/// An answer a client gave to a question (approval decision or clarify text) and who gave it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub text: String,
    pub by: String,
}

/// One session in memory.
pub struct LiveSession {
    pub id: String,
    events: broadcast::Sender<Arc<pb::SessionEvent>>,
    emit: mpsc::UnboundedSender<Emit>,
    /// Held by the running turn: turns of a session run one at a time, in arrival order.
    pub turn_lock: tokio::sync::Mutex<()>,
    running: Mutex<Option<CancellationToken>>,
    pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    interactive: AtomicUsize,
    /// Danger patterns the user approved for this session.
    pub approved_keys: Mutex<HashSet<String>>,
    state: Mutex<pb::SessionState>,
}

impl std::fmt::Debug for LiveSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveSession").field("id", &self.id).finish()
    }
}

fn kind_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::TurnStarted(_) => "turn_started",
        Kind::TurnFinished(_) => "turn_finished",
        Kind::TurnInterrupted(_) => "turn_interrupted",
        Kind::TurnFailed(_) => "turn_failed",
        Kind::TextDelta(_) => "text_delta",
        Kind::ReasoningDelta(_) => "reasoning_delta",
        Kind::AssistantMessage(_) => "assistant_message",
        Kind::ToolStarted(_) => "tool_started",
        Kind::ToolOutput(_) => "tool_output",
        Kind::ToolFinished(_) => "tool_finished",
        Kind::ApprovalRequested(_) => "approval_requested",
        Kind::ApprovalResolved(_) => "approval_resolved",
        Kind::ClarifyRequested(_) => "clarify_requested",
        Kind::ClarifyAnswered(_) => "clarify_answered",
        Kind::StateChanged(_) => "state_changed",
        Kind::ClientsChanged(_) => "clients_changed",
        Kind::Notice(_) => "notice",
        Kind::Lagged(_) => "lagged",
        Kind::ReplayDone(_) => "replay_done",
        Kind::UserMessage(_) => "user_message",
    }
}

fn now() -> prost_types::Timestamp {
    let now = chrono::Utc::now();
    prost_types::Timestamp {
        seconds: now.timestamp(),
        nanos: now.timestamp_subsec_nanos() as i32,
    }
}

/// Durable events stored in one transaction, at most.
const MAX_BATCH: usize = 64;

fn stamp(session_id: &str, seq: u64, turn_id: String, kind: Kind) -> pb::SessionEvent {
    pb::SessionEvent {
        session_id: session_id.to_string(),
        seq,
        turn_id,
        at: Some(now()),
        kind: Some(kind),
    }
}

type Reply = oneshot::Sender<Result<i64, StoreError>>;

/// The publisher: numbers events in arrival order, stores durable ones (consecutive ones in one
/// transaction), then broadcasts them in order.
async fn publish(
    session_id: String,
    mut last_seq: u64,
    store: Store,
    events: broadcast::Sender<Arc<pb::SessionEvent>>,
    mut inbox: mpsc::UnboundedReceiver<Emit>,
) {
    while let Some(first) = inbox.recv().await {
        let mut items: Vec<(u64, String, PersistFn)> = Vec::new();
        let mut replies: Vec<Reply> = Vec::new();
        let mut transient_after = None;
        let mut next = Some(first);
        while let Some(emit) = next.take() {
            match emit {
                Emit::Durable {
                    turn_id,
                    make,
                    reply,
                } => {
                    last_seq += 1;
                    items.push((last_seq, turn_id, make));
                    replies.push(reply);
                    if items.len() < MAX_BATCH {
                        next = inbox.try_recv().ok();
                    }
                }
                Emit::Transient { turn_id, kind } => transient_after = Some((turn_id, kind)),
            }
        }
        if !items.is_empty() {
            store_batch(&session_id, &store, &events, items, replies).await;
        }
        if let Some((turn_id, kind)) = transient_after {
            last_seq += 1;
            let _ = events.send(Arc::new(stamp(&session_id, last_seq, turn_id, kind)));
        }
    }
}

async fn store_batch(
    session_id: &str,
    store: &Store,
    events: &broadcast::Sender<Arc<pb::SessionEvent>>,
    items: Vec<(u64, String, PersistFn)>,
    replies: Vec<Reply>,
) {
    let id = session_id.to_string();
    let stored = store
        .write(move |tx| {
            let mut out = Vec::with_capacity(items.len());
            for (seq, turn_id, make) in items {
                let (kind, value) = make(tx)?;
                let name = kind_name(&kind);
                let event = stamp(&id, seq, turn_id, kind);
                let turn = Some(event.turn_id.as_str()).filter(|t| !t.is_empty());
                store::put_event(tx, &id, seq as i64, turn, name, &event.encode_to_vec())?;
                out.push((event, value));
            }
            Ok(out)
        })
        .await;
    match stored {
        Ok(done) => {
            for ((event, value), reply) in done.into_iter().zip(replies) {
                let _ = events.send(Arc::new(event));
                let _ = reply.send(Ok(value));
            }
        }
        Err(e) => {
            tracing::error!(session = %session_id, error = %e, "cannot store events");
            for reply in replies {
                let _ = reply.send(Err(StoreError::Task(format!("cannot store events: {e}"))));
            }
        }
    }
}

impl LiveSession {
    fn start(id: String, last_seq: u64, store: Store) -> Arc<Self> {
        let (events, _) = broadcast::channel(SUBSCRIBER_BUFFER);
        let (emit, inbox) = mpsc::unbounded_channel();
        tokio::spawn(publish(id.clone(), last_seq, store, events.clone(), inbox));
        Arc::new(Self {
            id,
            events,
            emit,
            turn_lock: tokio::sync::Mutex::new(()),
            running: Mutex::new(None),
            pending: Mutex::new(HashMap::new()),
            interactive: AtomicUsize::new(0),
            approved_keys: Mutex::new(HashSet::new()),
            state: Mutex::new(pb::SessionState::Idle),
        })
    }

    /// Live events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<pb::SessionEvent>> {
        self.events.subscribe()
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
            *running = Some(token.clone());
        }
        token
    }

    pub fn end_turn(&self) {
        if let Ok(mut running) = self.running.lock() {
            *running = None;
        }
    }

    pub fn is_running(&self) -> bool {
        self.running.lock().is_ok_and(|r| r.is_some())
    }

    /// Interrupt the running turn; false when none runs.
    pub fn interrupt(&self) -> bool {
        match self.running.lock() {
            Ok(running) => running.as_ref().is_some_and(|token| {
                token.cancel();
                true
            }),
            Err(_) => false,
        }
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

    fn subscribers(&self) -> usize {
        self.events.receiver_count()
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
        Arc::clone(
            map.entry(id.to_string())
                .or_insert_with(|| LiveSession::start(id.to_string(), last_seq, store.clone())),
        )
    }

    pub fn get(&self, id: &str) -> Option<Arc<LiveSession>> {
        self.map.lock().ok().and_then(|m| m.get(id).cloned())
    }

    /// Drop `id` from memory when nothing uses it: no turn, no subscriber, no other holder.
    pub fn release(&self, id: &str) {
        if let Ok(mut map) = self.map.lock() {
            let idle = map.get(id).is_some_and(|s| {
                !s.is_running() && s.subscribers() == 0 && Arc::strong_count(s) == 1
            });
            if idle {
                map.remove(id);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.map.lock().map_or(0, |m| m.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
