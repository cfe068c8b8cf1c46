//! Joining a session's stored events, the text being streamed, and its live events into one
//! stream for an attaching client: every event once, in seq order, with no gap. The caller
//! subscribes (taking the partial-text snapshot) before it reads the store, so the live receiver
//! holds everything the store read can miss; the joiner drops what was already sent.

use hermes_proto::pb::{self, session_event::Kind};

use super::Partial;

/// What one attaching client has been sent so far.
#[derive(Debug)]
pub struct Joiner {
    session_id: String,
    last_sent: u64,
}

impl Joiner {
    /// A client that has seen everything up to `since_seq`.
    pub fn new(session_id: &str, since_seq: u64) -> Self {
        Self {
            session_id: session_id.to_string(),
            last_sent: since_seq,
        }
    }

    pub fn last_sent(&self) -> u64 {
        self.last_sent
    }

    /// A stored or live event, unless the client has it already.
    pub fn next(&mut self, event: pb::SessionEvent) -> Option<pb::SessionEvent> {
        if event.seq <= self.last_sent {
            return None;
        }
        self.last_sent = event.seq;
        Some(event)
    }

    /// After the stored events: the text streamed so far that the client has not seen, as one
    /// delta carrying the seq of the last delta it covers.
    pub fn partial(&mut self, partial: &Partial) -> Option<pb::SessionEvent> {
        let (text, seq) = partial.after(self.last_sent)?;
        self.last_sent = seq;
        Some(pb::SessionEvent {
            session_id: self.session_id.clone(),
            seq,
            turn_id: partial.turn_id.clone(),
            kind: Some(Kind::TextDelta(pb::TextDelta { text })),
            ..pb::SessionEvent::default()
        })
    }

    /// The marker between replay and live events.
    pub fn replay_done(&self) -> pb::SessionEvent {
        pb::SessionEvent {
            session_id: self.session_id.clone(),
            seq: self.last_sent,
            kind: Some(Kind::ReplayDone(pb::ReplayDone {
                last_seq: self.last_sent,
            })),
            ..pb::SessionEvent::default()
        }
    }
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
