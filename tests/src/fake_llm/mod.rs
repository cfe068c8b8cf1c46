//! A scripted fake LLM HTTP server speaking the OpenAI chat completions API
//! (`POST /v1/chat/completions`) and the Anthropic messages API (`POST /v1/messages`), streaming
//! or not, plus `GET /v1/models` and Ollama's `POST /api/show`. Each chat request takes the next
//! [`Reply`] of the script; every request is recorded.

mod anthropic;
mod openai;
mod script;

pub use script::{FakeModel, Reply, ScriptFile, ToolCall, Usage, split_into};

use std::{
    collections::VecDeque,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    Json, Router,
    body::{Body, Bytes},
    extract::{Request, State as AxumState},
    http::{HeaderName, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};
use tokio::sync::{oneshot, watch};

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names are lower-case.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; `Null` when empty or not JSON.
    pub body: Value,
    pub received_at: Instant,
}

impl RecordedRequest {
    /// The first value of header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A running fake server; dropping it stops accepting connections.
pub struct FakeLlm {
    addr: SocketAddr,
    state: Arc<State>,
    shutdown: Option<oneshot::Sender<()>>,
}

impl FakeLlm {
    /// Starts a server on `127.0.0.1:<free port>` following `replies`.
    pub async fn start(replies: Vec<Reply>) -> Self {
        Self::start_on_port(0, replies)
            .await
            .expect("fake-llm: bind 127.0.0.1:0")
    }

    /// Starts a server on `127.0.0.1:port` (0 picks a free port).
    pub async fn start_on_port(port: u16, replies: Vec<Reply>) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            script: Mutex::new(Script {
                replies: replies.into(),
                answered: 0,
            }),
            models: Mutex::new(Vec::new()),
            log: Mutex::new(Vec::new()),
            arrived: watch::Sender::new(0),
        });
        let router = Router::new().fallback(handle).with_state(state.clone());
        let (shutdown, stop) = oneshot::channel::<()>();
        tokio::spawn(async move {
            // Small SSE writes must not wait for the client's delayed ACK (up to 40 ms each).
            let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            });
            let serve = axum::serve(listener, router).with_graceful_shutdown(async {
                let _ = stop.await;
            });
            if let Err(error) = serve.await {
                eprintln!("fake-llm: server error: {error}");
            }
        });
        Ok(Self {
            addr,
            state,
            shutdown: Some(shutdown),
        })
    }

    /// Replaces the models listed by `/v1/models` and known to `/api/show`.
    pub fn with_models(self, models: Vec<FakeModel>) -> Self {
        self.set_models(models);
        self
    }

    /// Replaces the models listed by `/v1/models` and known to `/api/show`.
    pub fn set_models(&self, models: Vec<FakeModel>) {
        *self.state.models.lock().unwrap() = models;
    }

    /// Appends a reply to the script.
    pub fn push(&self, reply: Reply) {
        self.state.script.lock().unwrap().replies.push_back(reply);
    }

    /// Replies not yet consumed (a running `Loop` counts as one).
    pub fn remaining(&self) -> usize {
        self.state.script.lock().unwrap().replies.len()
    }

    /// The socket address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Base URL for OpenAI clients: `http://127.0.0.1:PORT/v1`.
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// Base URL for Anthropic clients: `http://127.0.0.1:PORT`.
    pub fn anthropic_base(&self) -> String {
        self.base_url()
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.log.lock().unwrap().clone()
    }

    /// Waits until at least `n` requests arrived or `timeout` passed; returns all requests so far.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let mut arrived = self.state.arrived.subscribe();
        let _ = tokio::time::timeout(timeout, arrived.wait_for(|count| *count >= n)).await;
        self.requests()
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

struct Script {
    replies: VecDeque<Reply>,
    /// Chat requests answered from the script so far.
    answered: usize,
}

struct State {
    script: Mutex<Script>,
    models: Mutex<Vec<FakeModel>>,
    log: Mutex<Vec<RecordedRequest>>,
    /// Number of requests recorded, for `wait_for_requests`.
    arrived: watch::Sender<usize>,
}

impl State {
    /// The reply for request number `answered + 1`, with a `Loop` resolved to a tool call or its
    /// final text; `Err(answered)` when the script is exhausted.
    fn take(&self, api: Api, body: &Value) -> Result<(usize, Reply), usize> {
        let mut script = self.script.lock().unwrap();
        let seq = script.answered + 1;
        let reply = match script.replies.front() {
            None => return Err(script.answered),
            Some(Reply::Loop {
                tool,
                arguments,
                until_results,
                ..
            }) if api.count_tool_results(body) < *until_results => {
                let call = ToolCall::new(tool, arguments).with_id(&format!("call_{seq}"));
                Reply::tool_calls(vec![call])
            }
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
enum Api {
    OpenAi,
    Anthropic,
}

impl Api {
    fn stream(self, turn: &Turn, ctx: &Ctx, complete: bool) -> Vec<Part> {
        match self {
            Self::OpenAi => openai::stream(turn, ctx, complete),
            Self::Anthropic => anthropic::stream(turn, ctx, complete),
        }
    }

    fn json(self, turn: &Turn, ctx: &Ctx) -> Value {
        match self {
            Self::OpenAi => openai::json(turn, ctx),
            Self::Anthropic => anthropic::json(turn, ctx),
        }
    }

    fn count_tool_results(self, body: &Value) -> usize {
        match self {
            Self::OpenAi => openai::count_tool_results(body),
            Self::Anthropic => anthropic::count_tool_results(body),
        }
    }
}

/// What the assistant says in one answer, independent of the API shape.
struct Turn {
    reasoning: Vec<String>,
    text: Vec<String>,
    calls: Vec<ToolCall>,
    usage: Usage,
    delay_ms: u64,
}

/// Per-request facts the renderers need.
struct Ctx {
    seq: usize,
    model: String,
    include_usage: bool,
}

/// A piece of a response body: bytes to send, a pause, or a connection abort.
enum Part {
    Data(String),
    Sleep(u64),
    Abort,
}

/// Records every request, then routes it.
async fn handle(AxumState(state): AxumState<Arc<State>>, request: Request) -> Response {
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
    state.log.lock().unwrap().push(recorded);
    state.arrived.send_modify(|count| *count += 1);

    match (route.0.as_str(), route.1.as_str()) {
        ("POST", "/v1/chat/completions") => chat(&state, Api::OpenAi, &body).await,
        ("POST", "/v1/messages") => chat(&state, Api::Anthropic, &body).await,
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
    Json(json!({"model_info": info})).into_response()
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
            body,
        } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut response =
                (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
            if let Some(value) = retry_after.and_then(|v| v.parse().ok()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
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
        Reply::ToolCalls { text, calls } => {
            (Vec::new(), text.into_iter().collect(), calls, None, 0)
        }
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
    });
    Turn {
        reasoning,
        text,
        calls,
        usage,
        delay_ms,
    }
}
