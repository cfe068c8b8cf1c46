//! OpenAI-compatible chat completions (OpenAI, OpenRouter, Nous, DeepSeek, Ollama, vLLM, llama.cpp,
//! LM Studio, …): request shape, SSE stream parsing, and the non-streaming adapter.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    assemble::Assembler,
    endpoint::Endpoint,
    error::{ErrorClass, LlmError},
    http, sse, text_tools,
    types::{ChatRequest, Completion, EventSink, Image, Role, Usage},
};

/// The JSON body of a request.
pub fn body(endpoint: &Endpoint, request: &ChatRequest, stream: bool) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    // OpenAI's tool messages hold text only: images of a run of tool results follow it as one
    // user message.
    let mut tool_images: Vec<&Image> = Vec::new();
    for m in &request.messages {
        if m.role() != Role::Tool && !tool_images.is_empty() {
            messages.push(tool_images_message(&std::mem::take(&mut tool_images)));
        }
        let mut message = json!({"role": m.role(), "content": m.content});
        if m.role() == Role::Tool {
            tool_images.extend(&m.images);
        } else if !m.images.is_empty() {
            message["content"] = with_images(&m.content, m.images.iter());
        }
        if !m.tool_calls.is_empty() {
            message["tool_calls"] = m
                .tool_calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                .collect();
            if m.content.is_empty() {
                message["content"] = Value::Null;
            }
        }
        if m.role() == Role::Tool {
            message["tool_call_id"] = json!(m.tool_call_id.clone().unwrap_or_default());
            if let Some(name) = &m.name {
                message["name"] = json!(name);
            }
        }
        messages.push(message);
    }
    if !tool_images.is_empty() {
        messages.push(tool_images_message(&tool_images));
    }
    let mut body = json!({"model": endpoint.model, "messages": messages, "stream": stream});
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
    }
    if let Some(max) = request.max_tokens {
        body["max_tokens"] = json!(max);
    }
    body
}

/// Content parts: the text, then each image as an `image_url` with a `data:` URL.
fn with_images<'a>(text: &str, images: impl Iterator<Item = &'a Image>) -> Value {
    let mut parts = vec![json!({"type": "text", "text": text})];
    parts.extend(images.map(|i| json!({"type": "image_url", "image_url": {"url": i.data_url()}})));
    Value::Array(parts)
}

/// The user message that carries the images of the tool results before it.
fn tool_images_message(images: &[&Image]) -> Value {
    json!({
        "role": "user",
        "content": with_images(
            "[The images returned by the tool results above.]",
            images.iter().copied()
        ),
    })
}

fn usage_of(value: &Value) -> Usage {
    let n = |p: &str| value.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: n("/prompt_tokens"),
        output_tokens: n("/completion_tokens"),
        cache_read_tokens: n("/prompt_tokens_details/cached_tokens"),
        cache_write_tokens: n("/prompt_tokens_details/cache_write_tokens"),
        reasoning_tokens: n("/completion_tokens_details/reasoning_tokens"),
        reported_cost_usd: value.get("cost").and_then(Value::as_f64),
    }
}

fn reasoning_of(value: &Value) -> Option<&str> {
    value
        .get("reasoning_content")
        .or_else(|| value.get("reasoning"))
        .and_then(Value::as_str)
}

/// Call the endpoint, streaming or not; events go to `sink` either way.
pub async fn call(
    client: &super::HttpClient,
    endpoint: &Endpoint,
    request: &ChatRequest,
    stream: bool,
    sink: &mut EventSink<'_>,
) -> Result<Completion, LlmError> {
    let label = endpoint.label();
    let mut builder = client
        .post(endpoint.url())
        .json(&body(endpoint, request, stream));
    if let Some(key) = &endpoint.api_key {
        builder = builder.bearer_auth(key);
    }
    let response = http::send(builder, endpoint).await?;
    let mut asm = Assembler::new(sink);
    if stream {
        read_stream(response, endpoint, &mut asm).await?;
    } else {
        let value = http::read_json(response, endpoint).await?;
        let message = value
            .pointer("/choices/0/message")
            .cloned()
            .unwrap_or(Value::Null);
        if let Some(reasoning) = reasoning_of(&message) {
            asm.reasoning(reasoning);
        }
        asm.text(message.get("content").and_then(Value::as_str).unwrap_or(""));
        for (index, call) in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            asm.tool_call(
                index,
                call.get("id").and_then(Value::as_str),
                call.pointer("/function/name").and_then(Value::as_str),
                call.pointer("/function/arguments")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            );
        }
        asm.usage(usage_of(value.get("usage").unwrap_or(&Value::Null)));
        asm.finish_reason(
            value
                .pointer("/choices/0/finish_reason")
                .and_then(Value::as_str)
                .unwrap_or("stop"),
        );
    }
    let mut completion = asm.finish(&label);
    if completion.tool_calls.is_empty() && completion.text.contains('{') {
        let tools: Vec<String> = request.tools.iter().map(|t| t.name.clone()).collect();
        let (text, calls) = text_tools::extract(&completion.text, endpoint.text_tool_calls, &tools);
        if !calls.is_empty() {
            completion.text = text;
            completion.tool_calls = calls;
            completion.finish_reason = "tool_calls".into();
        }
    }
    Ok(completion)
}

/// One streamed chunk, parsed without building a JSON tree (this runs once per token).
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    choices: Vec<Choice<'a>>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    delta: Delta<'a>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tool_calls: Vec<ToolDelta<'a>>,
}

#[derive(Deserialize)]
struct ToolDelta<'a> {
    #[serde(default)]
    index: usize,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    arguments: Option<Cow<'a, str>>,
}

async fn read_stream(
    response: super::transport::Response,
    endpoint: &Endpoint,
    asm: &mut Assembler<'_, '_>,
) -> Result<(), LlmError> {
    let label = endpoint.label();
    let end = sse::read_events(response, endpoint.stale_timeout, |data| {
        handle_chunk(&label, data, asm)
    })
    .await;
    // Some servers close without `[DONE]` after the final chunk: complete if it said why it stopped.
    end.into_result(endpoint, asm.has_finish_reason())
}

/// Apply one `data:` payload; `Ok(true)` at `[DONE]`.
pub(super) fn handle_chunk(
    label: &str,
    data: &str,
    asm: &mut Assembler<'_, '_>,
) -> Result<bool, LlmError> {
    if data.trim() == "[DONE]" {
        return Ok(true);
    }
    let chunk: Chunk<'_> = serde_json::from_str(data).map_err(|e| {
        LlmError::new(
            ErrorClass::StreamCut,
            label,
            format!("malformed stream chunk ({e})"),
        )
    })?;
    if let Some(error) = chunk.error {
        let status = error.get("code").and_then(Value::as_u64).unwrap_or(500) as u16;
        let body = json!({"error": error}).to_string();
        return Err(super::error::classify_http(label, status, None, &body));
    }
    if let Some(usage) = chunk.usage.filter(Value::is_object) {
        asm.usage(usage_of(&usage));
    }
    let Some(choice) = chunk.choices.into_iter().next() else {
        return Ok(false);
    };
    let delta = choice.delta;
    if let Some(reasoning) = delta.reasoning_content.or(delta.reasoning) {
        asm.reasoning(&reasoning);
    }
    if let Some(text) = delta.content {
        asm.text(&text);
    }
    for call in delta.tool_calls {
        let function = call.function;
        asm.tool_call(
            call.index,
            call.id.as_deref(),
            function.as_ref().and_then(|f| f.name.as_deref()),
            function
                .as_ref()
                .and_then(|f| f.arguments.as_deref())
                .unwrap_or(""),
        );
    }
    if let Some(reason) = choice.finish_reason {
        asm.finish_reason(&reason);
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_of_tool_results_follow_them_as_one_user_message() {
        let image = crate::llm::Image {
            media_type: "image/png".into(),
            base64: "aGk=".into(),
        };
        let tool = |id: &str, images: Vec<crate::llm::Image>| crate::llm::ChatMessage {
            role: Some(Role::Tool),
            content: format!("result {id}"),
            tool_call_id: Some(id.into()),
            images,
            ..crate::llm::ChatMessage::default()
        };
        let mut user = crate::llm::ChatMessage::user("and this?");
        user.images = vec![image.clone()];
        let request = ChatRequest {
            messages: vec![
                tool("t1", vec![image.clone()]),
                tool("t2", Vec::new()),
                crate::llm::ChatMessage::assistant("seen"),
                user,
            ],
            ..ChatRequest::default()
        };
        let endpoint = crate::llm::Endpoint {
            provider: "custom".into(),
            model: "gpt-4o".into(),
            base_url: "http://x".into(),
            api_key: None,
            api_mode: super::super::endpoint::ApiMode::ChatCompletions,
            stale_timeout: std::time::Duration::from_secs(1),
            connect_timeout: std::time::Duration::from_secs(1),
            text_tool_calls: false,
            pool: None,
            context_length: None,
        };
        let body = body(&endpoint, &request, false);
        let messages = body["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["tool", "tool", "user", "assistant", "user"]);
        assert_eq!(
            messages[0]["content"], "result t1",
            "a tool message stays text"
        );
        assert_eq!(messages[2]["content"][1]["type"], "image_url");
        assert_eq!(
            messages[2]["content"][1]["image_url"]["url"],
            "data:image/png;base64,aGk="
        );
        assert_eq!(messages[4]["content"][0]["text"], "and this?");
        assert_eq!(messages[4]["content"][1]["type"], "image_url");
    }
}
