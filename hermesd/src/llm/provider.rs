//! The provider interface: one model call, streamed when asked; a non-streaming response is
//! adapted into the same events, so callers only ever see one shape.

use async_trait::async_trait;

use super::{
    anthropic,
    endpoint::{ApiMode, Endpoint},
    error::LlmError,
    openai, responses,
    types::{ChatRequest, Completion, EventSink},
};

/// A wire format for calling a model.
#[async_trait]
pub trait Provider: Send + Sync {
    fn endpoint(&self) -> &Endpoint;

    /// Send `request`; events go to `sink` as they arrive (all at once when `stream` is false).
    async fn call(
        &self,
        client: &super::HttpClient,
        request: &ChatRequest,
        stream: bool,
        sink: &mut EventSink<'_>,
    ) -> Result<Completion, LlmError>;
}

/// OpenAI-compatible chat completions.
pub struct OpenAiChat(pub Endpoint);

/// The Anthropic messages API.
pub struct AnthropicMessages(pub Endpoint);

/// The OpenAI Responses API.
pub struct Responses(pub Endpoint);

#[async_trait]
impl Provider for Responses {
    fn endpoint(&self) -> &Endpoint {
        &self.0
    }

    async fn call(
        &self,
        client: &super::HttpClient,
        request: &ChatRequest,
        stream: bool,
        sink: &mut EventSink<'_>,
    ) -> Result<Completion, LlmError> {
        responses::call(client, &self.0, request, stream, sink).await
    }
}

#[async_trait]
impl Provider for OpenAiChat {
    fn endpoint(&self) -> &Endpoint {
        &self.0
    }

    async fn call(
        &self,
        client: &super::HttpClient,
        request: &ChatRequest,
        stream: bool,
        sink: &mut EventSink<'_>,
    ) -> Result<Completion, LlmError> {
        openai::call(client, &self.0, request, stream, sink).await
    }
}

#[async_trait]
impl Provider for AnthropicMessages {
    fn endpoint(&self) -> &Endpoint {
        &self.0
    }

    async fn call(
        &self,
        client: &super::HttpClient,
        request: &ChatRequest,
        stream: bool,
        sink: &mut EventSink<'_>,
    ) -> Result<Completion, LlmError> {
        anthropic::call(client, &self.0, request, stream, sink).await
    }
}

/// The provider that speaks `endpoint`'s wire format.
pub fn for_endpoint(endpoint: &Endpoint) -> Box<dyn Provider> {
    match endpoint.api_mode {
        ApiMode::ChatCompletions => Box::new(OpenAiChat(endpoint.clone())),
        ApiMode::AnthropicMessages => Box::new(AnthropicMessages(endpoint.clone())),
        ApiMode::CodexResponses => Box::new(Responses(endpoint.clone())),
    }
}
