//! A scripted fake LLM HTTP server speaking the OpenAI chat completions API
//! (`POST /v1/chat/completions`) and the Anthropic messages API (`POST /v1/messages`), streaming
//! or not, plus `GET /v1/models` and Ollama's `POST /api/show`. Each chat request takes the next
//! [`Reply`] of the script; every request is recorded.

mod anthropic;
mod openai;
mod responses;
mod script;
mod server;

pub use script::{FakeModel, Reply, ScriptFile, ToolCall, Usage, split_into};

use server::{Ctx, Part, Script, State, Turn, handle};

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::Router;
use serde_json::Value;
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
    /// The contents of the `tool` messages the request carried, in order.
    pub fn tool_results(&self) -> Vec<String> {
        self.body["messages"]
            .as_array()
            .map(|messages| {
                messages
                    .iter()
                    .filter(|m| m["role"] == "tool")
                    .filter_map(|m| m["content"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The names of the tools the request offered (OpenAI shape).
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

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
                routes: Vec::new(),
            }),
            models: Mutex::new(Vec::new()),
            log: Mutex::new(Vec::new()),
            lookups: Mutex::new(Vec::new()),
            arrived: watch::Sender::new(0),
            holds_taken: Mutex::new(0),
            released: watch::Sender::new(0),
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

    /// Requests whose system prompt contains `system_contains` take `replies` (in order) before
    /// the main script; once they are used up, such requests go to the main script again.
    pub fn route(&self, system_contains: &str, replies: Vec<Reply>) {
        self.state
            .script
            .lock()
            .unwrap()
            .routes
            .push((system_contains.to_string(), replies.into()));
    }

    /// Chat requests whose system prompt contains `system_contains`.
    pub fn requests_with_system(&self, system_contains: &str) -> Vec<RecordedRequest> {
        self.chat_requests()
            .into_iter()
            .filter(|r| server::system_prompt(&r.body).contains(system_contains))
            .collect()
    }

    /// Appends a reply to the script.
    pub fn push(&self, reply: Reply) {
        self.state.script.lock().unwrap().replies.push_back(reply);
    }

    /// Lets the oldest [`Reply::Held`] not yet released go on (one taken later, when it comes).
    pub fn release(&self) {
        self.state.released.send_modify(|count| *count += 1);
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

    /// Every request received so far, in arrival order, except the metadata lookups (`lookups`).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.log.lock().unwrap().clone()
    }

    /// The metadata lookups received so far: `GET /v1/models` and `POST /api/show`.
    pub fn lookups(&self) -> Vec<RecordedRequest> {
        self.state.lookups.lock().unwrap().clone()
    }

    /// The model calls received (chat completions and Anthropic messages), without metadata
    /// lookups such as `GET /v1/models`.
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/chat/completions") || r.path.ends_with("/messages"))
            .collect()
    }

    /// The text of each user message in model call `n` (from 0, as `chat_requests`).
    pub fn user_texts(&self, n: usize) -> Vec<String> {
        self.chat_requests()[n].body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "user")
            .filter_map(|m| m["content"].as_str().map(str::to_string))
            .collect()
    }

    /// Waits until at least `n` requests (as `requests`) arrived or `timeout` passed; returns
    /// them.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let mut arrived = self.state.arrived.subscribe();
        let _ = tokio::time::timeout(timeout, arrived.wait_for(|count| *count >= n)).await;
        self.requests()
    }
}

/// A provider chain over `endpoints` with a 5 ms retry base delay, for tests and benchmarks.
pub fn chain(endpoints: Vec<hermesd::llm::Endpoint>) -> hermesd::llm::Chain {
    let _ = rustls::crypto::ring::default_provider().install_default();
    hermesd::llm::Chain {
        endpoints,
        policy: hermesd::llm::RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(5),
        },
        client: hermesd::llm::HttpClient::new(Duration::from_secs(5)).expect("the HTTP client"),
        credentials: None,
    }
}

impl FakeLlm {
    /// A hermesd endpoint for this server in `mode`, with a test key and a 5 s stale timeout.
    pub fn endpoint(&self, model: &str, mode: hermesd::llm::ApiMode) -> hermesd::llm::Endpoint {
        use hermesd::llm::ApiMode;
        hermesd::llm::Endpoint {
            provider: "fake".into(),
            model: model.into(),
            base_url: match mode {
                ApiMode::ChatCompletions => self.openai_base(),
                ApiMode::AnthropicMessages => self.anthropic_base(),
                ApiMode::CodexResponses => self.openai_base(),
            },
            api_key: Some("sk-test".into()),
            api_mode: mode,
            stale_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(2),
            text_tool_calls: false,
            pool: None,
            context_length: None,
        }
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}
