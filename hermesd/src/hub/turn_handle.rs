//! What a running turn may do to its live session, and nothing more: publish and store events,
//! wait for room in the queue, ask the attached clients and wait for an answer, take steered
//! input, say it is waiting for an answer, move to a new segment, keep its per-session memos.
//! It cannot subscribe, answer its own questions, steer or interrupt itself, count clients in
//! or out, or begin and end turns: those belong to the clients and to whoever runs the turn.

use std::sync::Arc;

use hermes_proto::pb::session_event::Kind;
use tokio::sync::oneshot;

use super::{Answer, LiveSession, PendingWrite, PersistFn};
use crate::store::StoreError;

/// A turn's handle on its live session.
#[derive(Clone)]
pub struct TurnHandle(Arc<LiveSession>);

impl std::fmt::Debug for TurnHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TurnHandle").field(&self.0.id()).finish()
    }
}

impl TurnHandle {
    pub fn new(live: Arc<LiveSession>) -> Self {
        Self(live)
    }

    /// The conversation's newest segment.
    pub fn id(&self) -> String {
        self.0.id()
    }

    /// The conversation's key.
    pub fn conversation(&self) -> &str {
        self.0.conversation()
    }

    /// Publish an event that is not stored.
    pub fn emit_transient(&self, turn_id: &str, kind: Kind) {
        self.0.emit_transient(turn_id, kind);
    }

    /// Queue an event carrying about `bytes` of text to be stored, then published.
    pub fn queue_durable_sized(
        &self,
        turn_id: &str,
        bytes: usize,
        make: PersistFn,
    ) -> PendingWrite {
        self.0.queue_durable_sized(turn_id, bytes, make)
    }

    /// Queue an event to be stored, then published.
    pub fn queue_durable(&self, turn_id: &str, make: PersistFn) -> PendingWrite {
        self.0.queue_durable(turn_id, make)
    }

    /// Store an event built in the transaction, then publish it.
    pub async fn emit_durable_with(
        &self,
        turn_id: &str,
        make: PersistFn,
    ) -> Result<i64, StoreError> {
        self.0.emit_durable_with(turn_id, make).await
    }

    /// Store and publish an event.
    pub async fn emit_durable(&self, turn_id: &str, kind: Kind) -> Result<(), StoreError> {
        self.0.emit_durable(turn_id, kind).await
    }

    /// Wait until the publisher's queue is within its bound.
    pub async fn room(&self) {
        self.0.room().await;
    }

    /// Input steered into the turn since it last looked.
    pub fn take_steered(&self) -> Vec<String> {
        self.0.take_steered()
    }

    /// Who interrupted the turn.
    pub fn interrupted_by(&self) -> String {
        self.0.interrupted_by()
    }

    /// Interactive clients attached now (who could answer a question).
    pub fn interactive_clients(&self) -> usize {
        self.0.interactive_clients()
    }

    /// Register a question before publishing it; the receiver gets the first answer.
    pub fn ask(&self, question_id: &str) -> oneshot::Receiver<Answer> {
        self.0.ask(question_id)
    }

    /// The turn is waiting for an answer (or running again): tell the clients.
    pub fn set_state(&self, turn_id: &str, state: hermes_proto::pb::SessionState) {
        self.0.set_state(turn_id, state);
    }

    /// Forget a question that timed out or was cancelled.
    pub fn forget(&self, question_id: &str) {
        self.0.forget(question_id);
    }

    /// Whether the user approved danger pattern `key` for this session.
    pub fn approved_for_session(&self, key: &str) -> bool {
        self.0
            .approved_keys
            .lock()
            .is_ok_and(|keys| keys.contains(key))
    }

    /// Remember that the user approved danger pattern `key` for this session.
    pub fn approve_for_session(&self, key: &str) {
        if let Ok(mut keys) = self.0.approved_keys.lock() {
            keys.insert(key.to_string());
        }
    }

    /// The conversation goes on in segment `id` (after compression).
    pub fn continue_in(&self, id: &str) {
        self.0.continue_in(id);
    }

    /// Run `f` on this session's value of type `T`.
    pub fn memo<T: Default + Send + 'static, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.0.memo(f)
    }
}
