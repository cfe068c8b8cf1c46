//! The script the fake model server follows: [`Reply`] variants, their convenience constructors,
//! and the file format the `fake-llm` binary loads (YAML or JSON, tagged by `type`).

use serde::Deserialize;

/// Token counts reported by a reply. When absent, the server estimates them from sizes.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Prompt tokens read from / written to the provider's cache, reported in each API's fields
    /// (Anthropic apart from `input_tokens`, OpenAI's shapes within it).
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
}

/// One tool call of a [`Reply::ToolCalls`]. An empty `id` is replaced by `call_<request>_<index>`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    #[serde(default)]
    pub id: String,
    pub name: String,
    /// Pieces of the JSON arguments, streamed one delta each; concatenated when not streaming.
    pub argument_chunks: Vec<String>,
}

impl ToolCall {
    /// A call whose arguments arrive in one piece, with a generated id.
    pub fn new(name: &str, arguments: &str) -> Self {
        Self {
            id: String::new(),
            name: name.to_owned(),
            argument_chunks: vec![arguments.to_owned()],
        }
    }

    /// Sets the call id instead of a generated one.
    pub fn with_id(mut self, id: &str) -> Self {
        self.id = id.to_owned();
        self
    }

    /// Re-splits the arguments into `n` pieces of near-equal length (on char boundaries).
    pub fn chunked(mut self, n: usize) -> Self {
        self.argument_chunks = split_into(&self.arguments(), n);
        self
    }

    /// The complete arguments string.
    pub fn arguments(&self) -> String {
        self.argument_chunks.concat()
    }
}

/// Splits `text` into `n` (at least 1) pieces of near-equal char count; empty pieces are dropped.
pub fn split_into(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(n.max(1)).max(1);
    chars
        .chunks(size)
        .map(|piece| piece.iter().collect())
        .collect()
}

/// What the server answers to one chat request (OpenAI or Anthropic, streaming or not).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    /// Assistant text, one delta per chunk, `delay_ms` apart; `reasoning` chunks come first.
    Text {
        #[serde(default)]
        chunks: Vec<String>,
        #[serde(default)]
        delay_ms: u64,
        #[serde(default)]
        reasoning: Vec<String>,
        #[serde(default)]
        usage: Option<Usage>,
    },
    /// Optional reasoning and text, then one or more (parallel) tool calls.
    ToolCalls {
        #[serde(default)]
        text: Option<String>,
        calls: Vec<ToolCall>,
        #[serde(default)]
        reasoning: Vec<String>,
    },
    /// Exactly this HTTP response, `Content-Type: application/json`, body verbatim.
    Error {
        status: u16,
        #[serde(default)]
        retry_after: Option<String>,
        /// A `Location` header (for redirects).
        #[serde(default)]
        location: Option<String>,
        body: String,
    },
    /// Sends nothing at all for `ms`, then the text reply `"late"`.
    StallBeforeHeaders { ms: u64 },
    /// Sends 200, headers and these text chunks, then nothing for `ms`, then ends the body.
    StallAfterHeaders {
        ms: u64,
        #[serde(default)]
        chunks_before: Vec<String>,
    },
    /// Sends 200, headers and the `before` text chunks, then waits until the test calls
    /// [`FakeLlm::release`](super::FakeLlm::release) (holds are released in the order they were
    /// taken), then the `after` chunks and a normal end. Not streaming: the whole answer after
    /// the release. A turn that must still be running when the test acts waits on this.
    Held {
        #[serde(default)]
        before: Vec<String>,
        #[serde(default)]
        after: Vec<String>,
    },
    /// Sends 200, headers and these text chunks, then aborts the connection.
    CutMidStream {
        #[serde(default)]
        chunks_before: Vec<String>,
    },
    /// 200 with a `data: {not json` line, then `data: [DONE]`.
    MalformedSse,
    /// A call of `name` whose arguments are not JSON: `{"path": "/tmp/x`.
    InvalidToolArguments { name: String },
    /// Answers a call of `tool` to every request carrying fewer than `until_results` tool
    /// results; the first request with enough gets `final_text` and moves the script on.
    /// `{n}` in `arguments` becomes the call's number (1, 2, …), so the calls differ.
    /// With `forever` the script never moves on: every turn, however many, is answered so.
    Loop {
        tool: String,
        arguments: String,
        until_results: usize,
        final_text: String,
        #[serde(default)]
        forever: bool,
    },
}

/// OpenAI-shaped error body.
fn openai_error(message: &str, kind: &str, code: Option<&str>) -> String {
    serde_json::json!({"error": {"message": message, "type": kind, "code": code}}).to_string()
}

/// Anthropic-shaped error body.
fn anthropic_error(kind: &str, message: &str) -> String {
    serde_json::json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}

impl Reply {
    /// Text in one chunk.
    pub fn text(text: &str) -> Self {
        Self::text_chunks(&[text])
    }

    /// Text in these chunks.
    pub fn text_chunks(chunks: &[&str]) -> Self {
        let chunks = chunks.iter().map(|c| (*c).to_owned()).collect();
        Self::Text {
            chunks,
            delay_ms: 0,
            reasoning: Vec::new(),
            usage: None,
        }
    }

    /// Sets the delay between chunks of a `Text` reply (panics on other variants).
    pub fn with_delay_ms(mut self, ms: u64) -> Self {
        match &mut self {
            Self::Text { delay_ms, .. } => *delay_ms = ms,
            other => panic!("with_delay_ms on a non-text reply: {other:?}"),
        }
        self
    }

    /// Sets the reasoning chunks of a text or tool-call reply (panics on other variants).
    pub fn with_reasoning(mut self, chunks: &[&str]) -> Self {
        match &mut self {
            Self::Text { reasoning, .. } | Self::ToolCalls { reasoning, .. } => {
                *reasoning = chunks.iter().map(|c| (*c).to_owned()).collect();
            }
            other => panic!("with_reasoning on a non-text reply: {other:?}"),
        }
        self
    }

    /// Sets the usage of a `Text` reply (panics on other variants).
    pub fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        match &mut self {
            Self::Text { usage, .. } => {
                *usage = Some(Usage {
                    input_tokens,
                    output_tokens,
                    ..Usage::default()
                })
            }
            other => panic!("with_usage on a non-text reply: {other:?}"),
        }
        self
    }

    /// Sets the cache tokens of a `Text` reply's usage (after [`Self::with_usage`]).
    pub fn with_cache(mut self, read: u64, write: u64) -> Self {
        match &mut self {
            Self::Text {
                usage: Some(usage), ..
            } => {
                usage.cache_read_tokens = read;
                usage.cache_write_tokens = write;
            }
            other => panic!("with_cache on a reply without usage: {other:?}"),
        }
        self
    }

    /// One tool call with its arguments in one piece.
    pub fn tool_call(name: &str, arguments: &str) -> Self {
        Self::tool_calls(vec![ToolCall::new(name, arguments)])
    }

    /// One tool call with its arguments split into `n` pieces.
    pub fn tool_call_chunked(name: &str, arguments: &str, n: usize) -> Self {
        Self::tool_calls(vec![ToolCall::new(name, arguments).chunked(n)])
    }

    /// Several (parallel) tool calls and no text.
    pub fn tool_calls(calls: Vec<ToolCall>) -> Self {
        Self::ToolCalls {
            text: None,
            calls,
            reasoning: Vec::new(),
        }
    }

    /// Any status with a verbatim JSON body.
    pub fn error(status: u16, body: &str) -> Self {
        Self::Error {
            status,
            retry_after: None,
            location: None,
            body: body.to_owned(),
        }
    }

    /// A redirect to `location`, with an empty body.
    pub fn redirect(status: u16, location: &str) -> Self {
        Self::Error {
            status,
            retry_after: None,
            location: Some(location.to_owned()),
            body: String::new(),
        }
    }

    /// OpenAI 429 with a `Retry-After` header.
    pub fn rate_limited(retry_after: &str) -> Self {
        let body = openai_error("Rate limit reached (fake)", "rate_limit_exceeded", None);
        Self::Error {
            status: 429,
            retry_after: Some(retry_after.to_owned()),
            location: None,
            body,
        }
    }

    /// OpenAI 401.
    pub fn unauthorized() -> Self {
        let body = openai_error(
            "Incorrect API key provided (fake)",
            "invalid_request_error",
            Some("invalid_api_key"),
        );
        Self::error(401, &body)
    }

    /// 413 request too large.
    pub fn payload_too_large() -> Self {
        Self::error(
            413,
            &openai_error("Request too large (fake)", "invalid_request_error", None),
        )
    }

    /// 500 internal error.
    pub fn server_error() -> Self {
        Self::error(
            500,
            &openai_error("The server had an error (fake)", "server_error", None),
        )
    }

    /// 529 overloaded, OpenAI-shaped body.
    pub fn overloaded() -> Self {
        Self::error(
            529,
            &openai_error("Overloaded (fake)", "server_error", None),
        )
    }

    /// OpenAI 400 `context_length_exceeded`.
    pub fn context_overflow() -> Self {
        let message = "This model's maximum context length is 8192 tokens. However, your messages \
                       resulted in 9000 tokens. Please reduce the length of the messages.";
        Self::error(
            400,
            &openai_error(
                message,
                "invalid_request_error",
                Some("context_length_exceeded"),
            ),
        )
    }

    /// Anthropic 429 `rate_limit_error` with a `Retry-After` header.
    pub fn anthropic_rate_limited(retry_after: &str) -> Self {
        let body = anthropic_error(
            "rate_limit_error",
            "Number of requests has exceeded your rate limit (fake)",
        );
        Self::Error {
            status: 429,
            retry_after: Some(retry_after.to_owned()),
            location: None,
            body,
        }
    }

    /// Anthropic 401 `authentication_error`.
    pub fn anthropic_unauthorized() -> Self {
        Self::error(
            401,
            &anthropic_error("authentication_error", "invalid x-api-key (fake)"),
        )
    }

    /// Anthropic 529 `overloaded_error`.
    pub fn anthropic_overloaded() -> Self {
        Self::error(529, &anthropic_error("overloaded_error", "Overloaded"))
    }

    /// Anthropic 400 prompt too long.
    pub fn anthropic_prompt_too_long() -> Self {
        let message = "prompt is too long: 250000 tokens > 200000 maximum";
        Self::error(400, &anthropic_error("invalid_request_error", message))
    }

    /// See [`Reply::StallBeforeHeaders`].
    pub fn stall_before_headers(ms: u64) -> Self {
        Self::StallBeforeHeaders { ms }
    }

    /// See [`Reply::StallAfterHeaders`].
    pub fn stall_after_headers(ms: u64, chunks_before: &[&str]) -> Self {
        Self::StallAfterHeaders {
            ms,
            chunks_before: chunks_before.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    /// See [`Reply::Held`].
    pub fn held(before: &[&str], after: &[&str]) -> Self {
        let owned = |chunks: &[&str]| chunks.iter().map(|c| (*c).to_owned()).collect();
        Self::Held {
            before: owned(before),
            after: owned(after),
        }
    }

    /// See [`Reply::CutMidStream`].
    pub fn cut_mid_stream(chunks_before: &[&str]) -> Self {
        Self::CutMidStream {
            chunks_before: chunks_before.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    /// See [`Reply::InvalidToolArguments`].
    pub fn invalid_tool_arguments(name: &str) -> Self {
        Self::InvalidToolArguments {
            name: name.to_owned(),
        }
    }

    /// See [`Reply::Loop`].
    pub fn tool_loop(tool: &str, arguments: &str, until_results: usize, final_text: &str) -> Self {
        Self::Loop {
            tool: tool.to_owned(),
            arguments: arguments.to_owned(),
            until_results,
            final_text: final_text.to_owned(),
            forever: false,
        }
    }

    /// Every turn from now on: one call of `tool` with `arguments`, then `final_text` (a bench's
    /// model, serving any number of turns, also at once, in any order).
    pub fn every_turn(tool: &str, arguments: &str, final_text: &str) -> Self {
        Self::Loop {
            tool: tool.to_owned(),
            arguments: arguments.to_owned(),
            until_results: 1,
            final_text: final_text.to_owned(),
            forever: true,
        }
    }
}

/// A model listed by `GET /v1/models` and known to `POST /api/show`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FakeModel {
    pub id: String,
    #[serde(default)]
    pub context_length: Option<u64>,
    #[serde(default)]
    pub max_model_len: Option<u64>,
    /// Architecture for `/api/show`'s `<arch>.context_length` key; `llama` when absent.
    #[serde(default)]
    pub ollama_arch: Option<String>,
    /// A context length only `/api/show` reports (as Ollama does; its `/v1/models` has none).
    #[serde(default)]
    pub ollama_context_length: Option<u64>,
    /// OpenRouter's `architecture.input_modalities` in `/v1/models` (`["text", "image"]`).
    #[serde(default)]
    pub input_modalities: Option<Vec<String>>,
    /// Ollama's `capabilities` in `/api/show` (`["completion", "vision"]`).
    #[serde(default)]
    pub ollama_capabilities: Option<Vec<String>>,
}

impl FakeModel {
    /// A model with no context-length information.
    pub fn new(id: &str) -> Self {
        Self {
            id: id.to_owned(),
            ..Self::default()
        }
    }

    /// Reports `context_length` (OpenRouter / LM Studio style).
    pub fn with_context_length(mut self, n: u64) -> Self {
        self.context_length = Some(n);
        self
    }

    /// Reports the context length only through `/api/show` under `<arch>.context_length`.
    pub fn ollama(id: &str, arch: &str, n: u64) -> Self {
        Self {
            id: id.to_owned(),
            ollama_arch: Some(arch.to_owned()),
            ollama_context_length: Some(n),
            ..Self::default()
        }
    }

    /// Reports `architecture.input_modalities` in `/v1/models` (OpenRouter style).
    pub fn with_input_modalities(mut self, modalities: &[&str]) -> Self {
        self.input_modalities = Some(modalities.iter().map(|m| m.to_string()).collect());
        self
    }

    /// Reports `capabilities` in `/api/show` (Ollama 0.6+).
    pub fn with_ollama_capabilities(mut self, capabilities: &[&str]) -> Self {
        self.ollama_capabilities = Some(capabilities.iter().map(|c| c.to_string()).collect());
        self
    }

    /// Reports `max_model_len` (vLLM style).
    pub fn with_max_model_len(mut self, n: u64) -> Self {
        self.max_model_len = Some(n);
        self
    }
}

/// A script file: either a bare list of replies, or `{models: [...], replies: [...]}`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptFile {
    #[serde(default)]
    pub models: Vec<FakeModel>,
    pub replies: Vec<Reply>,
}

impl ScriptFile {
    /// Parses YAML (which also accepts JSON).
    pub fn parse(text: &str) -> Result<Self, serde_yaml::Error> {
        let value: serde_yaml::Value = serde_yaml::from_str(text)?;
        if value.is_sequence() {
            Ok(Self {
                models: Vec::new(),
                replies: serde_yaml::from_value(value)?,
            })
        } else {
            serde_yaml::from_value(value)
        }
    }
}
