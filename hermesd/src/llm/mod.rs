//! Model providers: one streaming interface over OpenAI-compatible chat completions and the
//! Anthropic messages API, classified errors, retries, and the fallback chain.

mod anthropic;
mod assemble;
mod chain;
mod endpoint;
mod error;
mod http;
mod openai;
mod provider;
mod settings;
mod text_tools;
mod types;

pub use chain::{Chain, ChainNotice, RetryPolicy};
pub use endpoint::{ApiMode, Endpoint};
pub use error::{ErrorClass, LlmError};
pub use provider::{AnthropicMessages, OpenAiChat, Provider, for_endpoint};
pub use settings::{HOW_TO_CONFIGURE, SettingsError, Timing, endpoints, timing};
pub use types::{
    ChatMessage, ChatRequest, Completion, EventSink, Role, StreamEvent, ToolCall, ToolSchema, Usage,
};

/// The HTTP client for model calls (one per daemon; built on first use, not at start-up).
pub fn http_client(timing: &Timing) -> Result<reqwest::Client, String> {
    // reqwest is built without a bundled crypto provider; ring is ours. A second install fails
    // harmlessly.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(timing.connect_timeout)
        .user_agent(concat!("hermesd/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// The chain of `tree`'s configured endpoints.
pub fn chain_from_config(
    tree: &serde_yaml::Value,
    env: &hermes_proto::env::Env,
    client: reqwest::Client,
) -> Result<Chain, SettingsError> {
    let timing = timing(tree)?;
    Ok(Chain {
        endpoints: endpoints(tree, env)?,
        policy: RetryPolicy {
            max_retries: timing.max_retries,
            base_delay: timing.retry_base_delay,
        },
        client,
    })
}
