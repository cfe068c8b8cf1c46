//! What a call's value becomes on its way to the model: masked of secrets (the one place tool
//! results are masked: the model, the transcript, the spill file and the client's summary all
//! get the masked text), judged ok or failed, and summarised in one line for progress displays.

use serde_json::Value;

use super::{Tool, ToolContext};
use crate::policy::secrets::Style;

/// The result of one dispatched call, ready to become a `tool` message.
#[derive(Debug, Clone)]
pub struct ToolOutcome {
    /// JSON text the model reads.
    pub content: String,
    pub ok: bool,
    /// One line for progress displays.
    pub summary: String,
    pub duration_ms: u64,
}

/// `value` with every secret masked, in the style of `tool`'s results (file content, or output).
pub(super) fn masked(mut value: Value, tool: Option<&dyn Tool>, ctx: &ToolContext) -> Value {
    let style = if tool.is_some_and(|t| t.shows_file_content()) {
        Style::FileContent
    } else {
        Style::Display
    };
    ctx.services.masker().mask_json(&mut value, style);
    value
}

/// The first `max` characters of `text`, with `…` when there was more.
pub(super) fn preview(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]).into(),
        None => text.into(),
    }
}

/// A result object that reports an error (`error` set, or `success: false`).
pub(super) fn is_error_result(value: &Value) -> bool {
    let error_set = value
        .get("error")
        .is_some_and(|e| !e.is_null() && e.as_str() != Some(""));
    let failed = value.get("success") == Some(&Value::Bool(false));
    error_set || failed
}

pub(super) fn summarize(value: &Value, ok: bool) -> String {
    let text = if ok {
        match value {
            Value::String(s) => s.clone(),
            Value::Object(map) => map
                .get("summary")
                .or_else(|| map.get("output"))
                .or_else(|| map.get("content"))
                .and_then(Value::as_str)
                .map_or_else(|| "ok".to_string(), str::to_string),
            _ => "ok".to_string(),
        }
    } else {
        value
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("failed")
            .to_string()
    };
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut short: String = line.chars().take(120).collect();
    if line.chars().count() > 120 {
        short.push('…');
    }
    short
}
