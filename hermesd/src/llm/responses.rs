//! The OpenAI Responses API (`api_mode: codex_responses`; OpenAI's newer models and the Codex
//! login): the request (instructions, input items, function tools, reasoning), the streamed
//! events, the non-streaming body, and the reasoning items a response returns — kept with the
//! assistant message and sent back on the next request, as Hermes does (`store: false`, so the
//! server keeps nothing).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    assemble::Assembler,
    endpoint::Endpoint,
    error::{ErrorClass, LlmError},
    http, sse,
    types::{ChatRequest, Completion, EventSink, Role, Usage},
};

/// The effort sent when `agent.reasoning_effort` says nothing (Hermes' default).
const DEFAULT_EFFORT: &str = "medium";

/// The JSON body of a request (the stored reasoning items sent back).
#[cfg(test)]
pub fn body(endpoint: &Endpoint, request: &ChatRequest, stream: bool) -> Value {
    body_with(endpoint, request, stream, true)
}

/// The body, with the stored reasoning items sent back or not (`replay`).
fn body_with(endpoint: &Endpoint, request: &ChatRequest, stream: bool, replay: bool) -> Value {
    let mut input = Vec::with_capacity(request.messages.len());
    let mut instructions = request.system.clone();
    for m in &request.messages {
        match m.role() {
            Role::System => {
                if !instructions.is_empty() {
                    instructions.push_str("\n\n");
                }
                instructions.push_str(&m.content);
            }
            Role::User => input.push(user_item(&m.content, &m.images)),
            Role::Assistant => {
                if let Some(items) = m.provider_items.as_deref().filter(|_| replay)
                    && let Ok(Value::Array(items)) = serde_json::from_str::<Value>(items)
                {
                    input.extend(items);
                }
                if !m.content.is_empty() {
                    input.push(json!({"role": "assistant", "content": m.content}));
                }
                input.extend(m.tool_calls.iter().map(|c| {
                    json!({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments})
                }));
            }
            Role::Tool => {
                input.push(json!({
                    "type": "function_call_output",
                    "call_id": m.tool_call_id.clone().unwrap_or_default(),
                    "output": m.content,
                }));
                if !m.images.is_empty() {
                    let text = "[The images returned by the tool result above.]";
                    input.push(user_item(text, &m.images));
                }
            }
        }
    }
    let mut body = json!({
        "model": endpoint.model,
        "instructions": instructions,
        "input": input,
        "store": false,
        "stream": stream,
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "strict": false, "parameters": t.parameters}))
            .collect();
        body["tool_choice"] = json!("auto");
        body["parallel_tool_calls"] = json!(true);
    }
    match request.reasoning_effort.as_deref().map(str::trim) {
        Some("none" | "false" | "disabled") => {}
        effort => {
            let effort = match effort.filter(|e| !e.is_empty()).unwrap_or(DEFAULT_EFFORT) {
                "minimal" => "low",
                other => other,
            };
            body["reasoning"] = json!({"effort": effort, "summary": "auto"});
            body["include"] = json!(["reasoning.encrypted_content"]);
        }
    }
    if let Some(max) = request.max_tokens {
        body["max_output_tokens"] = json!(max);
    }
    body
}

fn user_item(text: &str, images: &[super::types::Image]) -> Value {
    if images.is_empty() {
        return json!({"role": "user", "content": text});
    }
    let mut parts = vec![json!({"type": "input_text", "text": text})];
    parts.extend(
        images
            .iter()
            .map(|i| json!({"type": "input_image", "image_url": i.data_url()})),
    );
    json!({"role": "user", "content": parts})
}

/// Usage: `input_tokens` counts the cached ones too (as chat completions' `prompt_tokens`).
fn usage_of(usage: &Value) -> Usage {
    let n = |p: &str| usage.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: n("/input_tokens"),
        output_tokens: n("/output_tokens"),
        cache_read_tokens: n("/input_tokens_details/cached_tokens"),
        cache_write_tokens: n("/input_tokens_details/cache_creation_tokens"),
        reasoning_tokens: n("/output_tokens_details/reasoning_tokens"),
        reported_cost_usd: None,
    }
}

/// A failed response or an `error` event, in the existing classes: a used-up quota is billing,
/// a rate limit waits, an over-long prompt compresses.
fn failure(label: &str, error: &Value) -> LlmError {
    let code = error.get("code").and_then(Value::as_str).unwrap_or("");
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the response failed")
        .to_string();
    let class = match code {
        "rate_limit_exceeded" | "resource_exhausted" | "throttled" => ErrorClass::RateLimit,
        "insufficient_quota" | "billing_not_active" | "usage_limit_reached" => ErrorClass::Billing,
        "context_length_exceeded" | "max_tokens_exceeded" => ErrorClass::ContextOverflow,
        "invalid_api_key" | "token_expired" | "invalid_token" => ErrorClass::Auth,
        "server_error" | "" => ErrorClass::Server,
        _ => ErrorClass::BadRequest,
    };
    let shown = if code.is_empty() {
        message
    } else {
        format!("{code}: {message}")
    };
    LlmError::new(class, label, shown)
}

/// What a response builds up beside the assembler: the reasoning items to send back, and which
/// function calls streamed their arguments.
#[derive(Default)]
pub(super) struct Items {
    reasoning: Vec<Value>,
    streamed_arguments: std::collections::HashSet<usize>,
}

impl Items {
    /// A finished output item: a reasoning item is kept (without its id: with `store: false` the
    /// server knows no ids); a function call whose arguments did not stream gives them now.
    fn done(&mut self, index: usize, item: &Value, asm: &mut Assembler<'_, '_>) {
        match item.get("type").and_then(Value::as_str) {
            Some("reasoning") if item.get("encrypted_content").is_some() => {
                let mut kept = item.clone();
                if let Some(map) = kept.as_object_mut() {
                    map.remove("id");
                    map.remove("status");
                }
                self.reasoning.push(kept);
            }
            Some("function_call") if !self.streamed_arguments.contains(&index) => {
                let text = |k: &str| item.get(k).and_then(Value::as_str);
                let arguments = text("arguments").unwrap_or("");
                asm.tool_call(index, text("call_id"), text("name"), arguments);
            }
            _ => {}
        }
    }

    pub(super) fn provider_items(&self) -> Option<String> {
        (!self.reasoning.is_empty()).then(|| Value::Array(self.reasoning.clone()).to_string())
    }
}

/// One streamed event, parsed without a JSON tree for the per-token deltas (items and the final
/// response, once each, keep theirs).
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    delta: Option<Cow<'a, str>>,
    #[serde(default)]
    output_index: usize,
    #[serde(default)]
    item: Option<Value>,
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default, borrow)]
    code: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    message: Option<Cow<'a, str>>,
}

/// Apply one streamed event; `Ok(true)` once the response is complete.
pub(super) fn handle_event(
    label: &str,
    data: &str,
    asm: &mut Assembler<'_, '_>,
    items: &mut Items,
) -> Result<bool, LlmError> {
    let event: Event<'_> = serde_json::from_str(data).map_err(|e| {
        LlmError::new(
            ErrorClass::StreamCut,
            label,
            format!("malformed stream event ({e})"),
        )
    })?;
    let index = event.output_index;
    let delta = event.delta.as_deref().unwrap_or("");
    match event.kind.as_ref() {
        "response.output_text.delta" => asm.text(delta),
        "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
            asm.reasoning(delta);
        }
        "response.output_item.added" => {
            let item = event.item.as_ref().unwrap_or(&Value::Null);
            if item.get("type").and_then(Value::as_str) == Some("function_call") {
                let field = |k: &str| item.get(k).and_then(Value::as_str);
                asm.tool_call(index, field("call_id"), field("name"), "");
            }
        }
        "response.function_call_arguments.delta" => {
            items.streamed_arguments.insert(index);
            asm.tool_call(index, None, None, delta);
        }
        "response.output_item.done" => {
            items.done(index, event.item.as_ref().unwrap_or(&Value::Null), asm);
        }
        "response.completed" | "response.incomplete" => {
            let response = event.response.unwrap_or(Value::Null);
            asm.usage(usage_of(&response["usage"]));
            let cut = response
                .pointer("/incomplete_details/reason")
                .and_then(Value::as_str);
            asm.finish_reason(match cut {
                Some("max_output_tokens") => "length",
                Some(_) => "incomplete",
                None => "stop",
            });
            return Ok(true);
        }
        "response.failed" => {
            let response = event.response.unwrap_or(Value::Null);
            return Err(failure(
                label,
                response.get("error").unwrap_or(&Value::Null),
            ));
        }
        "error" => {
            let error = event.error.filter(Value::is_object).unwrap_or_else(
                || json!({"code": event.code.as_deref(), "message": event.message.as_deref()}),
            );
            return Err(failure(label, &error));
        }
        _ => {}
    }
    Ok(false)
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
    let post = |replay: bool| {
        let builder = client
            .post(endpoint.url())
            .json(&body_with(endpoint, request, stream, replay));
        match &endpoint.api_key {
            Some(key) => builder.bearer_auth(key),
            None => builder,
        }
    };
    // Reasoning items another model or account encrypted are refused (`invalid_encrypted_content`,
    // after a model change, say): the request goes again without them, as Hermes does.
    let replayed = request.messages.iter().any(|m| m.provider_items.is_some());
    let response = match http::send(post(true), endpoint).await {
        Err(e) if replayed && e.status == Some(400) && e.message.contains("encrypted") => {
            tracing::warn!(provider = %label, error = %e.message, "stored reasoning refused; sending the request without it");
            http::send(post(false), endpoint).await?
        }
        other => other?,
    };
    let mut asm = Assembler::new(sink);
    let mut items = Items::default();
    if stream {
        let end = sse::read_events(response, endpoint.stale_timeout, |data| {
            handle_event(&label, data, &mut asm, &mut items)
        })
        .await;
        end.into_result(endpoint, false)?;
    } else {
        let value = http::read_json(response, endpoint).await?;
        if value.get("status").and_then(Value::as_str) == Some("failed") {
            return Err(failure(&label, value.get("error").unwrap_or(&Value::Null)));
        }
        for (index, item) in value["output"].as_array().into_iter().flatten().enumerate() {
            match item.get("type").and_then(Value::as_str) {
                Some("message") => {
                    for part in item["content"].as_array().into_iter().flatten() {
                        if part.get("type").and_then(Value::as_str) == Some("output_text") {
                            asm.text(part.get("text").and_then(Value::as_str).unwrap_or(""));
                        }
                    }
                }
                Some("reasoning") => {
                    for part in item["summary"].as_array().into_iter().flatten() {
                        asm.reasoning(part.get("text").and_then(Value::as_str).unwrap_or(""));
                    }
                    items.done(index, item, &mut asm);
                }
                _ => items.done(index, item, &mut asm),
            }
        }
        asm.usage(usage_of(&value["usage"]));
        asm.finish_reason("stop");
    }
    let mut completion = asm.finish(&label);
    if !completion.tool_calls.is_empty() {
        completion.finish_reason = "tool_calls".into();
    }
    completion.provider_items = items.provider_items();
    Ok(completion)
}

#[cfg(test)]
mod tests;
