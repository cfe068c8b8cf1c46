//! Anthropic messages API: request shape with prompt-cache marks, SSE events, non-streaming adapter.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    assemble::Assembler,
    endpoint::Endpoint,
    error::{ErrorClass, LlmError, classify_http},
    http, sse,
    types::{ChatMessage, ChatRequest, Completion, EventSink, Role, Usage},
};

const API_VERSION: &str = "2023-06-01";
const DEFAULT_MAX_TOKENS: u32 = 8192;
/// Cache breakpoints on the last messages; with the system prompt that makes Anthropic's maximum of 4.
const CACHED_TAIL: usize = 3;

/// A cache breakpoint: Anthropic's default 5-minute cache, or the hour `prompt_caching.cache_ttl:
/// 1h` asks for.
fn ephemeral(request: &ChatRequest) -> Value {
    match request.cache_ttl.as_deref() {
        Some("1h") => json!({"type": "ephemeral", "ttl": "1h"}),
        _ => json!({"type": "ephemeral"}),
    }
}

/// Content blocks of one message.
fn blocks(message: &ChatMessage) -> Vec<Value> {
    let images = message.images.iter().map(|i| {
        json!({"type": "image", "source": {"type": "base64", "media_type": i.media_type, "data": &*i.base64}})
    });
    match message.role() {
        Role::Tool if message.images.is_empty() => vec![json!({
            "type": "tool_result",
            "tool_use_id": message.tool_call_id.clone().unwrap_or_default(),
            "content": message.content,
        })],
        Role::Tool => {
            let mut content = vec![json!({"type": "text", "text": message.content})];
            content.extend(images);
            vec![json!({
                "type": "tool_result",
                "tool_use_id": message.tool_call_id.clone().unwrap_or_default(),
                "content": content,
            })]
        }
        Role::Assistant => {
            let mut out = Vec::new();
            if !message.content.is_empty() {
                out.push(json!({"type": "text", "text": message.content}));
            }
            for call in &message.tool_calls {
                let input = call.parsed_arguments().unwrap_or_else(|_| json!({}));
                out.push(
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}),
                );
            }
            out
        }
        Role::User | Role::System => {
            let mut out = vec![json!({"type": "text", "text": message.content})];
            out.extend(images);
            out
        }
    }
}

/// Messages with tool results folded into user turns and same-role neighbours merged, as the API requires.
fn messages(request: &ChatRequest) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let role = if message.role() == Role::Assistant {
            "assistant"
        } else {
            "user"
        };
        let content = blocks(message);
        if content.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(content),
            _ => out.push((role, content)),
        }
    }
    let count = out.len();
    out.into_iter()
        .enumerate()
        .map(|(index, (role, mut content))| {
            if index + CACHED_TAIL >= count
                && let Some(last) = content.last_mut()
            {
                last["cache_control"] = ephemeral(request);
            }
            json!({"role": role, "content": content})
        })
        .collect()
}

/// The JSON body of a request.
pub fn body(endpoint: &Endpoint, request: &ChatRequest, stream: bool) -> Value {
    let mut body = json!({
        "model": endpoint.model,
        "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": messages(request),
        "stream": stream,
    });
    if !request.system.is_empty() {
        body["system"] =
            json!([{"type": "text", "text": request.system, "cache_control": ephemeral(request)}]);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

fn usage_of(value: &Value) -> Usage {
    let n = |k: &str| value.get(k).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: n("input_tokens"),
        output_tokens: n("output_tokens"),
        cache_read_tokens: n("cache_read_input_tokens"),
        cache_write_tokens: n("cache_creation_input_tokens"),
        reported_cost_usd: None,
        reasoning_tokens: 0,
    }
}

/// Call the endpoint, streaming or not; events go to `sink` either way.
pub async fn call(
    client: &super::HttpClient,
    endpoint: &Endpoint,
    request: &ChatRequest,
    stream: bool,
    sink: &mut EventSink<'_>,
) -> Result<Completion, LlmError> {
    let mut builder = client
        .post(endpoint.url())
        .header("anthropic-version", API_VERSION)
        .json(&body(endpoint, request, stream));
    if let Some(key) = &endpoint.api_key {
        builder = builder.header("x-api-key", key);
    }
    let response = http::send(builder, endpoint).await?;
    let mut asm = Assembler::new(sink);
    if stream {
        read_stream(response, endpoint, &mut asm).await?;
    } else {
        let value = http::read_json(response, endpoint).await?;
        let mut tool_index = 0;
        for block in value
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => asm.text(block.get("text").and_then(Value::as_str).unwrap_or("")),
                Some("thinking") => {
                    asm.reasoning(block.get("thinking").and_then(Value::as_str).unwrap_or(""));
                }
                Some("tool_use") => {
                    let input = block.get("input").map(Value::to_string).unwrap_or_default();
                    asm.tool_call(
                        tool_index,
                        block.get("id").and_then(Value::as_str),
                        block.get("name").and_then(Value::as_str),
                        &input,
                    );
                    tool_index += 1;
                }
                _ => {}
            }
        }
        asm.usage(usage_of(value.get("usage").unwrap_or(&Value::Null)));
        asm.finish_reason(
            value
                .get("stop_reason")
                .and_then(Value::as_str)
                .unwrap_or("end_turn"),
        );
    }
    Ok(asm.finish(&endpoint.label()))
}

/// One stream event, parsed without building a JSON tree for the hot `content_block_delta`.
#[derive(Deserialize)]
struct StreamData<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    index: usize,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default)]
    content_block: Option<Value>,
    #[serde(default)]
    message: Option<Value>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    stop_reason: Option<Cow<'a, str>>,
}

async fn read_stream(
    response: super::transport::Response,
    endpoint: &Endpoint,
    asm: &mut Assembler<'_, '_>,
) -> Result<(), LlmError> {
    let label = endpoint.label();
    // Anthropic numbers content blocks; tool calls are numbered among themselves.
    let mut blocks = BlockTools::default();
    let end = sse::read_events(response, endpoint.stale_timeout, |data| {
        handle_event(&label, data, &mut blocks, asm)
    })
    .await;
    end.into_result(endpoint, false)
}

/// Which content blocks are tool calls, and the tool-call index of each.
#[derive(Default)]
pub(super) struct BlockTools {
    tool_of_block: Vec<Option<usize>>,
    tools: usize,
}

/// Apply one event; `Ok(true)` at `message_stop`.
pub(super) fn handle_event(
    label: &str,
    data: &str,
    blocks: &mut BlockTools,
    asm: &mut Assembler<'_, '_>,
) -> Result<bool, LlmError> {
    let data: StreamData<'_> = serde_json::from_str(data).map_err(|e| {
        LlmError::new(
            ErrorClass::StreamCut,
            label,
            format!("malformed stream event ({e})"),
        )
    })?;
    let block_index = data.index;
    match data.kind.as_ref() {
        "content_block_delta" => {
            let Some(delta) = data.delta else {
                return Ok(false);
            };
            match delta.kind.as_deref() {
                Some("text_delta") => asm.text(delta.text.as_deref().unwrap_or("")),
                Some("thinking_delta") => asm.reasoning(delta.thinking.as_deref().unwrap_or("")),
                Some("input_json_delta") => {
                    if let Some(Some(index)) = blocks.tool_of_block.get(block_index) {
                        asm.tool_call(
                            *index,
                            None,
                            None,
                            delta.partial_json.as_deref().unwrap_or(""),
                        );
                    }
                }
                _ => {}
            }
        }
        "message_start" => {
            let usage = data.message.as_ref().and_then(|m| m.get("usage"));
            asm.usage(usage_of(usage.unwrap_or(&Value::Null)));
        }
        "content_block_start" => {
            let block = data.content_block.unwrap_or(Value::Null);
            if blocks.tool_of_block.len() <= block_index {
                blocks.tool_of_block.resize(block_index + 1, None);
            }
            if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                blocks.tool_of_block[block_index] = Some(blocks.tools);
                asm.tool_call(
                    blocks.tools,
                    block.get("id").and_then(Value::as_str),
                    block.get("name").and_then(Value::as_str),
                    "",
                );
                blocks.tools += 1;
            }
        }
        "message_delta" => {
            asm.usage(usage_of(data.usage.as_ref().unwrap_or(&Value::Null)));
            if let Some(reason) = data.delta.and_then(|d| d.stop_reason) {
                asm.finish_reason(&reason);
            }
        }
        "message_stop" => return Ok(true),
        "error" => {
            let error = data.error.unwrap_or(Value::Null);
            let kind = error.get("type").and_then(Value::as_str).unwrap_or("");
            let status = match kind {
                "overloaded_error" => 529,
                "rate_limit_error" => 429,
                "invalid_request_error" => 400,
                "authentication_error" => 401,
                _ => 500,
            };
            let body = json!({"type": "error", "error": error}).to_string();
            return Err(classify_http(label, status, None, &body));
        }
        _ => {}
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::types::ToolCall;

    fn endpoint() -> Endpoint {
        Endpoint {
            provider: "anthropic".into(),
            model: "claude".into(),
            base_url: "http://x".into(),
            api_key: None,
            api_mode: super::super::endpoint::ApiMode::AnthropicMessages,
            stale_timeout: std::time::Duration::from_secs(1),
            connect_timeout: std::time::Duration::from_secs(1),
            text_tool_calls: false,
            pool: None,
            context_length: None,
        }
    }

    #[test]
    fn cache_marks_on_system_and_last_three_messages_only() {
        let mut request = ChatRequest {
            system: "you are hermes".into(),
            ..ChatRequest::default()
        };
        for i in 0..6 {
            request.messages.push(if i % 2 == 0 {
                ChatMessage::user(format!("u{i}"))
            } else {
                ChatMessage::assistant(format!("a{i}"))
            });
        }
        let body = body(&endpoint(), &request, true);
        let marks = body.to_string().matches("cache_control").count();
        assert_eq!(marks, 4, "{body}");
        assert!(body["system"][0]["cache_control"].is_object());
        let messages = body["messages"].as_array().unwrap();
        assert!(messages[2]["content"][0].get("cache_control").is_none());
        assert!(messages[3]["content"][0]["cache_control"].is_object());
        assert!(messages[5]["content"][0]["cache_control"].is_object());
        assert!(
            messages[5]["content"][0]["cache_control"]
                .get("ttl")
                .is_none()
        );
        request.cache_ttl = Some("1h".into());
        let body = super::body(&endpoint(), &request, true);
        assert_eq!(body["system"][0]["cache_control"]["ttl"], "1h");
        assert_eq!(
            body["messages"][5]["content"][0]["cache_control"]["ttl"],
            "1h"
        );
    }

    #[test]
    fn images_ride_in_the_tool_result_and_the_user_message() {
        let image = crate::llm::Image {
            media_type: "image/png".into(),
            base64: "aGk=".into(),
        };
        let mut result = ChatMessage {
            role: Some(Role::Tool),
            content: "MEDIA:/x.png".into(),
            tool_call_id: Some("t1".into()),
            ..ChatMessage::default()
        };
        result.images = vec![image.clone()];
        let mut user = ChatMessage::user("what is this?");
        user.images = vec![image];
        let request = ChatRequest {
            messages: vec![result, ChatMessage::assistant("a"), user],
            ..ChatRequest::default()
        };
        let body = body(&endpoint(), &request, false);
        let result = &body["messages"][0]["content"][0];
        assert_eq!(result["type"], "tool_result");
        assert_eq!(result["content"][0]["text"], "MEDIA:/x.png");
        assert_eq!(result["content"][1]["type"], "image");
        assert_eq!(result["content"][1]["source"]["media_type"], "image/png");
        assert_eq!(result["content"][1]["source"]["data"], "aGk=");
        let user = &body["messages"][2]["content"];
        assert_eq!(user[0]["text"], "what is this?");
        assert_eq!(user[1]["source"]["type"], "base64");
    }

    #[test]
    fn tool_results_fold_into_one_user_turn() {
        let mut assistant = ChatMessage::assistant("");
        assistant.tool_calls = vec![
            ToolCall {
                id: "t1".into(),
                name: "a".into(),
                arguments: "{}".into(),
            },
            ToolCall {
                id: "t2".into(),
                name: "b".into(),
                arguments: "{\"x\":1}".into(),
            },
        ];
        let result = |id: &str| ChatMessage {
            role: Some(Role::Tool),
            content: "ok".into(),
            tool_call_id: Some(id.into()),
            ..ChatMessage::default()
        };
        let request = ChatRequest {
            messages: vec![
                ChatMessage::user("go"),
                assistant,
                result("t1"),
                result("t2"),
            ],
            ..ChatRequest::default()
        };
        let messages = messages(&request);
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[1]["content"][1]["input"]["x"], 1);
        assert_eq!(messages[2]["role"], "user");
        assert_eq!(messages[2]["content"].as_array().unwrap().len(), 2);
        assert_eq!(messages[2]["content"][1]["tool_use_id"], "t2");
    }
}
