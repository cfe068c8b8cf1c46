//! The model-facing `memory` tool: its compact OpenAI schema (same parameters as Hermes) and
//! the call handler that validates arguments, runs the store operation and builds Hermes'
//! JSON result. Blocking; the daemon calls `handle_memory_call` via `spawn_blocking`.

use serde_json::{Map, Value, json};

use super::batch::BatchOp;
use super::entries::{joined_chars, short_usage};
use super::error::MemoryError;
use super::store::{MemoryStore, Outcome, Target};

/// The tool's name.
pub const TOOL_NAME: &str = "memory";

/// The OpenAI function object (`{name, description, parameters}`) for the `memory` tool.
pub fn memory_schema() -> Value {
    json!({
        "name": TOOL_NAME,
        "description": "Save durable facts across sessions; memory is injected into every future \
            prompt, so keep entries short. Prefer ONE call with 'operations': applied atomically, \
            char limit checked on the final result, so stale entries can be removed or shortened and \
            new ones added together. Save user preferences, corrections and stable environment facts; \
            skip trivia, task progress and logs. If full, an add fails and lists current entries.",
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": ["add", "replace", "remove"],
                    "description": "Single change; omit when using operations."
                },
                "target": {
                    "type": "string",
                    "enum": ["memory", "user"],
                    "description": "memory: your notes; user: user profile."
                },
                "content": {"type": "string", "description": "Entry text for add/replace."},
                "old_text": {
                    "type": "string",
                    "description": "Unique substring of the entry to replace/remove."
                },
                "operations": {
                    "type": "array",
                    "description": "Batch, all-or-nothing.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "action": {"type": "string", "enum": ["add", "replace", "remove"]},
                            "content": {"type": "string"},
                            "old_text": {"type": "string"}
                        },
                        "required": ["action"]
                    }
                }
            },
            "required": ["target"]
        }
    })
}

/// Runs one `memory` tool call and returns Hermes' result object
/// (`{success: true, done, target, usage, entry_count, message, note}` or
/// `{success: false, error, …}`).
pub fn handle_memory_call(store: &MemoryStore, args: &Value) -> Value {
    let target = match args.get("target") {
        None | Some(Value::Null) => Target::Memory,
        Some(value) => match Target::parse(&arg_text(Some(value))) {
            Some(target) => target,
            None => {
                let shown = arg_text(Some(value));
                return error_json(format!("Invalid target '{shown}'. Use 'memory' or 'user'."));
            }
        },
    };

    if let Some(operations) = args.get("operations").filter(|v| is_truthy(v)) {
        let Value::Array(items) = operations else {
            return error_json(
                "operations must be a list of {action, content?, old_text?} objects.".into(),
            );
        };
        let ops: Vec<BatchOp> = items.iter().map(batch_op_from_json).collect();
        return result_json(store.apply_batch(target, &ops));
    }

    let action = arg_text(args.get("action"));
    let content = arg_text(args.get("content"));
    let old_text = arg_text(args.get("old_text"));
    match action.as_str() {
        "add" if content.is_empty() => error_json("Content is required for 'add' action.".into()),
        "add" => result_json(store.add(target, &content)),
        "replace" | "remove" if old_text.is_empty() => missing_old_text(store, target, &action),
        "replace" if content.is_empty() => {
            error_json("content is required for 'replace' action.".into())
        }
        "replace" => result_json(store.replace(target, &old_text, &content)),
        "remove" => result_json(store.remove(target, &old_text)),
        other => error_json(format!(
            "Unknown action '{other}'. Use: add, replace, remove"
        )),
    }
}

/// A string argument as text: strings as-is, absent/null as empty, anything else as JSON.
fn arg_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// Python truthiness of a JSON value (so `operations: []` or `null` means "not a batch").
fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// One batch item; a non-object item becomes an operation with no action (rejected later).
fn batch_op_from_json(item: &Value) -> BatchOp {
    BatchOp {
        action: arg_text(item.get("action")),
        content: arg_text(item.get("content")),
        old_text: arg_text(item.get("old_text")),
    }
}

/// Hermes' recoverable error for replace/remove without `old_text`: lists the entries to pick from.
fn missing_old_text(store: &MemoryStore, target: Target, action: &str) -> Value {
    let entries = match store.read(target) {
        Ok(entries) => entries,
        Err(error) => return error_json(error.to_string()),
    };
    let usage = short_usage(joined_chars(&entries), store.limits().for_target(target));
    json!({
        "success": false,
        "error": format!(
            "'{action}' needs old_text -- a short unique substring of the entry to {action}. None was \
             provided. Reissue the {action} with old_text set to part of one of the current_entries below."
        ),
        "current_entries": entries,
        "usage": usage,
    })
}

/// `{success: false, error}`.
fn error_json(error: String) -> Value {
    json!({"success": false, "error": error})
}

/// The JSON result of a store operation.
fn result_json(result: Result<Outcome, MemoryError>) -> Value {
    match result {
        Ok(outcome) => json!({
            "success": true,
            "done": true,
            "target": outcome.target.as_str(),
            "usage": outcome.usage(),
            "entry_count": outcome.entry_count,
            "message": outcome.message,
            "note": "Write saved. This update is complete — do not repeat it.",
        }),
        Err(error) => {
            let mut fields = Map::new();
            fields.insert("success".into(), Value::Bool(false));
            fields.insert("error".into(), Value::String(error.to_string()));
            if let Some(entries) = error.current_entries() {
                fields.insert("current_entries".into(), json!(entries));
            }
            if let Some(usage) = error.usage() {
                fields.insert("usage".into(), Value::String(usage));
            }
            if let Some(matches) = error.matches() {
                fields.insert("matches".into(), json!(matches));
            }
            Value::Object(fields)
        }
    }
}
