//! Stored messages to model messages and back: tool calls are stored in the OpenAI shape
//! (`[{id, type: "function", function: {name, arguments}}]`), as Hermes stores them.

use serde_json::{Value, json};

use crate::{
    llm::{ChatMessage, Role, ToolCall},
    store::MessageRow,
};

/// Tool calls as the stored JSON array.
pub fn tool_calls_json(calls: &[ToolCall]) -> Option<String> {
    if calls.is_empty() {
        return None;
    }
    let array: Vec<Value> = calls
        .iter()
        .map(|c| {
            json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}})
        })
        .collect();
    Some(Value::Array(array).to_string())
}

/// Parse stored tool calls (the OpenAI shape, or the flat `{id, name, arguments}` one).
pub fn parse_tool_calls(text: &str) -> Vec<ToolCall> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let function = item.get("function").unwrap_or(item);
            let name = function.get("name")?.as_str()?.to_string();
            let arguments = match function.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => "{}".to_string(),
            };
            Some(ToolCall {
                id: item
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                name,
                arguments,
            })
        })
        .collect()
}

/// A stored message as a model message; system rows are skipped (the prompt is separate).
pub fn to_chat(row: MessageRow) -> Option<ChatMessage> {
    let role = Role::parse(&row.role).filter(|r| *r != Role::System)?;
    Some(ChatMessage {
        role: Some(role),
        content: row.content,
        tool_calls: row
            .tool_calls
            .as_deref()
            .map(parse_tool_calls)
            .unwrap_or_default(),
        tool_call_id: row.tool_call_id,
        name: row.tool_name,
        images: Vec::new(),
        provider_items: row.provider_items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_calls_round_trip_in_the_openai_shape() {
        let calls = vec![ToolCall {
            id: "call_1".into(),
            name: "terminal".into(),
            arguments: r#"{"command":"ls"}"#.into(),
        }];
        let text = tool_calls_json(&calls).unwrap_or_default();
        assert!(text.contains(r#""type":"function""#));
        assert_eq!(parse_tool_calls(&text), calls);
        let flat = r#"[{"id":"x","name":"todo","arguments":{}}]"#;
        assert_eq!(parse_tool_calls(flat)[0].arguments, "{}");
    }
}
