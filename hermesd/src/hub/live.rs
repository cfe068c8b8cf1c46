//! One conversation loaded in memory: its publisher (see `publisher.rs`), the running turn's
//! cancel token and steered input, questions waiting for a client's answer, its attached
//! clients, and its turn state. It is keyed by its conversation (its first segment's id), so a
//! compression hand-off changes where its events are stored, never which live session a client
//! or a turn finds.

use std::{
    any::{Any, TypeId},
    collections::{HashMap, HashSet},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Instant,
};

use hermes_proto::pb::{self, session_event::Kind};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::{
    fanout::{CLIENT_BUDGET, Outbox, Partial, Subscription},
    inbox::{Emit, INBOX_BUDGET, Inbox},
    publisher::{Numbering, PendingWrite, PersistFn, publish},
};
use crate::store::{SessionRow, Store, StoreError};

/// An answer a client gave to a question (approval decision or clarify text) and who gave it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub text: String,
    pub by: String,
}

/// The running turn, if any: its cancel token, input steered into it, and who interrupted it.
#[derive(Default)]
struct RunState {
    cancel: Option<CancellationToken>,
    steer: Vec<Steered>,
    interrupted_by: Option<String>,
    /// Set once the conversation is going (deleted, pruned): every turn from then on, queued
    /// ones included, is interrupted with this reason as it begins.
    ending: Option<String>,
    /// Work the conversation started that outlives the turn that started it (delegated
    /// subagents): stopped by the next interrupt, with the running turn.
    background: Option<CancellationToken>,
}

/// Input waiting to be taken by the running turn; more is refused (and waits as a turn).
const STEER_MAX: usize = 32;

/// Input steered into the running turn. `back`, when set, is the sender's: if the turn ends
/// before taking the text, it goes back there (for the sender to run and answer itself) rather
/// than running as a turn nobody follows; a dropped `back` means the turn took it.
struct Steered {
    text: String,
    back: Option<oneshot::Sender<String>>,
}

/// One session in memory.
pub struct LiveSession {
    /// The conversation's first segment's id: the hub's key, unchanged by compression.
    conversation: String,
    /// The conversation's newest segment: where its messages and events are stored.
    segment: Mutex<String>,
    outbox: Arc<Outbox>,
    inbox: Arc<Inbox>,
    /// Held by the running turn: turns of a session run one at a time, in arrival order.
    pub turn_lock: tokio::sync::Mutex<()>,
    running: Mutex<RunState>,
    pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    interactive: AtomicUsize,
    /// Danger patterns the user approved for this session.
    pub(super) approved_keys: Mutex<HashSet<String>>,
    state: Mutex<pb::SessionState>,
    /// Clients attached now, interactive or not.
    clients: AtomicUsize,
    /// When the session last became unused (no turn, no client); `None` while in use.
    pub(super) idle_since: Mutex<Option<Instant>>,
    /// What the layers above keep per loaded session (the learning loop's counters, the
    /// compression cool-down), one value per type; it goes with the session.
    memos: Mutex<HashMap<TypeId, Box<dyn Any + Send>>>,
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

impl Drop for LiveSession {
    fn drop(&mut self) {
        // The publisher stores what is queued, then ends and closes every subscription.
        self.inbox.close();
    }
}

impl LiveSession {
    /// Load the conversation whose newest segment is `row`; its publisher starts now.
    pub(super) fn start(row: &SessionRow, store: Store) -> Arc<Self> {
        let outbox = Arc::new(Outbox::new(CLIENT_BUDGET));
        let inbox = Arc::new(Inbox::new(INBOX_BUDGET));
        tokio::spawn(publish(
            row.id.clone(),
            Numbering::after(row),
            store,
            Arc::clone(&outbox),
            Arc::clone(&inbox),
        ));
        Arc::new(Self {
            conversation: row.conversation_id.clone(),
            segment: Mutex::new(row.id.clone()),
            outbox,
            inbox,
            turn_lock: tokio::sync::Mutex::new(()),
            running: Mutex::new(RunState::default()),
            pending: Mutex::new(HashMap::new()),
            interactive: AtomicUsize::new(0),
            approved_keys: Mutex::new(HashSet::new()),
            state: Mutex::new(pb::SessionState::Idle),
            clients: AtomicUsize::new(0),
            idle_since: Mutex::new(None),
            memos: Mutex::new(HashMap::new()),
            announced_history: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Run `f` on this session's value of type `T` (created with its default on first use).
    pub fn memo<T: Default + Send + 'static, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut memos = match self.memos.lock() {
            Ok(memos) => memos,
            Err(poisoned) => poisoned.into_inner(),
        };
        let slot = memos
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()));
        match slot.downcast_mut::<T>() {
            Some(value) => f(value),
            // Unreachable: the slot of `TypeId::of::<T>()` always holds a `T`.
            None => f(&mut T::default()),
        }
    }

    /// The conversation's key: its first segment's id.
    pub fn conversation(&self) -> &str {
        &self.conversation
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
    pub fn continue_in(&self, id: &str) {
        let mut segment = match self.segment.lock() {
            Ok(segment) => segment,
            Err(poisoned) => poisoned.into_inner(),
        };
        self.inbox.push(Emit::Segment(id.to_string()), id.len());
        *segment = id.to_string();
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
            let cost = message.content.len();
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
            last = Some(self.queue_durable_sized("", cost, Box::new(move |_| Ok((kind, 0)))));
        }
        last
    }

    /// Live events from now on, and the text the current model call streamed before them.
    pub fn subscribe(&self) -> (Subscription, Partial) {
        self.outbox.subscribe()
    }

    /// End every attached client's stream (the conversation is gone).
    pub(super) fn close_subscriptions(&self) {
        self.outbox.close();
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

    /// Publish an event that is not stored (deltas, progress, state). Over the inbox's bound
    /// deltas are joined and tool output counted rather than queued (see `inbox.rs`).
    pub fn emit_transient(&self, turn_id: &str, kind: Kind) {
        self.inbox.push_transient(turn_id, kind);
    }

    /// Queue an event (built by `make` inside the transaction) to be stored, then published;
    /// the receiver gets the outcome. Events are stored and published in queue order.
    pub fn queue_durable(&self, turn_id: &str, make: PersistFn) -> PendingWrite {
        self.queue_durable_sized(turn_id, 0, make)
    }

    /// [`LiveSession::queue_durable`] for an event carrying about `bytes` of text.
    pub fn queue_durable_sized(
        &self,
        turn_id: &str,
        bytes: usize,
        make: PersistFn,
    ) -> PendingWrite {
        let (reply, answer) = oneshot::channel();
        self.inbox.push(
            Emit::Durable {
                turn_id: turn_id.to_string(),
                make,
                reply,
            },
            bytes,
        );
        PendingWrite(answer)
    }

    /// Wait until the publisher has room: a turn calls this before queuing more, so a busy
    /// store slows the turn instead of growing the queue.
    pub async fn room(&self) {
        self.inbox.room().await;
    }

    /// Bytes queued for the publisher now.
    pub fn queued_bytes(&self) -> usize {
        self.inbox.bytes()
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

    /// Mark a turn as running; its token is cancelled by [`LiveSession::interrupt`], and by
    /// `stop` (a token of the turn's own submitter, which may have been cancelled before the turn
    /// began).
    pub fn begin_turn(&self, stop: Option<&CancellationToken>) -> CancellationToken {
        let token = stop.map_or_else(CancellationToken::new, CancellationToken::child_token);
        if let Ok(mut running) = self.running.lock() {
            running.cancel = Some(token.clone());
            running.interrupted_by = running.ending.clone();
            if running.ending.is_some() {
                token.cancel();
            }
        }
        token
    }

    /// The conversation is going (`why`): interrupt the running turn, and every turn queued
    /// behind it as it begins; steered input is refused from now on.
    pub fn end_for(&self, why: &str) {
        if let Ok(mut running) = self.running.lock() {
            running.ending.get_or_insert_with(|| why.to_string());
        }
        self.interrupt_for(why);
    }

    /// Who interrupted the running turn ("user" unless the daemon or a delete did).
    pub fn interrupted_by(&self) -> String {
        self.running
            .lock()
            .ok()
            .and_then(|r| r.interrupted_by.clone())
            .unwrap_or_else(|| "user".into())
    }

    /// The turn is over; input steered into it too late to be taken goes back to its sender
    /// when it asked for that ([`LiveSession::steer_or_return`]); the rest is returned (to run
    /// next).
    pub fn end_turn(&self) -> Vec<String> {
        let late = match self.running.lock() {
            Ok(mut running) => {
                running.cancel = None;
                std::mem::take(&mut running.steer)
            }
            Err(_) => Vec::new(),
        };
        let mut unclaimed = Vec::new();
        for steered in late {
            match steered.back {
                Some(back) => {
                    if let Err(text) = back.send(steered.text) {
                        // The sender is gone: run it like any late input.
                        unclaimed.push(text);
                    }
                }
                None => unclaimed.push(steered.text),
            }
        }
        unclaimed
    }

    pub fn is_running(&self) -> bool {
        self.running.lock().is_ok_and(|r| r.cancel.is_some())
    }

    /// Interrupt the running turn; false when none runs.
    pub fn interrupt(&self) -> bool {
        self.interrupt_for("user")
    }

    /// Interrupt the running turn, saying why (stored in its `turn_interrupted` event), and stop
    /// the conversation's background work; false when neither was running.
    pub fn interrupt_for(&self, by: &str) -> bool {
        match self.running.lock() {
            Ok(mut running) => {
                let background = running
                    .background
                    .take()
                    .filter(|token| !token.is_cancelled());
                if let Some(token) = &background {
                    token.cancel();
                }
                let Some(token) = running.cancel.clone() else {
                    return background.is_some();
                };
                running.interrupted_by.get_or_insert_with(|| by.to_string());
                token.cancel();
                true
            }
            Err(_) => false,
        }
    }

    /// A token for work the conversation runs in the background (delegated subagents),
    /// cancelled by the next interrupt of the conversation (a user's stop, a delete, the daemon
    /// stopping). Already cancelled when the conversation is going.
    pub fn background_work(&self) -> CancellationToken {
        let Ok(mut running) = self.running.lock() else {
            let token = CancellationToken::new();
            token.cancel();
            return token;
        };
        let ending = running.ending.is_some();
        let token = running
            .background
            .get_or_insert_with(CancellationToken::new)
            .child_token();
        if ending {
            token.cancel();
        }
        token
    }

    /// Hand `text` to the running turn, which takes it at its next step; `text` back when no
    /// turn runs or [`STEER_MAX`] inputs already wait for it.
    pub fn steer(&self, text: String) -> Result<(), String> {
        self.push_steered(Steered { text, back: None })
    }

    /// Like [`LiveSession::steer`], for a sender that answers late input itself: the receiver
    /// gets the text back if the turn ends without taking it, and closes once the turn took it.
    pub fn steer_or_return(&self, text: String) -> Result<oneshot::Receiver<String>, String> {
        let (back, returned) = oneshot::channel();
        self.push_steered(Steered {
            text,
            back: Some(back),
        })?;
        Ok(returned)
    }

    fn push_steered(&self, steered: Steered) -> Result<(), String> {
        match self.running.lock() {
            Ok(mut running)
                if running.cancel.is_some()
                    && running.ending.is_none()
                    && running.steer.len() < STEER_MAX =>
            {
                running.steer.push(steered);
                Ok(())
            }
            _ => Err(steered.text),
        }
    }

    /// Input steered into the running turn since it last looked.
    pub fn take_steered(&self) -> Vec<String> {
        self.running
            .lock()
            .map(|mut r| std::mem::take(&mut r.steer))
            .unwrap_or_default()
            .into_iter()
            .map(|steered| steered.text)
            .collect()
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

    pub(super) fn unused(self: &Arc<Self>) -> bool {
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
