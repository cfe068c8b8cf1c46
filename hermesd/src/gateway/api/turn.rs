//! One turn for an HTTP client: find or make its conversation (source `api_server`), start the
//! turn through the hub like any client (`agent::submit`), and follow its events as [`Step`]s
//! until it ends. The follower owns the run's permit and runs to the turn's end even when the
//! client that asked went away: the turn belongs to the daemon, so it finishes and is stored, and
//! the permit is given back only then.

use std::sync::Arc;

use hermes_proto::pb::{self, session_event::Kind};
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

use super::{ApiServer, error::ApiError};
use crate::{
    agent::{self, Submitted, Target, TurnEnd, TurnError, TurnInput, TurnOutcome},
    hub::Received,
    ids,
    store::{self, NewMessage, SessionRow, StoreError},
};

/// The source of the API server's sessions.
pub const SOURCE: &str = "api_server";
/// Steps buffered for a slow client before the follower waits for it.
const STEPS: usize = 256;

/// What a followed turn did, in order.
#[derive(Debug)]
pub enum Step {
    Text(String),
    ToolStarted {
        call_id: String,
        name: String,
        arguments: String,
    },
    ToolFinished {
        call_id: String,
        name: String,
        ok: bool,
        duration_ms: u64,
    },
    Approval(pb::ApprovalRequested),
    ApprovalResolved {
        id: String,
        decision: String,
    },
    Ended(Ending),
}

/// How the turn ended.
#[derive(Debug, Clone)]
pub struct Ending {
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub how: How,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    Completed,
    Stopped,
    Failed(String),
}

/// A started turn: its conversation and the steps of its events.
pub struct Started {
    pub session_id: String,
    pub conversation: String,
    pub steps: mpsc::Receiver<Step>,
}

/// The conversation `session_id` names (made with that id when it does not exist, with
/// `history` stored first), or an error a client can read.
pub async fn conversation(
    api: &ApiServer,
    session_id: &str,
    history: Vec<NewMessage>,
) -> Result<SessionRow, ApiError> {
    let id = session_id.to_string();
    let store = &api.gateway.runner.store;
    store
        .write(move |tx| match store::resolve_conversation(tx, &id) {
            Ok(row) => Ok(row),
            Err(StoreError::SessionNotFound(_)) => {
                let row =
                    store::insert_session_as(tx, Some(&id), &store::NewSession::root(SOURCE))?;
                for message in &history {
                    store::append_message(tx, &row.id, message)?;
                }
                Ok(row)
            }
            Err(e) => Err(e),
        })
        .await
        .map_err(|e| ApiError::server(format!("the session {session_id} is unavailable: {e}")))
}

/// Start a turn of `text` in `session` and follow it. `interactive`: the client answers
/// approvals (a run), so the turn may ask it.
pub async fn start(
    api: &Arc<ApiServer>,
    session: SessionRow,
    text: String,
    permit: Option<OwnedSemaphorePermit>,
    interactive: bool,
    stop: Option<CancellationToken>,
) -> Result<Started, ApiError> {
    let runner = &api.gateway.runner;
    let target = Target {
        session_id: Some(session.id.clone()),
        ..Target::default()
    };
    let (session, chain) = agent::prepare(runner, target, &text)
        .await
        .map_err(|e| match e {
            TurnError::Empty | TurnError::TooLarge(_) => ApiError::field("messages", e.to_string()),
            TurnError::Stopping => ApiError::draining(),
            other => ApiError::server(other.to_string()),
        })?;
    let live = runner.hub.load(&session);
    let guard = interactive.then(|| live.interactive_guard());
    let (events, _) = live.subscribe();
    let turn_id = ids::short_id("turn");
    let input = TurnInput {
        text,
        source_client: SOURCE.into(),
        yolo: false,
        busy: Some(agent::BusyPolicy::Queue),
        toolsets: Vec::new(),
        context_from: None,
        turn_id: Some(turn_id.clone()),
        stop,
        delegated: None,
    };
    let conversation = session.conversation_id.clone();
    let session_id = session.id.clone();
    let Submitted::Turn(handle) = agent::submit(runner, session, chain, input) else {
        runner.hub.release(live);
        return Err(ApiError::server(
            "the input was steered into a running turn",
        ));
    };
    let (tx, steps) = mpsc::channel(STEPS);
    let hub = Arc::clone(runner);
    let followed = turn_id.clone();
    tokio::spawn(async move {
        let ending = follow(events, &followed, handle, &tx).await;
        // Everything the run held goes back before its client learns it ended, so the client's
        // next request finds its permit free.
        drop(guard);
        hub.hub.release(live);
        drop(permit);
        let _ = tx.send(Step::Ended(ending)).await;
    });
    Ok(Started {
        session_id,
        conversation,
        steps,
    })
}

/// Follow `turn_id` to its end and say how it ended; a client that went away stops nothing.
async fn follow(
    mut events: crate::hub::Subscription,
    turn_id: &str,
    mut handle: tokio::task::JoinHandle<Result<TurnOutcome, TurnError>>,
    tx: &mpsc::Sender<Step>,
) -> Ending {
    let mut reading = true;
    let mut names = std::collections::HashMap::new();
    let mut text = String::new();
    loop {
        tokio::select! {
            received = events.recv(), if reading => match received {
                Received::Event(event) if event.turn_id == turn_id => {
                    match step_of(&event, &mut names, &mut text) {
                        None => {}
                        Some(Step::Ended(ending)) => {
                            // The turn's task stores how it ended; wait for it.
                            let _ = handle.await;
                            return ending;
                        }
                        // Send errors mean the client left; the turn goes on.
                        Some(step) => drop(tx.send(step).await),
                    }
                }
                Received::Event(_) => {}
                Received::Lagged | Received::Closed => reading = false,
            },
            joined = &mut handle => return ending_of(joined, &text),
        }
    }
}

fn step_of(
    event: &pb::SessionEvent,
    names: &mut std::collections::HashMap<String, String>,
    text: &mut String,
) -> Option<Step> {
    Some(match event.kind.as_ref()? {
        Kind::TextDelta(delta) => {
            text.push_str(&delta.text);
            Step::Text(delta.text.clone())
        }
        Kind::ToolStarted(started) => {
            names.insert(started.call_id.clone(), started.name.clone());
            Step::ToolStarted {
                call_id: started.call_id.clone(),
                name: started.name.clone(),
                arguments: started.arguments.clone(),
            }
        }
        Kind::ToolFinished(done) => Step::ToolFinished {
            call_id: done.call_id.clone(),
            name: names.remove(&done.call_id).unwrap_or_default(),
            ok: done.ok,
            duration_ms: done.duration_ms,
        },
        Kind::ApprovalRequested(asked) => Step::Approval(asked.clone()),
        Kind::ApprovalResolved(resolved) => Step::ApprovalResolved {
            id: resolved.id.clone(),
            decision: resolved.decision.clone(),
        },
        Kind::TurnFinished(done) => {
            let usage = done.usage.unwrap_or_default();
            Step::Ended(Ending {
                text: done.final_text.clone(),
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                how: How::Completed,
            })
        }
        Kind::TurnInterrupted(why) => Step::Ended(Ending {
            text: text.clone(),
            input_tokens: 0,
            output_tokens: 0,
            how: if why.by == crate::hub::STOPPING {
                How::Failed(why.by.clone())
            } else {
                How::Stopped
            },
        }),
        Kind::TurnFailed(failed) => Step::Ended(Ending {
            text: text.clone(),
            input_tokens: 0,
            output_tokens: 0,
            how: How::Failed(failed.message.clone()),
        }),
        _ => return None,
    })
}

/// The ending of a turn whose last event was not read (it could not start, or the follower
/// fell behind).
fn ending_of(
    joined: Result<Result<TurnOutcome, TurnError>, tokio::task::JoinError>,
    text: &str,
) -> Ending {
    match joined {
        Ok(Ok(outcome)) => Ending {
            text: outcome.answer,
            input_tokens: outcome.usage.input_tokens,
            output_tokens: outcome.usage.output_tokens,
            how: match outcome.end {
                TurnEnd::Finished => How::Completed,
                TurnEnd::Interrupted => How::Stopped,
                TurnEnd::Failed { message, .. } => How::Failed(message),
            },
        },
        Ok(Err(e)) => Ending {
            text: text.to_string(),
            input_tokens: 0,
            output_tokens: 0,
            how: How::Failed(e.to_string()),
        },
        Err(e) => Ending {
            text: text.to_string(),
            input_tokens: 0,
            output_tokens: 0,
            how: How::Failed(format!("the turn stopped: {e}")),
        },
    }
}
