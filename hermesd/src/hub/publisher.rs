//! The publisher of a live session: one task that numbers the session's events in arrival
//! order, stores the durable ones (consecutive ones in one transaction) before anyone sees them,
//! and hands every event, in order, to the clients' queues.
//!
//! Numbering is durable: the session's `seq_reserved` high-water mark is raised in the store
//! (in blocks of [`RESERVE_BLOCK`]) before any seq above it is handed out, stored or not, and a
//! restarted daemon numbers after it. A client that saw transient deltas before a restart never
//! sees a seq again with another event behind it.

use std::sync::Arc;

use hermes_proto::pb::{self, session_event::Kind};
use prost::Message;

use super::{
    fanout::Outbox,
    inbox::{Emit, Inbox, Reply},
};
use crate::store::{self, Store, StoreError};

/// Builds a durable event inside the write transaction (e.g. after inserting the message it
/// refers to) and returns it with a value for the caller.
pub type PersistFn =
    Box<dyn FnOnce(&rusqlite::Transaction<'_>) -> Result<(Kind, i64), StoreError> + Send>;

/// Seqs reserved at a time: one small write per this many events.
pub const RESERVE_BLOCK: u64 = 1024;

/// Durable events stored in one transaction, at most.
const MAX_BATCH: usize = 64;

/// The session's event numbering.
#[derive(Debug, Clone, Copy)]
pub(super) struct Numbering {
    /// The last seq handed out.
    pub last: u64,
    /// Seqs up to this one are reserved in the store.
    pub reserved: u64,
}

impl Numbering {
    /// Numbering after everything `row` ever handed out.
    pub(super) fn after(row: &store::SessionRow) -> Self {
        let last = row.seq_floor();
        Self {
            last,
            reserved: last,
        }
    }

    fn next(&mut self) -> u64 {
        self.last += 1;
        self.last
    }

    /// The mark to store before seqs up to `self.last` may be published, if it must rise.
    fn needed(&self) -> Option<u64> {
        (self.last > self.reserved).then_some(self.last + RESERVE_BLOCK)
    }
}

/// A queued durable event; dropping it does not cancel the write.
#[derive(Debug)]
pub struct PendingWrite(pub(super) tokio::sync::oneshot::Receiver<Result<i64, StoreError>>);

impl PendingWrite {
    /// Wait until it is stored (or failed).
    pub async fn wait(self) -> Result<i64, StoreError> {
        self.0
            .await
            .map_err(|_| StoreError::Task("the session's publisher stopped".into()))?
    }

    /// `Some` once it is stored or failed, without waiting.
    pub fn poll_done(&mut self) -> Option<Result<i64, StoreError>> {
        use tokio::sync::oneshot::error::TryRecvError;
        match self.0.try_recv() {
            Ok(result) => Some(result),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Closed) => Some(Err(StoreError::Task(
                "the session's publisher stopped".into(),
            ))),
        }
    }
}

fn now() -> prost_types::Timestamp {
    let now = chrono::Utc::now();
    prost_types::Timestamp {
        seconds: now.timestamp(),
        nanos: now.timestamp_subsec_nanos() as i32,
    }
}

fn stamp(session_id: &str, seq: u64, turn_id: String, kind: Kind) -> pb::SessionEvent {
    pb::SessionEvent {
        session_id: session_id.to_string(),
        seq,
        turn_id,
        at: Some(now()),
        kind: Some(kind),
    }
}

/// Tool output dropped from a live view, said where it was dropped.
fn with_elided(kind: Kind, elided: usize) -> Kind {
    match kind {
        Kind::ToolOutput(mut output) if elided > 0 => {
            output.chunk.push_str(&format!(
                "\n[… {elided} bytes of output not shown live; the tool's result has them]\n"
            ));
            Kind::ToolOutput(output)
        }
        kind => kind,
    }
}

/// The publisher: numbers events in arrival order, stores durable ones (consecutive ones in one
/// transaction), then publishes them in order. Ends when the inbox is closed and drained.
pub(super) async fn publish(
    mut session_id: String,
    mut numbering: Numbering,
    store: Store,
    outbox: Arc<Outbox>,
    inbox: Arc<Inbox>,
) {
    while let Some(first) = inbox.pop().await {
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
                    items.push((numbering.next(), turn_id, make));
                    replies.push(reply);
                    if items.len() < MAX_BATCH {
                        next = inbox.try_pop();
                    }
                }
                Emit::Transient {
                    turn_id,
                    kind,
                    elided,
                } => transient_after = Some((turn_id, with_elided(kind, elided))),
                Emit::Segment(id) => segment_after = Some(id),
            }
        }
        if !items.is_empty() {
            let reserve = numbering.needed();
            if store_batch(&session_id, &store, &outbox, items, replies, reserve).await {
                numbering.reserved = reserve.unwrap_or(numbering.reserved);
            }
        }
        if let Some((turn_id, kind)) = transient_after {
            let seq = numbering.next();
            if let Some(mark) = numbering.needed() {
                match reserve(&store, &session_id, mark).await {
                    Ok(()) => numbering.reserved = mark,
                    // The event is still shown; the store is failing, which the turn reports.
                    Err(e) => {
                        tracing::warn!(session = %session_id, error = %e, "cannot reserve event seqs")
                    }
                }
            }
            outbox.send(stamp(&session_id, seq, turn_id, kind));
        }
        if let Some(id) = segment_after {
            session_id = id;
            // The new segment's row copied the old one's mark when it was created; seqs handed
            // out since may be above it. Raise it before anything more is numbered there.
            let mark = numbering.reserved.max(numbering.last);
            if let Err(e) = reserve(&store, &session_id, mark).await {
                tracing::warn!(session = %session_id, error = %e, "cannot reserve event seqs");
            }
        }
    }
    outbox.close();
}

async fn reserve(store: &Store, session_id: &str, mark: u64) -> Result<(), StoreError> {
    let id = session_id.to_string();
    store
        .write(move |tx| store::reserve_seqs(tx, &id, mark))
        .await
}

/// Store a batch (raising the reservation to `reserve` in the same transaction), then publish
/// it; true when it was stored.
async fn store_batch(
    session_id: &str,
    store: &Store,
    outbox: &Outbox,
    items: Vec<(u64, String, PersistFn)>,
    replies: Vec<Reply>,
    reserve: Option<u64>,
) -> bool {
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
            if let Some(mark) = reserve {
                store::reserve_seqs(tx, &id, mark)?;
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
            true
        }
        Err(e) => {
            tracing::error!(session = %session_id, error = %e, "cannot store events");
            for reply in replies {
                let _ = reply.send(Err(StoreError::Task(format!("cannot store events: {e}"))));
            }
            false
        }
    }
}
