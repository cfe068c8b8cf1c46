//! Value conversions from Python Hermes rows to hermesd's: epoch seconds to milliseconds, message
//! text (including Python's JSON-encoded multimodal content) and tool calls to the OpenAI shape.

use std::borrow::Cow;

use rusqlite::types::ValueRef;
use serde_json::{Value, json};

/// Python's marker for list/dict content stored as JSON (`SessionDB._CONTENT_JSON_PREFIX`).
const JSON_CONTENT_PREFIX: &str = "\0json:";

/// What Python writes in place of an image when it flattens multimodal content.
const IMAGE_PLACEHOLDER: &str = "[screenshot]";

/// A number column (Python writes REAL or INTEGER; numeric TEXT is tolerated too).
pub(super) fn real(value: ValueRef<'_>) -> Option<f64> {
    match value {
        ValueRef::Real(f) => Some(f),
        ValueRef::Integer(i) => Some(i as f64),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        ValueRef::Null | ValueRef::Blob(_) => None,
    }
    .filter(|f| f.is_finite())
}

/// Epoch seconds to epoch milliseconds.
pub(super) fn millis(seconds: f64) -> i64 {
    (seconds * 1000.0).round() as i64
}

/// A column as text, borrowed when it already is valid UTF-8.
pub(super) fn text(value: ValueRef<'_>) -> Option<Cow<'_, str>> {
    match value {
        ValueRef::Null => None,
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => Some(String::from_utf8_lossy(bytes)),
        ValueRef::Integer(i) => Some(Cow::Owned(i.to_string())),
        ValueRef::Real(f) => Some(Cow::Owned(f.to_string())),
    }
}

/// A non-empty text column.
pub(super) fn non_empty(value: ValueRef<'_>) -> Option<Cow<'_, str>> {
    text(value).filter(|t| !t.is_empty())
}

/// Message content as hermesd stores it: NULL becomes '', JSON-encoded parts become their text
/// (images as Python's own placeholder).
pub(super) fn message_content(value: ValueRef<'_>) -> Cow<'_, str> {
    let Some(content) = text(value) else {
        return Cow::Borrowed("");
    };
    if let Some(json) = content.strip_prefix(JSON_CONTENT_PREFIX) {
        return Cow::Owned(parts_text(json));
    }
    content
}

fn parts_text(json: &str) -> String {
    match serde_json::from_str::<Value>(json) {
        Ok(Value::String(text)) => text,
        Ok(Value::Array(parts)) => parts
            .iter()
            .filter_map(part_text)
            .collect::<Vec<_>>()
            .join("\n"),
        Ok(part @ Value::Object(_)) => part_text(&part).unwrap_or(json).to_string(),
        _ => json.to_string(),
    }
}

fn part_text(part: &Value) -> Option<&str> {
    if let Some(text) = part.as_str() {
        return Some(text);
    }
    match part.get("type").and_then(Value::as_str) {
        Some("image" | "image_url" | "input_image") => Some(IMAGE_PLACEHOLDER),
        _ => part.get("text").and_then(Value::as_str),
    }
}

fn is_openai_call(call: &Value) -> bool {
    call.get("function").is_some_and(Value::is_object)
}

fn flat_call_id(call: &Value) -> Option<&str> {
    call.get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
}

/// Tool calls as hermesd stores them: a JSON array in the OpenAI shape
/// `[{id, type: "function", function: {name, arguments}}]`. Text already in that shape is kept
/// byte for byte; Python's flat `{id?, name, arguments}` entries (`run_agent.py:2023` writes
/// them, without ids, for SDK message objects) are rebuilt, taking missing ids from
/// `result_ids(n)` (the ids of the tool results that follow) or, failing that,
/// `call_<message id>_<index>`. Empty or unreadable values give `None`.
pub(super) fn tool_calls<'a>(
    raw: Cow<'a, str>,
    message_id: i64,
    result_ids: impl FnOnce(usize) -> Vec<String>,
) -> Option<Cow<'a, str>> {
    let (calls, was_array) = match serde_json::from_str::<Value>(&raw).ok()? {
        Value::Array(calls) => (calls, true),
        call @ Value::Object(_) => (vec![call], false),
        _ => return None,
    };
    if calls.is_empty() {
        return None;
    }
    if was_array && calls.iter().all(is_openai_call) {
        return Some(raw);
    }
    let missing = calls
        .iter()
        .filter(|c| !is_openai_call(c) && flat_call_id(c).is_none())
        .count();
    let mut found = if missing > 0 {
        result_ids(missing)
    } else {
        Vec::new()
    }
    .into_iter();
    let rebuilt: Vec<Value> = calls
        .into_iter()
        .enumerate()
        .filter(|(_, call)| call.is_object())
        .map(|(index, call)| {
            if is_openai_call(&call) {
                return call;
            }
            let id = flat_call_id(&call)
                .map(str::to_string)
                .or_else(|| found.next())
                .unwrap_or_else(|| format!("call_{message_id}_{index}"));
            let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
            let arguments = match call.get("arguments") {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Null) | None => "{}".to_string(),
                Some(other) => other.to_string(),
            };
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    if rebuilt.is_empty() {
        return None;
    }
    Some(Cow::Owned(Value::Array(rebuilt).to_string()))
}
