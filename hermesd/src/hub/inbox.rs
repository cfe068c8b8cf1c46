//! A live session's inbound queue: what its turn and its clients hand to the publisher, in
//! order, bounded in bytes. Durable events are never dropped; the turn waits for room
//! ([`Inbox::room`]) before queuing more. Transient events over the bound are folded instead of
//! queued: text and reasoning deltas join the delta before them (the text is the model's
//! answer, which the turn holds anyway), and tool output past the bound is counted, not kept —
//! the tool's result has it.

use std::{collections::VecDeque, sync::Mutex};

use hermes_proto::pb::session_event::Kind;
use tokio::sync::{Notify, oneshot};

use super::publisher::PersistFn;
use crate::store::StoreError;

/// Bytes of queued events past which the turn waits and transients are folded.
pub const INBOX_BUDGET: usize = 1 << 20;

/// A queued item's fixed cost, beside its text.
const OVERHEAD: usize = 64;

pub(super) type Reply = oneshot::Sender<Result<i64, StoreError>>;

pub(super) enum Emit {
    Transient {
        turn_id: String,
        kind: Kind,
        /// Bytes of tool output dropped after this chunk (shown as a note).
        elided: usize,
    },
    Durable {
        turn_id: String,
        make: PersistFn,
        reply: Reply,
    },
    /// The conversation goes on in a new segment (compression): later events are stored there.
    Segment(String),
}

struct Queue {
    items: VecDeque<(Emit, usize)>,
    bytes: usize,
    closed: bool,
}

/// The queue between a live session's producers and its publisher.
pub(super) struct Inbox {
    queue: Mutex<Queue>,
    /// The publisher waits here for items.
    ready: Notify,
    /// Producers wait here for room.
    drained: Notify,
    budget: usize,
}

/// What a transient event costs in the queue.
fn transient_cost(kind: &Kind) -> usize {
    OVERHEAD
        + match kind {
            Kind::TextDelta(d) => d.text.len(),
            Kind::ReasoningDelta(d) => d.text.len(),
            Kind::ToolOutput(o) => o.chunk.len(),
            Kind::Notice(n) => n.text.len(),
            _ => 0,
        }
}

impl Inbox {
    pub(super) fn new(budget: usize) -> Self {
        Self {
            queue: Mutex::new(Queue {
                items: VecDeque::new(),
                bytes: 0,
                closed: false,
            }),
            ready: Notify::new(),
            drained: Notify::new(),
            budget,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        match self.queue.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Queue a durable event (or a segment switch): never refused, never dropped.
    pub(super) fn push(&self, emit: Emit, cost: usize) {
        let mut queue = self.lock();
        let cost = cost + OVERHEAD;
        queue.bytes += cost;
        queue.items.push_back((emit, cost));
        drop(queue);
        self.ready.notify_one();
    }

    /// Queue a transient event, folding it into the queue's tail when over the budget.
    pub(super) fn push_transient(&self, turn_id: &str, kind: Kind) {
        let cost = transient_cost(&kind);
        let mut queue = self.lock();
        if queue.bytes + cost > self.budget && fold(&mut queue, turn_id, &kind) {
            return;
        }
        let over = queue.bytes + cost > self.budget;
        let (emit, cost) = match kind {
            // Past the bound, tool output is counted, not kept: the item costs only itself.
            Kind::ToolOutput(output) if over => (
                Emit::Transient {
                    turn_id: turn_id.to_string(),
                    elided: output.chunk.len(),
                    kind: Kind::ToolOutput(hermes_proto::pb::ToolOutput {
                        call_id: output.call_id,
                        chunk: String::new(),
                    }),
                },
                OVERHEAD,
            ),
            kind => (
                Emit::Transient {
                    turn_id: turn_id.to_string(),
                    kind,
                    elided: 0,
                },
                cost,
            ),
        };
        queue.bytes += cost;
        queue.items.push_back((emit, cost));
        drop(queue);
        self.ready.notify_one();
    }

    /// Bytes queued now.
    pub(super) fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Wait until the queue is within its budget (or closed).
    pub(super) async fn room(&self) {
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            {
                let queue = self.lock();
                if queue.bytes <= self.budget || queue.closed {
                    return;
                }
            }
            drained.await;
        }
    }

    /// The next item without waiting.
    pub(super) fn try_pop(&self) -> Option<Emit> {
        let mut queue = self.lock();
        let (emit, cost) = queue.items.pop_front()?;
        queue.bytes -= cost;
        let within = queue.bytes <= self.budget;
        drop(queue);
        if within {
            self.drained.notify_waiters();
        }
        Some(emit)
    }

    /// The next item; `None` once closed and empty.
    pub(super) async fn pop(&self) -> Option<Emit> {
        loop {
            let ready = self.ready.notified();
            tokio::pin!(ready);
            ready.as_mut().enable();
            if let Some(emit) = self.try_pop() {
                return Some(emit);
            }
            if self.lock().closed {
                return None;
            }
            ready.await;
        }
    }

    /// No more items: the publisher ends once it has taken what is queued.
    pub(super) fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_one();
        self.drained.notify_waiters();
    }
}

/// Fold a transient event into the queue's tail; false when it cannot be folded (it is
/// queued then, over the budget: small events, or a delta with no delta to join).
fn fold(queue: &mut Queue, turn_id: &str, kind: &Kind) -> bool {
    let Some((
        Emit::Transient {
            turn_id: tail_turn,
            kind: tail,
            elided,
        },
        cost,
    )) = queue.items.back_mut()
    else {
        return false;
    };
    if tail_turn != turn_id {
        return false;
    }
    match (tail, kind) {
        (Kind::TextDelta(tail), Kind::TextDelta(more)) => {
            tail.text.push_str(&more.text);
            *cost += more.text.len();
            queue.bytes += more.text.len();
            true
        }
        (Kind::ReasoningDelta(tail), Kind::ReasoningDelta(more)) => {
            tail.text.push_str(&more.text);
            *cost += more.text.len();
            queue.bytes += more.text.len();
            true
        }
        (Kind::ToolOutput(tail), Kind::ToolOutput(more)) if tail.call_id == more.call_id => {
            *elided += more.chunk.len();
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use hermes_proto::pb;

    use super::*;

    fn delta(text: &str) -> Kind {
        Kind::TextDelta(pb::TextDelta { text: text.into() })
    }

    fn output(chunk: &str) -> Kind {
        Kind::ToolOutput(pb::ToolOutput {
            call_id: "c1".into(),
            chunk: chunk.into(),
        })
    }

    fn drain(inbox: &Inbox) -> Vec<(Kind, usize)> {
        let mut out = Vec::new();
        while let Some(emit) = inbox.try_pop() {
            if let Emit::Transient { kind, elided, .. } = emit {
                out.push((kind, elided));
            }
        }
        out
    }

    #[test]
    fn under_the_budget_every_event_is_queued_as_it_came() {
        let inbox = Inbox::new(10_000);
        inbox.push_transient("t", delta("a"));
        inbox.push_transient("t", delta("b"));
        assert_eq!(drain(&inbox).len(), 2);
        assert_eq!(inbox.bytes(), 0);
    }

    #[test]
    fn over_the_budget_deltas_join_the_tail_and_nothing_is_lost() {
        let inbox = Inbox::new(200);
        let mut sent = String::new();
        for i in 0..10_000 {
            let piece = format!("w{i} ");
            sent.push_str(&piece);
            inbox.push_transient("t", delta(&piece));
        }
        let got = drain(&inbox);
        assert!(got.len() < 10, "folded into a few items: {}", got.len());
        let text: String = got
            .iter()
            .map(|(k, _)| match k {
                Kind::TextDelta(d) => d.text.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(text, sent);
    }

    #[test]
    fn tool_output_past_the_budget_is_counted_not_kept() {
        let inbox = Inbox::new(100_000);
        let chunk = "x".repeat(64 * 1024);
        for _ in 0..1_000 {
            inbox.push_transient("t", output(&chunk));
        }
        assert!(
            inbox.bytes() <= 100_000 + 64 * 1024 + OVERHEAD,
            "bounded: {} bytes queued",
            inbox.bytes()
        );
        let got = drain(&inbox);
        let kept: usize = got
            .iter()
            .map(|(k, _)| match k {
                Kind::ToolOutput(o) => o.chunk.len(),
                _ => 0,
            })
            .sum();
        let elided: usize = got.iter().map(|(_, e)| e).sum();
        assert_eq!(
            kept + elided,
            1_000 * chunk.len(),
            "every byte kept or counted"
        );
    }

    #[tokio::test]
    async fn a_producer_waits_for_room_until_the_publisher_drains() {
        let inbox = std::sync::Arc::new(Inbox::new(100));
        let (reply, _answer) = oneshot::channel();
        inbox.push(
            Emit::Durable {
                turn_id: "t".into(),
                make: Box::new(|_| Ok((delta(""), 0))),
                reply,
            },
            1_000,
        );
        let waiting = {
            let inbox = std::sync::Arc::clone(&inbox);
            tokio::spawn(async move { inbox.room().await })
        };
        tokio::task::yield_now().await;
        assert!(
            !waiting.is_finished(),
            "over the budget: the producer waits"
        );
        assert!(inbox.try_pop().is_some());
        waiting.await.unwrap();
        assert_eq!(inbox.bytes(), 0);
    }
}
