//! `Sessions.Attach`: the first frame is `Hello`; stored events after `since_seq` are replayed,
//! then live ones follow with no gap and no duplicate (live events are subscribed before the
//! replay is read, and those already replayed are skipped by seq). Frames the client sends —
//! input, interrupt, answers — act on the live session. Detaching never cancels a turn.

use std::{pin::Pin, sync::Arc, time::Duration};

use hermes_proto::pb::{self, client_frame, session_event::Kind};
use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::{Stream, wrappers::ReceiverStream};
use tonic::{Status, Streaming};

use super::convert;
use crate::{
    agent,
    hub::{self, Answer, LiveSession, Received, Subscription},
    state::DaemonState,
    store,
};

pub type EventStream = Pin<Box<dyn Stream<Item = Result<pb::SessionEvent, Status>> + Send>>;

/// How long a client has to send `Hello`.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Messages of a conversation without an event log that get events on its first attach.
const BACKFILL_MESSAGES: u32 = 50;
/// Events queued for one client's stream before the forwarder waits; beyond it, a client that
/// reads slowly costs its hub queue (bounded by `hub::CLIENT_BUDGET`), then is told it lagged.
const CLIENT_QUEUE: usize = 16;

/// Keeps a live session loaded while an attach uses it; releases it when the last user goes.
struct Lease {
    state: Arc<DaemonState>,
    live: Option<Arc<LiveSession>>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(live) = self.live.take() {
            self.state.runner.hub.release(live);
        }
    }
}

impl Lease {
    fn live(&self) -> Option<&Arc<LiveSession>> {
        self.live.as_ref()
    }
}

pub async fn attach(
    state: Arc<DaemonState>,
    mut inbound: Streaming<pb::ClientFrame>,
) -> Result<EventStream, Status> {
    let first = tokio::time::timeout(HELLO_TIMEOUT, inbound.message())
        .await
        .map_err(|_| Status::deadline_exceeded("no Hello within 10 s"))??;
    let Some(pb::ClientFrame {
        kind: Some(client_frame::Kind::Hello(hello)),
    }) = first
    else {
        return Err(Status::invalid_argument("the first frame must be Hello"));
    };
    let id = hello.session_id.trim().to_string();
    if id.is_empty() {
        return Err(Status::invalid_argument(
            "Hello needs a session id (create one first)",
        ));
    }
    let row = state
        .store
        .read(move |conn| store::resolve_conversation(conn, &id))
        .await
        .map_err(convert::status)?;
    // A delegated child answers to its parent: its clients watch, they do not steer.
    let read_only = hello.read_only || row.source == agent::SUBAGENT_SOURCE;
    let live = state.runner.hub.load(&row);
    if row.last_seq == 0 && row.message_count > 0 {
        // Messages without events (an imported conversation): announce the last ones once.
        let segment = row.id.clone();
        let recent = state
            .store
            .read(move |conn| store::recent_exchange_messages(conn, &segment, BACKFILL_MESSAGES))
            .await
            .map_err(convert::status)?;
        // Stored before the replay below reads the log, so this client gets them as backlog.
        if let Some(stored) = live.announce_history(recent) {
            stored.wait().await.map_err(convert::status)?;
        }
    }
    let (live_events, partial) = live.subscribe();
    let lease = Arc::new(Lease {
        state: Arc::clone(&state),
        live: Some(live),
    });
    let (out, stream) = mpsc::channel(CLIENT_QUEUE);
    tokio::spawn(forward(
        Arc::clone(&state),
        Arc::clone(&lease),
        row.id.clone(),
        hello.since_seq,
        hello.last_messages,
        (live_events, partial),
        out,
    ));
    let client = Some(hello.client_name)
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "client".into());
    tokio::spawn(read_frames(state, lease, inbound, read_only, client));
    Ok(Box::pin(ReceiverStream::new(stream)))
}

/// Replay stored events after `since_seq`, then live ones.
async fn forward(
    state: Arc<DaemonState>,
    lease: Arc<Lease>,
    session_id: String,
    since_seq: u64,
    last_messages: u32,
    (mut live_events, partial): (Subscription, hub::Partial),
    out: mpsc::Sender<Result<pb::SessionEvent, Status>>,
) {
    let _lease = lease;
    let id = session_id.clone();
    let stored = state
        .store
        .read(move |conn| {
            let after = if since_seq == 0 && last_messages > 0 {
                store::seq_before_last_messages(conn, &id, last_messages)?
            } else {
                since_seq as i64
            };
            store::events_after(conn, &id, after, 0)
        })
        .await;
    let mut joiner = hub::replay::Joiner::new(&session_id, since_seq);
    match stored {
        Ok(events) => {
            for stored in events {
                let Ok(event) = pb::SessionEvent::decode(stored.payload.as_slice()) else {
                    tracing::warn!(session = %session_id, seq = stored.seq, "undecodable stored event");
                    continue;
                };
                if let Some(event) = joiner.next(event)
                    && out.send(Ok(event)).await.is_err()
                {
                    return;
                }
            }
        }
        Err(e) => {
            let _ = out.send(Err(convert::status(e))).await;
            return;
        }
    }
    // The answer being streamed right now, as one delta: the rest follows live.
    if let Some(so_far) = joiner.partial(&partial)
        && out.send(Ok(so_far)).await.is_err()
    {
        return;
    }
    if out.send(Ok(joiner.replay_done())).await.is_err() {
        return;
    }
    loop {
        // A client that went away is noticed at once, not at the next event.
        // Shutdown ends the stream, so the drain does not wait on attached clients (they
        // re-attach from their last seq).
        let received = tokio::select! {
            received = live_events.recv() => received,
            () = out.closed() => return,
            () = state.shutdown.cancelled() => return,
        };
        match received {
            Received::Event(event) => {
                if let Some(event) = joiner.next((*event).clone())
                    && out.send(Ok(event)).await.is_err()
                {
                    return;
                }
            }
            Received::Lagged => {
                let lagged = pb::SessionEvent {
                    session_id: session_id.clone(),
                    seq: joiner.last_sent(),
                    kind: Some(Kind::Lagged(pb::Lagged {
                        last_delivered_seq: joiner.last_sent(),
                    })),
                    ..pb::SessionEvent::default()
                };
                let _ = out.send(Ok(lagged)).await;
                return;
            }
            Received::Closed => return,
        }
    }
}

/// Act on what the client sends until it detaches or goes away.
async fn read_frames(
    state: Arc<DaemonState>,
    lease: Arc<Lease>,
    mut inbound: Streaming<pb::ClientFrame>,
    read_only: bool,
    client: String,
) {
    let Some(live) = lease.live().cloned() else {
        return;
    };
    let _attached = live.client_guard();
    let _interactive = (!read_only).then(|| live.interactive_guard());
    loop {
        let frame = tokio::select! {
            frame = inbound.message() => frame,
            () = state.shutdown.cancelled() => break,
        };
        let Ok(Some(frame)) = frame else { break };
        let Some(kind) = frame.kind else { continue };
        if read_only && !matches!(kind, client_frame::Kind::Detach(_)) {
            notice(
                &live,
                "read_only",
                "this client attached read-only; input ignored",
            );
            continue;
        }
        match kind {
            client_frame::Kind::Detach(_) => break,
            client_frame::Kind::Hello(_) => {}
            client_frame::Kind::UserInput(input) => {
                start_turn(&state, &live, input, &client).await;
            }
            client_frame::Kind::Interrupt(_) => {
                live.interrupt();
            }
            client_frame::Kind::ApprovalResponse(answer) => {
                let by = client.clone();
                if !live.answer(
                    &answer.id,
                    Answer {
                        text: answer.decision,
                        by,
                    },
                ) {
                    notice(&live, "stale_answer", "that approval is no longer waiting");
                }
            }
            client_frame::Kind::ClarifyResponse(answer) => {
                let by = client.clone();
                if !live.answer(
                    &answer.id,
                    Answer {
                        text: answer.answer,
                        by,
                    },
                ) {
                    notice(&live, "stale_answer", "that question is no longer waiting");
                }
            }
        }
    }
    drop(live);
}

fn notice(live: &LiveSession, kind: &str, text: &str) {
    live.emit_transient(
        "",
        Kind::Notice(pb::Notice {
            kind: kind.into(),
            text: text.into(),
        }),
    );
}

async fn start_turn(
    state: &Arc<DaemonState>,
    live: &Arc<LiveSession>,
    input: pb::UserInput,
    client: &str,
) {
    let target = agent::Target {
        session_id: Some(live.id()),
        ..agent::Target::default()
    };
    let prepared =
        agent::prepare_with_images(&state.runner, target, &input.text, input.attachments).await;
    match prepared {
        Ok((session, chain, text)) => {
            let input = agent::TurnInput {
                text,
                source_client: client.to_string(),
                yolo: input.yolo,
                busy: convert::busy_override(input.busy_policy),
                toolsets: Vec::new(),
                context_from: None,
                turn_id: None,
                stop: None,
                delegated: None,
            };
            // The turn runs on its own (or the input joins the running one); its events reach
            // every attached client.
            drop(agent::submit(&state.runner, session, chain, input));
        }
        Err(e) => notice(live, "input_rejected", &e.to_string()),
    }
}
