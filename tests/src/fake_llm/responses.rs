//! Rendering a [`Turn`] in the OpenAI Responses API shape: `response.*` SSE events ending with
//! `response.completed`, or one `response` JSON object. A turn with reasoning also returns a
//! reasoning item whose `encrypted_content` is `enc-<seq>`, so a test can see it sent back.

use serde_json::{Value, json};

use super::{Ctx, Part, Turn};

fn event(value: Value) -> Part {
    let kind = value["type"].as_str().unwrap_or("message").to_owned();
    Part::Data(format!("event: {kind}\ndata: {value}\n\n"))
}

fn usage(turn: &Turn) -> Value {
    let (input, output) = (turn.usage.input_tokens, turn.usage.output_tokens);
    json!({"input_tokens": input, "output_tokens": output, "total_tokens": input + output,
           "input_tokens_details": {"cached_tokens": turn.usage.cache_read_tokens}, "output_tokens_details": {"reasoning_tokens": 0}})
}

fn reasoning_item(turn: &Turn, ctx: &Ctx) -> Value {
    json!({"type": "reasoning", "id": format!("rs_{}", ctx.seq), "encrypted_content": format!("enc-{}", ctx.seq),
           "summary": [{"type": "summary_text", "text": turn.reasoning.concat()}]})
}

fn call_item(call: &super::ToolCall) -> Value {
    json!({"type": "function_call", "id": format!("fc_{}", call.id), "call_id": call.id,
           "name": call.name, "arguments": call.arguments()})
}

/// The SSE events of `turn`; with `complete == false`, stops before `response.completed`.
pub(super) fn stream(turn: &Turn, ctx: &Ctx, complete: bool) -> Vec<Part> {
    let id = format!("resp_fake_{}", ctx.seq);
    let mut parts = vec![event(
        json!({"type": "response.created", "response": {"id": id, "status": "in_progress"}}),
    )];
    let mut index = 0;
    let pause = |parts: &mut Vec<Part>| {
        if turn.delay_ms > 0 {
            parts.push(Part::Sleep(turn.delay_ms));
        }
    };
    if !turn.reasoning.is_empty() {
        parts.push(event(json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "reasoning", "id": format!("rs_{}", ctx.seq)}})));
        for piece in &turn.reasoning {
            parts.push(event(json!({"type": "response.reasoning_summary_text.delta", "output_index": index, "delta": piece})));
        }
        parts.push(event(json!({"type": "response.output_item.done", "output_index": index, "item": reasoning_item(turn, ctx)})));
        index += 1;
    }
    if !turn.text.is_empty() {
        parts.push(event(json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "message", "role": "assistant", "content": []}})));
        for (i, piece) in turn.text.iter().enumerate() {
            if i > 0 {
                pause(&mut parts);
            }
            parts.push(event(json!({"type": "response.output_text.delta", "output_index": index, "content_index": 0, "delta": piece})));
        }
        index += 1;
    }
    for call in &turn.calls {
        let mut added = call_item(call);
        added["arguments"] = json!("");
        parts.push(event(
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        ));
        for piece in &call.argument_chunks {
            parts.push(event(json!({"type": "response.function_call_arguments.delta", "output_index": index, "delta": piece})));
        }
        parts.push(event(json!({"type": "response.output_item.done", "output_index": index, "item": call_item(call)})));
        index += 1;
    }
    if complete {
        parts.push(event(json!({"type": "response.completed", "response": {"id": id, "status": "completed", "usage": usage(turn)}})));
    }
    parts
}

/// The non-streaming `response` object for `turn`.
pub(super) fn json(turn: &Turn, ctx: &Ctx) -> Value {
    let mut output = Vec::new();
    if !turn.reasoning.is_empty() {
        output.push(reasoning_item(turn, ctx));
    }
    if !turn.text.is_empty() {
        output.push(
            json!({"type": "message", "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": turn.text.concat()}]}),
        );
    }
    output.extend(turn.calls.iter().map(call_item));
    json!({"id": format!("resp_fake_{}", ctx.seq), "object": "response", "status": "completed",
           "model": ctx.model, "output": output, "usage": usage(turn)})
}

/// Number of `function_call_output` items in a request body.
pub(super) fn count_tool_results(body: &Value) -> usize {
    let input = body["input"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    input
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .count()
}
