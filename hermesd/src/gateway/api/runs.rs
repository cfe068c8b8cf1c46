//! `/v1/runs`: a run is one turn, started and then followed by polling (`GET /v1/runs/{id}`) or
//! by its events (`GET /v1/runs/{id}/events`, SSE: `message.delta`, `tool.started`,
//! `tool.completed`, `approval.request`, `approval.responded`, `run.completed`, `run.failed`,
//! `run.cancelled`). A run is an interactive client of its session while it runs, so its
//! dangerous commands wait for `POST /v1/runs/{id}/approval` — or for a terminal attached to the
//! same session, whichever answers first. `POST /v1/runs/{id}/stop` interrupts it.
//!
//! Bounds: a run keeps at most [`MAX_EVENTS`] events (later text deltas are counted, not kept;
//! every other event is kept); at most [`MAX_RUNS`] runs are remembered, finished ones for an
//! hour (Hermes' retention of run status).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    Json,
    body::Body,
    extract::{Path, Request, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{
    ApiError, ApiServer, error, request,
    turn::{self, How, Step},
};
use crate::hub::Answer;

pub const MAX_EVENTS: usize = 4_096;
pub const MAX_RUNS: usize = 1_000;
const KEEP_FINISHED: Duration = Duration::from_secs(3_600);
const KEEPALIVE: Duration = Duration::from_secs(15);

struct RunState {
    status: &'static str,
    last_event: String,
    output: Option<String>,
    error: Option<String>,
    usage: Option<Value>,
    events: Vec<Value>,
    dropped_deltas: u64,
    /// The approval the run waits for, if any.
    waiting: Option<String>,
    finished_at: Option<Instant>,
    updated_at: f64,
}

pub struct Run {
    id: String,
    session_id: String,
    conversation: String,
    created_at: f64,
    state: Mutex<RunState>,
    /// The number of events recorded, for followers.
    recorded: watch::Sender<usize>,
    /// Stops this run's turn alone, also while it waits behind another turn of its session.
    stop: CancellationToken,
}

fn now() -> f64 {
    chrono::Utc::now().timestamp_millis() as f64 / 1000.0
}

impl Run {
    fn lock(&self) -> std::sync::MutexGuard<'_, RunState> {
        match self.state.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn record(&self, mut event: Value, status: Option<&'static str>) {
        let count = {
            let mut state = self.lock();
            let name = event["event"].as_str().unwrap_or_default().to_string();
            event["run_id"] = json!(self.id);
            event["timestamp"] = json!(now());
            if let Some(status) = status {
                state.status = status;
            }
            state.updated_at = now();
            state.last_event = name.clone();
            if name == "message.delta" && state.events.len() >= MAX_EVENTS {
                state.dropped_deltas += 1;
            } else {
                state.events.push(event);
            }
            state.events.len()
        };
        self.recorded.send_replace(count);
    }

    fn finish(&self, status: &'static str, event: Value) {
        self.record(event, Some(status));
        self.lock().finished_at = Some(Instant::now());
        // Followers see the end even if the count did not change.
        self.recorded.send_modify(|_| {});
    }

    fn view(&self) -> Value {
        let state = self.lock();
        let mut view = json!({
            "object": "hermes.run",
            "run_id": self.id,
            "status": state.status,
            "session_id": self.session_id,
            "created_at": self.created_at,
            "updated_at": state.updated_at,
            "last_event": state.last_event,
        });
        if let Some(output) = &state.output {
            view["output"] = json!(output);
        }
        if let Some(error) = &state.error {
            view["error"] = json!(error);
        }
        if let Some(usage) = &state.usage {
            view["usage"] = usage.clone();
        }
        if let Some(id) = &state.waiting {
            view["approval_id"] = json!(id);
        }
        view
    }
}

/// The runs remembered.
#[derive(Default)]
pub struct Runs(Mutex<HashMap<String, Arc<Run>>>);

impl Runs {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Run>>> {
        match self.0.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn get(&self, id: &str) -> Result<Arc<Run>, ApiError> {
        self.lock()
            .get(id)
            .cloned()
            .ok_or_else(|| ApiError::not_found(format!("Run not found: {id}"), "run_not_found"))
    }

    /// Keep `run`, forgetting finished runs past their hour, and the oldest finished ones
    /// while more than [`MAX_RUNS`] are kept.
    fn keep(&self, run: Arc<Run>) {
        let mut runs = self.lock();
        runs.retain(|_, r| {
            r.lock()
                .finished_at
                .is_none_or(|at| at.elapsed() < KEEP_FINISHED)
        });
        while runs.len() >= MAX_RUNS {
            let oldest = runs
                .values()
                .filter_map(|r| r.lock().finished_at.map(|at| (at, r.id.clone())))
                .min();
            let Some((_, id)) = oldest else { break };
            runs.remove(&id);
        }
        runs.insert(run.id.clone(), run);
    }
}

/// A short label of a call for progress lines: the command, path or first string argument.
pub fn preview(name: &str, arguments: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let picked = ["command", "path", "query", "url", "name"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
        .or_else(|| args.as_object()?.values().find_map(Value::as_str));
    match picked {
        Some(text) => {
            let line: String = text
                .lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(80)
                .collect();
            format!("{name}: {line}")
        }
        None => name.to_string(),
    }
}

/// The text a run's `input` carries: a string, or the last user message of an array.
pub(super) fn input_text(input: Option<&Value>) -> Result<String, ApiError> {
    let text = match input {
        None | Some(Value::Null) => return Err(ApiError::field("input", "Missing 'input' field")),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str).unwrap_or("user") == "user")
            .map(|m| match m {
                Value::String(s) => s.clone(),
                other => super::chat::content_text(other.get("content")),
            })
            .unwrap_or_default(),
        Some(_) => {
            return Err(ApiError::field(
                "input",
                "'input' must be a string or an array",
            ));
        }
    };
    if text.trim().is_empty() {
        return Err(ApiError::field("input", "No user message found in input"));
    }
    Ok(text)
}

pub async fn create(
    State(api): State<Arc<ApiServer>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let body = error::json_object(&parts.headers, body).await?;
    let text = request::with_instructions(
        "Instructions from the API client",
        body.get("instructions").and_then(Value::as_str),
        input_text(body.get("input"))?,
    );
    let run_id = format!("run_{}", crate::ids::random_hex(16));
    let chosen = match body.get("session_id").and_then(Value::as_str) {
        Some(id) => request::checked_session_id(id, "session_id")?,
        None => None,
    };
    let session_id = match chosen {
        Some(id) => id,
        None => request::session_id(&parts.headers)?.unwrap_or_else(|| run_id.clone()),
    };
    let permit = api.permit()?;
    let session = turn::conversation(&api, &session_id, Vec::new()).await?;
    let stop = CancellationToken::new();
    let started = turn::start(&api, session, text, permit, true, Some(stop.clone())).await?;
    let run = Arc::new(Run {
        id: run_id.clone(),
        session_id: started.session_id.clone(),
        conversation: started.conversation.clone(),
        created_at: now(),
        state: Mutex::new(RunState {
            status: "running",
            last_event: "run.started".into(),
            output: None,
            error: None,
            usage: None,
            events: Vec::new(),
            dropped_deltas: 0,
            waiting: None,
            finished_at: None,
            updated_at: now(),
        }),
        recorded: watch::Sender::new(0),
        stop,
    });
    api.runs.keep(Arc::clone(&run));
    tokio::spawn(follow(run, started.steps));
    let mut response = (
        StatusCode::ACCEPTED,
        Json(json!({"run_id": run_id, "status": "started", "session_id": started.session_id})),
    )
        .into_response();
    request::echo_session(response.headers_mut(), &started.session_id, None);
    Ok(response)
}

/// Record the run's steps as its events.
async fn follow(run: Arc<Run>, mut steps: tokio::sync::mpsc::Receiver<Step>) {
    while let Some(step) = steps.recv().await {
        match step {
            Step::Text(delta) => run.record(json!({"event": "message.delta", "delta": delta}), None),
            Step::ToolStarted { name, arguments, call_id } => run.record(
                json!({"event": "tool.started", "tool": name, "preview": preview(&name, &arguments), "tool_call_id": call_id}),
                None,
            ),
            Step::ToolFinished { name, ok, duration_ms, call_id } => run.record(
                json!({"event": "tool.completed", "tool": name, "duration": duration_ms as f64 / 1000.0, "error": !ok, "tool_call_id": call_id}),
                None,
            ),
            Step::Approval(asked) => {
                run.lock().waiting = Some(asked.id.clone());
                run.record(
                    json!({"event": "approval.request", "approval_id": asked.id, "command": asked.command, "description": asked.reason, "choices": if asked.choices.is_empty() { json!(["once", "session", "always", "deny"]) } else { json!(asked.choices) }}),
                    Some("waiting_for_approval"),
                );
            }
            Step::ApprovalResolved { id, decision } => {
                run.lock().waiting = None;
                run.record(json!({"event": "approval.responded", "approval_id": id, "choice": decision}), Some("running"));
            }
            Step::Ended(ending) => {
                let usage = json!({
                    "input_tokens": ending.input_tokens,
                    "output_tokens": ending.output_tokens,
                    "total_tokens": ending.input_tokens + ending.output_tokens,
                });
                {
                    let mut state = run.lock();
                    state.waiting = None;
                    state.output = Some(ending.text.clone());
                    state.usage = Some(usage.clone());
                }
                match ending.how {
                    How::Completed => run.finish("completed", json!({"event": "run.completed", "output": ending.text, "usage": usage})),
                    How::Stopped => run.finish("cancelled", json!({"event": "run.cancelled", "output": ending.text})),
                    How::Failed(why) => {
                        run.lock().error = Some(why.clone());
                        run.finish("failed", json!({"event": "run.failed", "error": why}));
                    }
                }
                return;
            }
        }
    }
}

pub async fn status(
    State(api): State<Arc<ApiServer>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(api.runs.get(&id)?.view()))
}

/// Every event of the run from its first, then live ones, until it ends or the client goes.
pub async fn events(
    State(api): State<Arc<ApiServer>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let run = api.runs.get(&id)?;
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(64);
    tokio::spawn(async move {
        let mut recorded = run.recorded.subscribe();
        let mut next = 0;
        loop {
            let (batch, done) = {
                let state = run.lock();
                (
                    state.events.get(next..).unwrap_or_default().to_vec(),
                    state.finished_at.is_some(),
                )
            };
            next += batch.len();
            for event in batch {
                if tx
                    .send(Ok(bytes::Bytes::from(format!("data: {event}\n\n"))))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            if done {
                let _ = tx
                    .send(Ok(bytes::Bytes::from_static(b": stream closed\n\n")))
                    .await;
                return;
            }
            tokio::select! {
                changed = recorded.changed() => if changed.is_err() { return },
                () = tokio::time::sleep(KEEPALIVE) => {
                    if tx.send(Ok(bytes::Bytes::from_static(b": keepalive\n\n"))).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    let body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    }));
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

pub async fn approval(
    State(api): State<Arc<ApiServer>>,
    Path(id): Path<String>,
    request: Request,
) -> Result<Json<Value>, ApiError> {
    let run = api.runs.get(&id)?;
    let (parts, body) = request.into_parts();
    let body = error::json_object(&parts.headers, body).await?;
    let choice = body
        .get("choice")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default();
    if !matches!(choice, "once" | "session" | "always" | "deny") {
        return Err(ApiError::field(
            "choice",
            "'choice' must be one of once, session, always, deny",
        ));
    }
    let waiting = run.lock().waiting.clone();
    let Some(question) = waiting else {
        let mut e = ApiError::new(
            StatusCode::CONFLICT,
            format!("Run has no pending approval: {id}"),
        );
        e.code = Some("approval_not_pending");
        return Err(e);
    };
    let answered = api
        .gateway
        .runner
        .hub
        .get(&run.conversation)
        .is_some_and(|live| {
            live.answer(
                &question,
                Answer {
                    text: choice.to_string(),
                    by: "api_server".into(),
                },
            )
        });
    if !answered {
        let mut e = ApiError::new(
            StatusCode::CONFLICT,
            format!("Run has no pending approval: {id}"),
        );
        e.code = Some("approval_not_pending");
        return Err(e);
    }
    Ok(Json(json!({
        "object": "hermes.run.approval_response",
        "run_id": id,
        "choice": choice,
        "resolved": 1,
    })))
}

pub async fn stop(
    State(api): State<Arc<ApiServer>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let run = api.runs.get(&id)?;
    if run.lock().finished_at.is_none() {
        run.stop.cancel();
        run.lock().status = "stopping";
    }
    Ok(Json(json!({"run_id": id, "status": run.lock().status})))
}
