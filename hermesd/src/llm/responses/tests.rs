use std::sync::Arc;

use super::*;
use crate::llm::{
    ChatMessage, ToolCall, ToolSchema,
    endpoint::{ApiMode, Endpoint},
};

fn endpoint() -> Endpoint {
    Endpoint {
        provider: "openai".into(),
        model: "gpt-5".into(),
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: None,
        api_mode: ApiMode::CodexResponses,
        stale_timeout: std::time::Duration::from_secs(5),
        connect_timeout: std::time::Duration::from_secs(5),
        text_tool_calls: false,
        pool: None,
        context_length: None,
    }
}

#[test]
fn a_conversation_becomes_instructions_and_input_items() {
    let reasoning = r#"[{"type":"reasoning","encrypted_content":"gAAA","summary":[]}]"#;
    let request = ChatRequest {
        system: "be brief".into(),
        messages: vec![
            ChatMessage::user("list files"),
            ChatMessage {
                provider_items: Some(reasoning.into()),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "terminal".into(),
                    arguments: r#"{"command":"ls"}"#.into(),
                }],
                ..ChatMessage::assistant("")
            },
            ChatMessage {
                role: Some(Role::Tool),
                content: "a.txt".into(),
                tool_call_id: Some("call_1".into()),
                ..ChatMessage::default()
            },
        ],
        tools: vec![Arc::new(ToolSchema {
            name: "terminal".into(),
            description: "run".into(),
            parameters: json!({"type": "object"}),
        })],
        max_tokens: Some(100),
        reasoning_effort: Some("high".into()),
        cache_ttl: None,
    };
    let body = body(&endpoint(), &request, true);
    assert_eq!(body["instructions"], "be brief");
    assert_eq!(body["store"], false);
    assert_eq!(body["max_output_tokens"], 100);
    assert_eq!(
        body["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["tools"][0]["name"], "terminal");
    assert_eq!(body["tools"][0]["type"], "function");
    let input = body["input"].as_array().unwrap();
    assert_eq!(input[0], json!({"role": "user", "content": "list files"}));
    assert_eq!(
        input[1]["type"], "reasoning",
        "the reasoning items go back first"
    );
    assert_eq!(input[1]["encrypted_content"], "gAAA");
    assert_eq!(input[2]["type"], "function_call");
    assert_eq!(input[2]["call_id"], "call_1");
    assert_eq!(
        input[3],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "a.txt"})
    );
    let off = ChatRequest {
        reasoning_effort: Some("none".into()),
        ..request
    };
    let body = super::body(&endpoint(), &off, false);
    assert!(body.get("reasoning").is_none() && body.get("include").is_none());
}

fn decode(events: &[Value]) -> Result<Completion, LlmError> {
    let stream: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let mut seen = Vec::new();
    let mut record = |e: crate::llm::StreamEvent| seen.push(e);
    let mut sink: EventSink<'_> = &mut record;
    crate::llm::decode_stream_body(
        ApiMode::CodexResponses,
        "openai:gpt-5",
        stream.as_bytes(),
        &mut sink,
    )
}

#[test]
fn streamed_text_tool_call_reasoning_and_usage() {
    let completion = decode(&[
        json!({"type": "response.created", "response": {"id": "resp_1"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1"}}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "thinking"}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA", "summary": [{"type": "summary_text", "text": "thinking"}]}}),
        json!({"type": "response.output_text.delta", "output_index": 1, "delta": "Let me "}),
        json!({"type": "response.output_text.delta", "output_index": 1, "delta": "look."}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": {"type": "function_call", "call_id": "call_9", "name": "terminal", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "{\"command\":"}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "\"ls\"}"}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": {"type": "function_call", "call_id": "call_9", "name": "terminal", "arguments": "{\"command\":\"ls\"}"}}),
        json!({"type": "response.completed", "response": {"usage": {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1000}, "output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 30}}}}),
    ])
    .unwrap();
    assert_eq!(completion.text, "Let me look.");
    assert_eq!(completion.reasoning, "thinking");
    assert_eq!(completion.tool_calls.len(), 1);
    assert_eq!(completion.tool_calls[0].id, "call_9");
    assert_eq!(
        completion.tool_calls[0].arguments, r#"{"command":"ls"}"#,
        "arguments not doubled"
    );
    let u = completion.usage;
    assert_eq!(
        (
            u.input_tokens,
            u.cache_read_tokens,
            u.output_tokens,
            u.reasoning_tokens
        ),
        (1200, 1000, 50, 30)
    );
    let items: Value = serde_json::from_str(completion.provider_items.as_deref().unwrap()).unwrap();
    assert_eq!(items[0]["encrypted_content"], "gAAA");
    assert!(
        items[0].get("id").is_none(),
        "no server id with store: false"
    );
}

#[test]
fn failures_keep_their_classes() {
    let failed = |code: &str| {
        decode(&[json!({"type": "response.failed", "response": {"error": {"code": code, "message": "no"}}})])
            .unwrap_err()
            .class
    };
    assert_eq!(failed("rate_limit_exceeded"), ErrorClass::RateLimit);
    assert_eq!(failed("insufficient_quota"), ErrorClass::Billing);
    assert_eq!(
        failed("context_length_exceeded"),
        ErrorClass::ContextOverflow
    );
    assert_eq!(failed("server_error"), ErrorClass::Server);
    let error =
        decode(&[json!({"type": "error", "code": "invalid_api_key", "message": "bad key"})])
            .unwrap_err();
    assert_eq!(error.class, ErrorClass::Auth);
    assert_eq!(error.message, "invalid_api_key: bad key");
}
