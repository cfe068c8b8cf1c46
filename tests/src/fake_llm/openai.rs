//! Rendering a [`Turn`] in the OpenAI chat completions shape: `chat.completion.chunk` SSE lines
//! ending with `data: [DONE]`, or one `chat.completion` JSON object.

use serde_json::{Value, json};

use super::{Ctx, Part, Turn};

/// One `data:` line carrying a chunk with a single choice.
fn chunk(ctx: &Ctx, delta: Value, finish_reason: Option<&str>) -> Part {
    let chunk = json!({
        "id": format!("chatcmpl-fake-{}", ctx.seq),
        "object": "chat.completion.chunk",
        "created": 0,
        "model": ctx.model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    });
    Part::Data(format!("data: {chunk}\n\n"))
}

fn finish_reason(turn: &Turn) -> &'static str {
    if turn.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    }
}

fn usage(turn: &Turn) -> Value {
    let (input, output) = (turn.usage.input_tokens, turn.usage.output_tokens);
    let mut usage = json!({"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output});
    if turn.usage.cache_read_tokens > 0 {
        usage["prompt_tokens_details"] = json!({"cached_tokens": turn.usage.cache_read_tokens});
    }
    usage
}

/// The SSE parts of `turn`; with `complete == false`, stops before the finish chunk and `[DONE]`.
pub(super) fn stream(turn: &Turn, ctx: &Ctx, complete: bool) -> Vec<Part> {
    let mut deltas = Vec::new();
    for piece in &turn.reasoning {
        deltas.push(json!({"reasoning_content": piece}));
    }
    for piece in &turn.text {
        deltas.push(json!({"content": piece}));
    }
    for (index, call) in turn.calls.iter().enumerate() {
        let mut pieces = call.argument_chunks.iter();
        let first = pieces.next().cloned().unwrap_or_default();
        deltas.push(json!({"tool_calls": [{
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": first},
        }]}));
        for piece in pieces {
            deltas
                .push(json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}));
        }
    }

    let mut parts = vec![chunk(
        ctx,
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    for (i, delta) in deltas.into_iter().enumerate() {
        if i > 0 && turn.delay_ms > 0 {
            parts.push(Part::Sleep(turn.delay_ms));
        }
        parts.push(chunk(ctx, delta, None));
    }
    if !complete {
        return parts;
    }
    parts.push(chunk(ctx, json!({}), Some(finish_reason(turn))));
    if ctx.include_usage {
        let usage_chunk = json!({
            "id": format!("chatcmpl-fake-{}", ctx.seq),
            "object": "chat.completion.chunk",
            "created": 0,
            "model": ctx.model,
            "choices": [],
            "usage": usage(turn),
        });
        parts.push(Part::Data(format!("data: {usage_chunk}\n\n")));
    }
    parts.push(Part::Data("data: [DONE]\n\n".to_owned()));
    parts
}

/// The non-streaming `chat.completion` object for `turn`.
pub(super) fn json(turn: &Turn, ctx: &Ctx) -> Value {
    let content = if turn.text.is_empty() && !turn.calls.is_empty() {
        Value::Null
    } else {
        Value::String(turn.text.concat())
    };
    let mut message = json!({"role": "assistant", "content": content});
    if !turn.reasoning.is_empty() {
        message["reasoning_content"] = Value::String(turn.reasoning.concat());
    }
    if !turn.calls.is_empty() {
        let calls: Vec<Value> = turn
            .calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments()},
                })
            })
            .collect();
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": format!("chatcmpl-fake-{}", ctx.seq),
        "object": "chat.completion",
        "created": 0,
        "model": ctx.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(turn)}],
        "usage": usage(turn),
    })
}

/// Number of `role: "tool"` messages in a request body.
pub(super) fn count_tool_results(body: &Value) -> usize {
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    messages.iter().filter(|m| m["role"] == "tool").count()
}
