//! One configured model endpoint: provider, model, base URL, key, wire format, timeouts.

use std::time::Duration;

pub use crate::config::settings::ApiMode;

/// Everything needed to call one model.
#[derive(Clone)]
pub struct Endpoint {
    pub provider: String,
    pub model: String,
    /// OpenAI-compatible: up to and including `/v1`; Anthropic: the API root.
    pub base_url: String,
    pub api_key: Option<String>,
    pub api_mode: ApiMode,
    /// Silence after which a call is abandoned (also the read timeout without streaming).
    pub stale_timeout: Duration,
    pub connect_timeout: Duration,
    /// A bare JSON object that is the whole reply counts as a tool call (local models).
    pub text_tool_calls: bool,
    /// The credential pool a request takes its key from (`openrouter`, `custom:<name>`); `None`
    /// when the configuration wrote the key itself.
    pub pool: Option<String>,
    /// The context window a `providers:` entry gives the model.
    pub context_length: Option<u64>,
}

impl Endpoint {
    /// `provider:model`, as shown to users and in errors.
    pub fn label(&self) -> String {
        format!("{}:{}", self.provider, self.model)
    }

    /// The URL to POST requests to.
    pub fn url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        match self.api_mode {
            ApiMode::ChatCompletions => format!("{base}/chat/completions"),
            ApiMode::AnthropicMessages => format!("{base}/v1/messages"),
            ApiMode::CodexResponses => format!("{base}/responses"),
        }
    }
}

// Keys never reach logs: Debug shows whether one is set, not what it is.
impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("api_mode", &self.api_mode)
            .field("stale_timeout", &self.stale_timeout)
            .field("pool", &self.pool)
            .finish()
    }
}
