//! Where a live session's published events go: one queue per attached client, bounded in bytes,
//! and the text streamed so far by the current model call (for a client attaching mid-answer).
//! A client that falls more than [`CLIENT_BUDGET`] bytes behind is cut off and told it lagged:
//! its queue is freed at once, and it re-attaches from the last seq it got (the store has every
//! durable event). A slow client never costs more than its budget, and never slows the others.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex, Weak},
};

use hermes_proto::pb::{self, session_event::Kind};
use prost::Message;
use tokio::sync::Notify;

/// Bytes of events a client may fall behind by before it is cut off as lagged.
pub const CLIENT_BUDGET: usize = 4 << 20;

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

    pub(super) fn push(&mut self, seq: u64, delta: &str) {
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

struct Backlog {
    events: VecDeque<(Arc<pb::SessionEvent>, usize)>,
    bytes: usize,
    lagged: bool,
    closed: bool,
}

struct ClientQueue {
    backlog: Mutex<Backlog>,
    ready: Notify,
}

impl ClientQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Backlog> {
        match self.backlog.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Queue `event`; false when the client is cut off (now or before).
    fn offer(&self, event: &Arc<pb::SessionEvent>, cost: usize, budget: usize) -> bool {
        let mut backlog = self.lock();
        if backlog.lagged || backlog.closed {
            return false;
        }
        // An event larger than the whole budget still goes to a client that has caught up.
        if backlog.bytes > 0 && backlog.bytes + cost > budget {
            backlog.lagged = true;
            backlog.events = VecDeque::new();
            backlog.bytes = 0;
        } else {
            backlog.bytes += cost;
            backlog.events.push_back((Arc::clone(event), cost));
        }
        drop(backlog);
        self.ready.notify_one();
        true
    }

    fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_one();
    }
}

/// What a subscribed client gets next.
#[derive(Debug)]
pub enum Received {
    Event(Arc<pb::SessionEvent>),
    /// It fell too far behind and was cut off; it must re-attach from its last seq.
    Lagged,
    /// The live session is gone (evicted, deleted or the daemon stopping).
    Closed,
}

/// One client's subscription; dropping it unsubscribes.
pub struct Subscription {
    queue: Arc<ClientQueue>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription").finish_non_exhaustive()
    }
}

impl Subscription {
    pub async fn recv(&mut self) -> Received {
        loop {
            let ready = self.queue.ready.notified();
            tokio::pin!(ready);
            ready.as_mut().enable();
            {
                let mut backlog = self.queue.lock();
                if let Some((event, cost)) = backlog.events.pop_front() {
                    backlog.bytes = backlog.bytes.saturating_sub(cost);
                    return Received::Event(event);
                }
                if backlog.lagged {
                    return Received::Lagged;
                }
                if backlog.closed {
                    return Received::Closed;
                }
            }
            ready.await;
        }
    }
}

impl Subscription {
    /// The next queued event, without waiting.
    pub fn try_recv(&mut self) -> Option<Arc<pb::SessionEvent>> {
        let mut backlog = self.queue.lock();
        let (event, cost) = backlog.events.pop_front()?;
        backlog.bytes = backlog.bytes.saturating_sub(cost);
        Some(event)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.queue.close();
    }
}

fn event_cost(event: &pb::SessionEvent) -> usize {
    64 + event.encoded_len()
}

struct Fan {
    partial: Partial,
    clients: Vec<Weak<ClientQueue>>,
}

/// A live session's outlet: the clients' queues and the partial text beside them.
pub struct Outbox {
    fan: Mutex<Fan>,
    budget: usize,
}

impl Outbox {
    pub(super) fn new(budget: usize) -> Self {
        Self {
            fan: Mutex::new(Fan {
                partial: Partial::default(),
                clients: Vec::new(),
            }),
            budget,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Fan> {
        match self.fan.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Publish under the partial-text lock, so a subscriber's snapshot and its queue never
    /// overlap or leave a gap.
    pub(super) fn send(&self, event: pb::SessionEvent) {
        let mut fan = self.lock();
        match &event.kind {
            Some(Kind::TextDelta(delta)) => {
                if fan.partial.turn_id != event.turn_id {
                    fan.partial.clear();
                    fan.partial.turn_id.clone_from(&event.turn_id);
                }
                fan.partial.push(event.seq, &delta.text);
            }
            Some(
                Kind::AssistantMessage(_)
                | Kind::TurnFinished(_)
                | Kind::TurnFailed(_)
                | Kind::TurnInterrupted(_),
            ) => fan.partial.clear(),
            Some(Kind::Notice(notice)) if notice.kind == "stream_restarted" => fan.partial.clear(),
            _ => {}
        }
        if fan.clients.is_empty() {
            return;
        }
        let cost = event_cost(&event);
        let event = Arc::new(event);
        let budget = self.budget;
        fan.clients.retain(|client| {
            client
                .upgrade()
                .is_some_and(|queue| queue.offer(&event, cost, budget))
        });
    }

    /// Live events from now on, and the partial text published before them.
    pub fn subscribe(&self) -> (Subscription, Partial) {
        let queue = Arc::new(ClientQueue {
            backlog: Mutex::new(Backlog {
                events: VecDeque::new(),
                bytes: 0,
                lagged: false,
                closed: false,
            }),
            ready: Notify::new(),
        });
        let mut fan = self.lock();
        fan.clients.retain(|c| c.strong_count() > 0);
        fan.clients.push(Arc::downgrade(&queue));
        (Subscription { queue }, fan.partial.clone())
    }

    /// Clients subscribed now.
    pub fn subscribers(&self) -> usize {
        let mut fan = self.lock();
        fan.clients.retain(|c| c.strong_count() > 0);
        fan.clients.len()
    }

    /// Tell every subscriber the session is gone.
    pub(super) fn close(&self) {
        let mut fan = self.lock();
        for client in fan.clients.drain(..) {
            if let Some(queue) = client.upgrade() {
                queue.close();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(seq: u64, bytes: usize) -> pb::SessionEvent {
        pb::SessionEvent {
            seq,
            kind: Some(Kind::ToolOutput(pb::ToolOutput {
                call_id: "c".into(),
                chunk: "x".repeat(bytes),
            })),
            ..pb::SessionEvent::default()
        }
    }

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

    #[tokio::test]
    async fn a_client_past_its_budget_is_cut_off_and_told_while_others_go_on() {
        let outbox = Outbox::new(1 << 20);
        let (mut slow, _) = outbox.subscribe();
        let (mut quick, _) = outbox.subscribe();
        for seq in 1..=100 {
            outbox.send(output(seq, 64 * 1024));
            match quick.recv().await {
                Received::Event(e) => assert_eq!(e.seq, seq),
                other => panic!("the quick client lost event {seq}: {other:?}"),
            }
        }
        assert!(matches!(slow.recv().await, Received::Lagged));
        assert_eq!(outbox.subscribers(), 1, "the lagged client is forgotten");
        drop(quick);
        assert_eq!(outbox.subscribers(), 0);
    }

    #[tokio::test]
    async fn an_event_larger_than_the_budget_still_reaches_a_client_that_caught_up() {
        let outbox = Outbox::new(1 << 20);
        let (mut client, _) = outbox.subscribe();
        outbox.send(output(1, 2 << 20));
        assert!(matches!(client.recv().await, Received::Event(e) if e.seq == 1));
    }

    #[tokio::test]
    async fn closing_ends_every_subscription() {
        let outbox = Outbox::new(1 << 20);
        let (mut client, _) = outbox.subscribe();
        outbox.send(output(1, 10));
        outbox.close();
        assert!(matches!(client.recv().await, Received::Event(_)));
        assert!(matches!(client.recv().await, Received::Closed));
    }
}
