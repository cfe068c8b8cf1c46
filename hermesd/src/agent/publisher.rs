//! The publisher of a live session: one task that numbers the session's events in arrival
//! order, stores the durable ones (consecutive ones in one transaction) before anyone sees them,
//! and broadcasts every event in order. It also keeps the text streamed so far by the turn's
//! current model call, so a client attaching mid-answer gets it once, then the rest live.

use std::sync::{Arc, Mutex};

use hermes_proto::pb::{self, session_event::Kind};
use prost::Message;
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::store::{self, Store, StoreError};

/// Live events a slow subscriber may fall behind by before it is told it lagged.
const SUBSCRIBER_BUFFER: usize = 1024;

/// Builds a durable event inside the write transaction (e.g. after inserting the message it
/// refers to) and returns it with a value for the caller.
pub type PersistFn =
    Box<dyn FnOnce(&rusqlite::Transaction<'_>) -> Result<(Kind, i64), StoreError> + Send>;

pub(super) enum Emit {
    Transient {
        turn_id: String,
        kind: Kind,
    },
    Durable {
        turn_id: String,
        make: PersistFn,
        reply: oneshot::Sender<Result<i64, StoreError>>,
    },
    /// The conversation goes on in a new segment (compression): later events are stored there.
    Segment(String),
}

/// A queued durable event; dropping it does not cancel the write.
#[derive(Debug)]
pub struct PendingWrite(pub(super) oneshot::Receiver<Result<i64, StoreError>>);

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

/// Text deltas published since the last complete message: what a late client must be shown.
#[derive(Debug, Default, Clone)]
pub struct Partial {
    pub turn_id: String,
    text: String,
    /// `(seq, end of its text in text)` for each delta, in order.
    ends: Vec<(u64, usize)>,
}

impl Partial {
    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    fn push(&mut self, seq: u64, delta: &str) {
        self.text.push_str(delta);
        self.ends.push((seq, self.text.len()));
    }

    /// The text of the deltas after `seq`, with the seq of the last one; `None` when there is
    /// nothing after it.
    pub fn after(&self, seq: u64) -> Option<(String, u64)> {
        let &(last, _) = self.ends.last()?;
        if last <= seq {
            return None;
        }
        let start = self
            .ends
            .iter()
            .rev()
            .find(|(s, _)| *s <= seq)
            .map_or(0, |(_, end)| *end);
        Some((self.text[start..].to_string(), last))
    }
}

/// Where a session's events go: the broadcast channel, and the partial text beside it.
pub struct Outbox {
    events: broadcast::Sender<Arc<pb::SessionEvent>>,
    partial: Mutex<Partial>,
}

impl Outbox {
    pub(super) fn new() -> Arc<Self> {
        let (events, _) = broadcast::channel(SUBSCRIBER_BUFFER);
        Arc::new(Self {
            events,
            partial: Mutex::new(Partial::default()),
        })
    }

    fn partial(&self) -> std::sync::MutexGuard<'_, Partial> {
        match self.partial.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Broadcast under the partial-text lock, so a subscriber's snapshot and its receiver never
    /// overlap or leave a gap.
    fn send(&self, event: pb::SessionEvent) {
        let mut partial = self.partial();
        match &event.kind {
            Some(Kind::TextDelta(delta)) => {
                if partial.turn_id != event.turn_id {
                    partial.clear();
                    partial.turn_id.clone_from(&event.turn_id);
                }
                partial.push(event.seq, &delta.text);
            }
            Some(
                Kind::AssistantMessage(_)
                | Kind::TurnFinished(_)
                | Kind::TurnFailed(_)
                | Kind::TurnInterrupted(_),
            ) => partial.clear(),
            Some(Kind::Notice(notice)) if notice.kind == "stream_restarted" => partial.clear(),
            _ => {}
        }
        let _ = self.events.send(Arc::new(event));
    }

    /// Live events from now on, and the partial text published before them.
    pub fn subscribe(&self) -> (broadcast::Receiver<Arc<pb::SessionEvent>>, Partial) {
        let partial = self.partial();
        (self.events.subscribe(), partial.clone())
    }

    pub fn subscribers(&self) -> usize {
        self.events.receiver_count()
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
pub(super) async fn publish(
    mut session_id: String,
    mut last_seq: u64,
    store: Store,
    outbox: Arc<Outbox>,
    mut inbox: mpsc::UnboundedReceiver<Emit>,
) {
    while let Some(first) = inbox.recv().await {
        let mut items: Vec<(u64, String, PersistFn)> = Vec::new();
        let mut replies: Vec<Reply> = Vec::new();
        let mut transient_after = None;
        let mut segment_after = None;
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
                Emit::Segment(id) => segment_after = Some(id),
            }
        }
        if !items.is_empty() {
            store_batch(&session_id, &store, &outbox, items, replies).await;
        }
        if let Some((turn_id, kind)) = transient_after {
            last_seq += 1;
            outbox.send(stamp(&session_id, last_seq, turn_id, kind));
        }
        if let Some(id) = segment_after {
            session_id = id;
        }
    }
}

async fn store_batch(
    session_id: &str,
    store: &Store,
    outbox: &Outbox,
    items: Vec<(u64, String, PersistFn)>,
    replies: Vec<Reply>,
) {
    let id = session_id.to_string();
    let stored = store
        .write(move |tx| {
            let mut out = Vec::with_capacity(items.len());
            for (seq, turn_id, make) in items {
                let (kind, value) = make(tx)?;
                let name = hermes_proto::events::kind_name(&kind);
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
                outbox.send(event);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_text_after_a_seq_is_exactly_the_later_deltas() {
        let mut partial = Partial::default();
        assert_eq!(partial.after(0), None);
        partial.push(10, "Hel");
        partial.push(11, "lo ");
        partial.push(13, "world");
        assert_eq!(partial.after(0), Some(("Hello world".into(), 13)));
        assert_eq!(partial.after(10), Some(("lo world".into(), 13)));
        assert_eq!(partial.after(12), Some(("world".into(), 13)));
        assert_eq!(partial.after(13), None);
        partial.clear();
        assert_eq!(partial.after(0), None);
    }
}
