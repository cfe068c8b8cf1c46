//! Model providers: one streaming interface over OpenAI-compatible chat completions and the
//! Anthropic messages API, classified errors, retries, and the fallback chain.

mod anthropic;
mod assemble;
mod catalog;
mod chain;
mod detect;
mod endpoint;
mod error;
mod http;
pub mod image_prep;
mod metadata;
mod openai;
mod provider;
mod responses;
mod settings;
mod sse;
mod text_tools;
mod transport;
mod types;
mod vision;

pub use crate::config::{providers, settings::Timing};
pub use catalog::{CONTEXT_FLOOR, CostStatus, Prices, call_cost, prices};
pub use chain::{Chain, ChainNotice, RetryPolicy};
pub use endpoint::{ApiMode, Endpoint};
pub use error::{ErrorClass, LlmError};
pub use metadata::{ContextSource, MetadataCache};
pub use provider::{AnthropicMessages, OpenAiChat, Provider, for_endpoint};
pub use settings::{
    HOW_TO_CONFIGURE, SettingsError, auxiliary_endpoint, check_job_base_url, endpoints, key_env,
    known_base_url,
};
pub use transport::{
    HttpClient, RequestBuilder as HttpRequest, Response as HttpResponse, TransportError,
    TransportKind, tls_config,
};
pub use types::{
    ChatMessage, ChatRequest, Completion, EventSink, Image, Role, StreamEvent, ToolCall,
    ToolSchema, Usage,
};

pub use vision::supports_vision;

/// The HTTP client for model calls (one per daemon; built on first use, not at start-up).
pub fn http_client(timing: &Timing) -> Result<HttpClient, String> {
    HttpClient::new(timing.connect_timeout)
}

/// The chain of the configured endpoints (`config.settings.llm`, or a copy with a cron job's
/// model); with no model configured at all, a local OpenAI-compatible server found on its usual
/// port.
pub async fn chain_from_config(
    models: &crate::config::settings::LlmSection,
    env: &hermes_proto::env::Env,
    client: HttpClient,
    credentials: &std::sync::Arc<crate::auth::Credentials>,
) -> Result<Chain, SettingsError> {
    let timing = models.timing;
    let endpoints = match endpoints(models, env) {
        Ok(endpoints) => endpoints,
        Err(SettingsError::NoModel) => match detect::local_server(&client, &timing).await {
            Some(local) => vec![local],
            None => return Err(SettingsError::NoModel),
        },
        Err(e) => return Err(e),
    };
    Ok(Chain {
        endpoints,
        policy: RetryPolicy {
            max_retries: timing.max_retries,
            base_delay: timing.retry_base_delay,
        },
        client,
        credentials: Some(std::sync::Arc::clone(credentials)),
    })
}

/// Decode a complete streamed body of `mode` exactly as a live stream is decoded, from memory:
/// the provider's own cost without the network (benchmarks and tests).
pub fn decode_stream_body(
    mode: ApiMode,
    label: &str,
    body: &[u8],
    sink: &mut EventSink<'_>,
) -> Result<Completion, LlmError> {
    let mut decoder = sse::SseDecoder::default();
    decoder.push(body);
    let mut asm = assemble::Assembler::new(sink);
    let mut blocks = anthropic::BlockTools::default();
    let mut items = responses::Items::default();
    let invalid = |e: std::str::Utf8Error| {
        LlmError::new(
            ErrorClass::StreamCut,
            label,
            format!("invalid UTF-8 in the stream ({e})"),
        )
    };
    while decoder.next_ready().map_err(invalid)? {
        let done = match mode {
            ApiMode::ChatCompletions => openai::handle_chunk(label, decoder.data(), &mut asm)?,
            ApiMode::AnthropicMessages => {
                anthropic::handle_event(label, decoder.data(), &mut blocks, &mut asm)?
            }
            ApiMode::CodexResponses => {
                responses::handle_event(label, decoder.data(), &mut asm, &mut items)?
            }
        };
        if done {
            break;
        }
    }
    let mut completion = asm.finish(label);
    completion.provider_items = items.provider_items();
    Ok(completion)
}
