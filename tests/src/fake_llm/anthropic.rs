//! Rendering a [`Turn`] in the Anthropic messages shape: `message_start`, content blocks
//! (thinking, text, tool_use) with their deltas, `message_delta`, `message_stop`; or one JSON
//! `message` object.

use serde_json::{Value, json};

use super::{Ctx, Part, Turn};

/// One `event: <type>` SSE frame whose data is `data` (which carries the same `type`).
fn event(data: Value) -> Part {
    let kind = data["type"].as_str().unwrap_or_default().to_owned();
    Part::Data(format!("event: {kind}\ndata: {data}\n\n"))
}

fn stop_reason(turn: &Turn) -> &'static str {
    if turn.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

/// A content block: its empty start form and the deltas that fill it.
struct Block {
    start: Value,
    deltas: Vec<Value>,
}

fn blocks(turn: &Turn) -> Vec<Block> {
    let mut blocks = Vec::new();
    if !turn.reasoning.is_empty() {
        let mut deltas: Vec<Value> = turn
            .reasoning
            .iter()
            .map(|t| json!({"type": "thinking_delta", "thinking": t}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": "fake-signature"}));
        blocks.push(Block {
            start: json!({"type": "thinking", "thinking": ""}),
            deltas,
        });
    }
    if !turn.text.is_empty() || turn.calls.is_empty() {
        let deltas = turn
            .text
            .iter()
            .map(|t| json!({"type": "text_delta", "text": t}))
            .collect();
        blocks.push(Block {
            start: json!({"type": "text", "text": ""}),
            deltas,
        });
    }
    for call in &turn.calls {
        let deltas = call
            .argument_chunks
            .iter()
            .map(|piece| json!({"type": "input_json_delta", "partial_json": piece}))
            .collect();
        let start = json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}});
        blocks.push(Block { start, deltas });
    }
    blocks
}

/// The SSE parts of `turn`; with `complete == false`, stops after the last delta.
pub(super) fn stream(turn: &Turn, ctx: &Ctx, complete: bool) -> Vec<Part> {
    let mut parts = vec![event(json!({
        "type": "message_start",
        "message": {
            "id": format!("msg_fake_{}", ctx.seq),
            "type": "message",
            "role": "assistant",
            "model": ctx.model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": {"input_tokens": turn.usage.input_tokens, "output_tokens": 0,
                      "cache_read_input_tokens": turn.usage.cache_read_tokens,
                      "cache_creation_input_tokens": turn.usage.cache_write_tokens},
        },
    }))];
    let mut first_delta = true;
    for (index, block) in blocks(turn).into_iter().enumerate() {
        parts.push(event(
            json!({"type": "content_block_start", "index": index, "content_block": block.start}),
        ));
        for delta in block.deltas {
            if !first_delta && turn.delay_ms > 0 {
                parts.push(Part::Sleep(turn.delay_ms));
            }
            first_delta = false;
            parts.push(event(
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        if !complete {
            continue;
        }
        parts.push(event(json!({"type": "content_block_stop", "index": index})));
    }
    if !complete {
        return parts;
    }
    parts.push(event(json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null},
        "usage": {"output_tokens": turn.usage.output_tokens},
    })));
    parts.push(event(json!({"type": "message_stop"})));
    parts
}

/// The non-streaming `message` object for `turn`. Tool inputs that are not JSON stay strings.
pub(super) fn json(turn: &Turn, ctx: &Ctx) -> Value {
    let mut content = Vec::new();
    if !turn.reasoning.is_empty() {
        let thinking = turn.reasoning.concat();
        content
            .push(json!({"type": "thinking", "thinking": thinking, "signature": "fake-signature"}));
    }
    if !turn.text.is_empty() || turn.calls.is_empty() {
        content.push(json!({"type": "text", "text": turn.text.concat()}));
    }
    for call in &turn.calls {
        let arguments = call.arguments();
        let input = serde_json::from_str(&arguments).unwrap_or(Value::String(arguments));
        content.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    let usage = json!({"input_tokens": turn.usage.input_tokens, "output_tokens": turn.usage.output_tokens,
                       "cache_read_input_tokens": turn.usage.cache_read_tokens,
                       "cache_creation_input_tokens": turn.usage.cache_write_tokens});
    json!({
        "id": format!("msg_fake_{}", ctx.seq),
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": content,
        "stop_reason": stop_reason(turn),
        "stop_sequence": null,
        "usage": usage,
    })
}

/// Number of `tool_result` content blocks across a request's messages.
pub(super) fn count_tool_results(body: &Value) -> usize {
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .count()
}
