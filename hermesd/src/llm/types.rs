//! What goes into a model call and what comes out: messages, tool schemas, stream events, completions.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The author of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "system" => Some(Self::System),
            "user" => Some(Self::User),
            "assistant" => Some(Self::Assistant),
            "tool" => Some(Self::Tool),
            _ => None,
        }
    }
}

/// A complete tool call; `arguments` is the raw JSON text the model wrote (it may be invalid).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl ToolCall {
    /// The arguments as JSON, or the parse error to hand back to the model.
    pub fn parsed_arguments(&self) -> Result<serde_json::Value, String> {
        let text = if self.arguments.trim().is_empty() {
            "{}"
        } else {
            &self.arguments
        };
        serde_json::from_str(text).map_err(|e| {
            format!("the arguments of `{}` are not valid JSON ({e}); send them again as one JSON object", self.name)
        })
    }
}

/// An image a message carries to a model that can see: its media type and base64 data. Made
/// from a file for one request and never stored (the store keeps the file's path in the text).
#[derive(Clone, PartialEq, Eq)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The file's bytes, base64 (shared by every request of the turn that carries it).
    pub base64: std::sync::Arc<str>,
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Image")
            .field("media_type", &self.media_type)
            .field("base64_chars", &self.base64.len())
            .finish()
    }
}

impl Image {
    /// The image as a `data:` URL (OpenAI's `image_url`).
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.base64)
    }
}

/// One message of a conversation in the OpenAI shape.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatMessage {
    pub role: Option<Role>,
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    /// For tool results: the call answered.
    pub tool_call_id: Option<String>,
    /// For tool results: the tool's name.
    pub name: Option<String>,
    /// Images for a model that can see (user messages and tool results).
    pub images: Vec<Image>,
    /// What the provider asked to be sent back with this assistant message (JSON).
    pub provider_items: Option<String>,
}

impl ChatMessage {
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Some(Role::User),
            content: text.into(),
            ..Self::default()
        }
    }

    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: Some(Role::Assistant),
            content: text.into(),
            ..Self::default()
        }
    }

    pub fn role(&self) -> Role {
        self.role.unwrap_or(Role::User)
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSchema {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// A request to a model; the provider turns it into its own wire shape.
#[derive(Debug, Clone, Default)]
pub struct ChatRequest {
    pub system: String,
    pub messages: Vec<ChatMessage>,
    /// Shared with the session's toolbox (and, schema by schema, with every other session).
    pub tools: Vec<Arc<ToolSchema>>,
    pub max_tokens: Option<u32>,
    /// `agent.reasoning_effort`: `None` is the provider's default, `none` turns reasoning off.
    pub reasoning_effort: Option<String>,
    /// `prompt_caching.cache_ttl`: `5m` (the default) or `1h`, for Anthropic's cache.
    pub cache_ttl: Option<String>,
}

/// Token counts of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub reasoning_tokens: u64,
    /// What the provider says the call cost (OpenRouter's `usage.cost`).
    pub reported_cost_usd: Option<f64>,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.reported_cost_usd = match (self.reported_cost_usd, other.reported_cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
}

/// What a provider reports while a response streams in.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    Text(String),
    Reasoning(String),
    /// A tool call begins (its arguments follow as deltas).
    ToolCallStarted {
        index: usize,
        id: String,
        name: String,
    },
    ToolCallDelta {
        index: usize,
        arguments: String,
    },
    /// Everything streamed so far is void: the response is being fetched again.
    Reset,
}

/// A finished response.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// stop, length, tool_calls, …
    pub finish_reason: String,
    /// The provider and model that answered, as `provider:model`.
    pub answered_by: String,
    /// Items the provider wants back with this message next time (JSON), kept in the store.
    pub provider_items: Option<String>,
}

/// Receives stream events as they arrive.
pub type EventSink<'a> = &'a mut (dyn FnMut(StreamEvent) + Send);
