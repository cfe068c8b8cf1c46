//! The fake server's inside: the script state, request recording, routing, and turning a
//! reply into a response body (streamed in parts, with pauses and aborts as scripted).

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    Json,
    body::{Body, Bytes},
    extract::{Request, State as AxumState},
    http::{HeaderName, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::{FakeModel, RecordedRequest, Reply, ToolCall, Usage, anthropic, openai, responses};

pub(super) struct Script {
    pub(super) replies: VecDeque<Reply>,
    /// Chat requests answered from the script so far.
    pub(super) answered: usize,
    /// Scripts of their own for requests whose system prompt holds a text (one agent among
    /// several talking to the server at once: a delegated child), checked first in order.
    pub(super) routes: Vec<(String, VecDeque<Reply>)>,
}

/// The system prompt of a chat request (OpenAI: the `system` message; Anthropic: `system`).
pub(super) fn system_prompt(body: &Value) -> String {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    if !body["system"].is_null() {
        return text(&body["system"]);
    }
    if let Some(instructions) = body["instructions"].as_str() {
        return instructions.to_owned();
    }
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "system"))
        .map(|m| text(&m["content"]))
        .unwrap_or_default()
}

pub(super) struct State {
    pub(super) script: Mutex<Script>,
    pub(super) models: Mutex<Vec<FakeModel>>,
    /// Every request but the metadata lookups, in arrival order.
    pub(super) log: Mutex<Vec<RecordedRequest>>,
    /// `GET /v1/models` and `POST /api/show`: the daemon asks these once per model on its own,
    /// so they are kept apart from the calls a test counts.
    pub(super) lookups: Mutex<Vec<RecordedRequest>>,
    /// Number of requests recorded in `log`, for `wait_for_requests`.
    pub(super) arrived: watch::Sender<usize>,
    /// `Held` replies taken so far; the n-th waits until `released` reaches n.
    pub(super) holds_taken: Mutex<usize>,
    pub(super) released: watch::Sender<usize>,
}

impl State {
    /// What the next `Held` reply waits on: its ticket and the release count to watch.
    fn hold_ticket(&self) -> (usize, watch::Receiver<usize>) {
        let mut taken = self.holds_taken.lock().unwrap();
        *taken += 1;
        (*taken, self.released.subscribe())
    }
}

impl State {
    /// The reply for request number `answered + 1`, with a `Loop` resolved to a tool call or its
    /// final text; `Err(answered)` when the script is exhausted.
    fn take(&self, api: Api, body: &Value) -> Result<(usize, Reply), usize> {
        let mut script = self.script.lock().unwrap();
        let seq = script.answered + 1;
        if !script.routes.is_empty() {
            let system = system_prompt(body);
            let routed = script
                .routes
                .iter_mut()
                .find(|(needle, replies)| !replies.is_empty() && system.contains(needle.as_str()))
                .and_then(|(_, replies)| replies.pop_front());
            if let Some(reply) = routed {
                script.answered = seq;
                return Ok((seq, reply));
            }
        }
        let reply = match script.replies.front() {
            None => return Err(script.answered),
            Some(Reply::Loop {
                tool,
                arguments,
                until_results,
                ..
            }) if api.count_tool_results(body) < *until_results => {
                let n = api.count_tool_results(body) + 1;
                let arguments = arguments.replace("{n}", &n.to_string());
                let call = ToolCall::new(tool, &arguments).with_id(&format!("call_{seq}"));
                Reply::tool_calls(vec![call])
            }
            Some(Reply::Loop {
                final_text,
                forever: true,
                ..
            }) => Reply::text(final_text),
            Some(_) => match script.replies.pop_front() {
                Some(Reply::Loop { final_text, .. }) => Reply::text(&final_text),
                Some(reply) => reply,
                None => return Err(script.answered),
            },
        };
        script.answered = seq;
        Ok((seq, reply))
    }
}

/// Which API a chat request used.
#[derive(Clone, Copy)]
pub(super) enum Api {
    OpenAi,
    Anthropic,
    Responses,
}

impl Api {
    pub(super) fn stream(self, turn: &Turn, ctx: &Ctx, complete: bool) -> Vec<Part> {
        match self {
            Self::OpenAi => openai::stream(turn, ctx, complete),
            Self::Anthropic => anthropic::stream(turn, ctx, complete),
            Self::Responses => responses::stream(turn, ctx, complete),
        }
    }

    pub(super) fn json(self, turn: &Turn, ctx: &Ctx) -> Value {
        match self {
            Self::OpenAi => openai::json(turn, ctx),
            Self::Anthropic => anthropic::json(turn, ctx),
            Self::Responses => responses::json(turn, ctx),
        }
    }

    pub(super) fn count_tool_results(self, body: &Value) -> usize {
        match self {
            Self::OpenAi => openai::count_tool_results(body),
            Self::Anthropic => anthropic::count_tool_results(body),
            Self::Responses => responses::count_tool_results(body),
        }
    }
}

/// What the assistant says in one answer, independent of the API shape.
pub(super) struct Turn {
    pub(super) reasoning: Vec<String>,
    pub(super) text: Vec<String>,
    pub(super) calls: Vec<ToolCall>,
    pub(super) usage: Usage,
    pub(super) delay_ms: u64,
}

/// Per-request facts the renderers need.
pub(super) struct Ctx {
    pub(super) seq: usize,
    pub(super) model: String,
    pub(super) include_usage: bool,
}

/// A piece of a response body: bytes to send, a pause, or a connection abort.
pub(super) enum Part {
    Data(String),
    Sleep(u64),
    /// Waits until the release count reaches the ticket.
    Hold(usize, watch::Receiver<usize>),
    Abort,
}

/// Records every request, then routes it.
pub(super) async fn handle(AxumState(state): AxumState<Arc<State>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let headers = parts.headers.iter();
    let recorded = RecordedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        headers: headers
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: body.clone(),
        received_at: Instant::now(),
    };
    let route = (recorded.method.clone(), recorded.path.clone());
    if matches!(
        (route.0.as_str(), route.1.as_str()),
        ("GET", "/v1/models") | ("POST", "/api/show")
    ) {
        state.lookups.lock().unwrap().push(recorded);
    } else {
        state.log.lock().unwrap().push(recorded);
        state.arrived.send_modify(|count| *count += 1);
    }

    match (route.0.as_str(), route.1.as_str()) {
        ("POST", "/v1/chat/completions") => chat(&state, Api::OpenAi, &body).await,
        ("POST", "/v1/messages") => chat(&state, Api::Anthropic, &body).await,
        ("POST", "/v1/responses") => chat(&state, Api::Responses, &body).await,
        ("GET", "/v1/models") => list_models(&state),
        ("POST", "/api/show") => show_model(&state, &body),
        (method, path) => {
            let message = format!("fake-llm: no route for {method} {path}");
            (
                StatusCode::NOT_FOUND,
                Json(json!({"error": {"message": message}})),
            )
                .into_response()
        }
    }
}

fn list_models(state: &State) -> Response {
    let models = state.models.lock().unwrap();
    let data: Vec<Value> = models
        .iter()
        .map(|m| {
            let mut entry =
                json!({"id": m.id, "object": "model", "created": 0, "owned_by": "fake-llm"});
            if let Some(n) = m.context_length {
                entry["context_length"] = n.into();
            }
            if let Some(n) = m.max_model_len {
                entry["max_model_len"] = n.into();
            }
            if let Some(inputs) = &m.input_modalities {
                entry["architecture"] = json!({"input_modalities": inputs});
            }
            entry
        })
        .collect();
    Json(json!({"object": "list", "data": data})).into_response()
}

fn show_model(state: &State, body: &Value) -> Response {
    let name = body["model"]
        .as_str()
        .or(body["name"].as_str())
        .unwrap_or_default();
    let models = state.models.lock().unwrap();
    let Some(model) = models.iter().find(|m| m.id == name) else {
        let error = format!("model '{name}' not found");
        return (StatusCode::NOT_FOUND, Json(json!({"error": error}))).into_response();
    };
    let arch = model.ollama_arch.as_deref().unwrap_or("llama");
    let mut info = json!({"general.architecture": arch});
    if let Some(n) = model
        .ollama_context_length
        .or(model.context_length)
        .or(model.max_model_len)
    {
        info[format!("{arch}.context_length")] = n.into();
    }
    let mut show = json!({"model_info": info});
    if let Some(capabilities) = &model.ollama_capabilities {
        show["capabilities"] = json!(capabilities);
    }
    Json(show).into_response()
}

/// Answers a chat request with the next scripted reply.
async fn chat(state: &State, api: Api, body: &Value) -> Response {
    let (seq, reply) = match state.take(api, body) {
        Ok(next) => next,
        Err(answered) => {
            let message = format!("fake-llm: script exhausted after {answered} requests");
            let error = json!({"error": {"message": message}});
            return (StatusCode::INTERNAL_SERVER_ERROR, Json(error)).into_response();
        }
    };
    let ctx = Ctx {
        seq,
        model: body["model"].as_str().unwrap_or("fake-model").to_owned(),
        include_usage: body["stream_options"]["include_usage"] == true,
    };
    let streaming = body["stream"] == true;
    let text_turn = |chunks: Vec<String>| {
        turn(
            Reply::Text {
                chunks,
                delay_ms: 0,
                reasoning: Vec::new(),
                usage: None,
            },
            &ctx,
            body,
        )
    };
    match reply {
        Reply::Error {
            status,
            retry_after,
            location,
            body,
        } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut response =
                (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
            if let Some(value) = retry_after.and_then(|v| v.parse().ok()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            if let Some(value) = location.and_then(|v| v.parse().ok()) {
                response.headers_mut().insert(header::LOCATION, value);
            }
            response
        }
        Reply::StallBeforeHeaders { ms } => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            answer(api, &text_turn(vec!["late".to_owned()]), &ctx, streaming).await
        }
        Reply::StallAfterHeaders { ms, chunks_before } => {
            let mut parts = partial(api, &text_turn(chunks_before), &ctx, streaming);
            parts.push(Part::Sleep(ms));
            body_response(streaming, parts)
        }
        Reply::Held { before, after } => {
            let (ticket, mut released) = state.hold_ticket();
            if !streaming {
                let _ = released.wait_for(|count| *count >= ticket).await;
                let whole = before.into_iter().chain(after).collect();
                return answer(api, &text_turn(whole), &ctx, false).await;
            }
            let held_at = partial(api, &text_turn(before.clone()), &ctx, true).len();
            let whole = before.into_iter().chain(after).collect();
            let mut parts = api.stream(&text_turn(whole), &ctx, true);
            parts.insert(held_at, Part::Hold(ticket, released));
            body_response(true, parts)
        }
        Reply::CutMidStream { chunks_before } => {
            let mut parts = partial(api, &text_turn(chunks_before), &ctx, streaming);
            parts.push(Part::Abort);
            body_response(streaming, parts)
        }
        Reply::MalformedSse if streaming => {
            let lines = ["data: {not json\n\n", "data: [DONE]\n\n"];
            body_response(true, lines.map(|l| Part::Data(l.to_owned())).into())
        }
        Reply::MalformedSse => body_response(false, vec![Part::Data("{not json".to_owned())]),
        reply => answer(api, &turn(reply, &ctx, body), &ctx, streaming).await,
    }
}

/// A complete answer: SSE when streaming, else JSON (after the total chunk delay).
async fn answer(api: Api, turn: &Turn, ctx: &Ctx, streaming: bool) -> Response {
    if streaming {
        return body_response(true, api.stream(turn, ctx, true));
    }
    let pauses = turn.text.len().saturating_sub(1) as u64;
    tokio::time::sleep(Duration::from_millis(turn.delay_ms * pauses)).await;
    Json(api.json(turn, ctx)).into_response()
}

/// The start of an answer: SSE without its closing events, or the first half of the JSON.
fn partial(api: Api, turn: &Turn, ctx: &Ctx, streaming: bool) -> Vec<Part> {
    if streaming {
        return api.stream(turn, ctx, false);
    }
    let json = api.json(turn, ctx).to_string();
    let mut cut = json.len() / 2;
    while !json.is_char_boundary(cut) {
        cut -= 1;
    }
    vec![Part::Data(json[..cut].to_owned())]
}

/// A 200 response whose body plays `parts` in order (SSE or JSON content type).
fn body_response(sse: bool, parts: Vec<Part>) -> Response {
    let stream = futures_util::stream::unfold(parts.into_iter(), |mut parts| async move {
        loop {
            match parts.next()? {
                Part::Data(data) => return Some((Ok(Bytes::from(data)), parts)),
                Part::Sleep(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                Part::Hold(ticket, mut released) => {
                    let _ = released.wait_for(|count| *count >= ticket).await;
                }
                Part::Abort => {
                    // Pending once, so hyper flushes what it buffered before the error aborts.
                    tokio::task::yield_now().await;
                    let error = std::io::Error::other("fake-llm: cut mid-stream");
                    return Some((Err(error), parts));
                }
            }
        }
    });
    let content_type = if sse {
        "text/event-stream"
    } else {
        "application/json"
    };
    let headers: [(HeaderName, &str); 2] = [
        (header::CONTENT_TYPE, content_type),
        (header::CACHE_CONTROL, "no-cache"),
    ];
    (StatusCode::OK, headers, Body::from_stream(stream)).into_response()
}

/// The [`Turn`] a text or tool-call reply describes; ids and usage are filled in.
fn turn(reply: Reply, ctx: &Ctx, body: &Value) -> Turn {
    let (reasoning, text, mut calls, usage, delay_ms) = match reply {
        Reply::Text {
            chunks,
            delay_ms,
            reasoning,
            usage,
        } => (reasoning, chunks, Vec::new(), usage, delay_ms),
        Reply::ToolCalls {
            text,
            calls,
            reasoning,
        } => (reasoning, text.into_iter().collect(), calls, None, 0),
        Reply::InvalidToolArguments { name } => {
            let call = ToolCall {
                id: String::new(),
                name,
                argument_chunks: vec!["{\"path\": ".into(), "\"/tmp/x".into()],
            };
            (Vec::new(), Vec::new(), vec![call], None, 0)
        }
        other => unreachable!("not a turn: {other:?}"),
    };
    for (index, call) in calls.iter_mut().enumerate() {
        if call.id.is_empty() {
            call.id = format!("call_{}_{index}", ctx.seq);
        }
    }
    let produced: usize = reasoning
        .iter()
        .chain(&text)
        .map(String::len)
        .sum::<usize>()
        + calls.iter().map(|c| c.arguments().len()).sum::<usize>();
    let usage = usage.unwrap_or(Usage {
        input_tokens: (body.to_string().len() as u64 / 4).max(1),
        output_tokens: (produced as u64 / 4).max(1),
        ..Usage::default()
    });
    Turn {
        reasoning,
        text,
        calls,
        usage,
        delay_ms,
    }
}
