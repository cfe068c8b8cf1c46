//! `todo`: the session's task list. Call with no `todos` to read it; `merge: false` replaces
//! the list, `merge: true` updates items by id and appends new ones. Every call returns the list.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, context::TodoItem};

const STATUSES: [&str; 4] = ["pending", "in_progress", "completed", "cancelled"];
const MAX_ITEMS: usize = 256;
const MAX_CONTENT_CHARS: usize = 4_000;

pub struct TodoTool;

#[async_trait]
impl Tool for TodoTool {
    fn name(&self) -> &'static str {
        "todo"
    }
    /// The list lives with the session in the daemon (Hermes keeps it in memory too).
    fn has_effects(&self, _args: &Value) -> bool {
        false
    }

    fn toolset(&self) -> &'static str {
        "todo"
    }

    fn schema(&self) -> Value {
        json!({
            "name": "todo",
            "description": "Session task list for work with 3+ steps. No args: read. `todos` writes \
                (merge=false replaces the list, merge=true updates by id). Order is priority; one \
                item in_progress at a time; mark items completed as soon as done. Returns the list.",
            "parameters": {
                "type": "object",
                "properties": {
                    "todos": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "id": {"type": "string"},
                                "content": {"type": "string"},
                                "status": {"type": "string", "enum": STATUSES}
                            },
                            "required": ["id", "content", "status"]
                        }
                    },
                    "merge": {"type": "boolean", "default": false}
                },
                "required": []
            }
        })
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let todos = match args.get("todos") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => Some(items.clone()),
            Some(other) => {
                return Err(ToolError::Arguments(format!(
                    "todos must be a list of objects, got {}",
                    type_name(other)
                )));
            }
        };
        let merge = args.get("merge").and_then(Value::as_bool).unwrap_or(false);
        let mut list = ctx
            .scope
            .todos
            .lock()
            .map_err(|_| ToolError::Failed("the todo store is unavailable".into()))?;
        if let Some(todos) = todos {
            write(&mut list, &todos, merge);
        }
        Ok(render(&list))
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn cap(content: String) -> String {
    if content.chars().count() <= MAX_CONTENT_CHARS {
        return content;
    }
    let marker = "… [truncated]";
    let keep: String = content
        .chars()
        .take(MAX_CONTENT_CHARS - marker.chars().count())
        .collect();
    keep + marker
}

fn status_of(v: Option<&Value>) -> Option<String> {
    let s = text_of(v).to_lowercase();
    STATUSES.contains(&s.as_str()).then_some(s)
}

fn validate(item: &Value) -> TodoItem {
    if !item.is_object() {
        return TodoItem {
            id: "?".into(),
            content: "(invalid item)".into(),
            status: "pending".into(),
        };
    }
    let id = Some(text_of(item.get("id")))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "?".into());
    let content = Some(text_of(item.get("content")))
        .filter(|s| !s.is_empty())
        .map_or_else(|| "(no description)".into(), cap);
    let status = status_of(item.get("status")).unwrap_or_else(|| "pending".into());
    TodoItem {
        id,
        content,
        status,
    }
}

/// Duplicate ids collapse to the last occurrence, in its position.
fn dedupe(items: &[Value]) -> Vec<&Value> {
    let key = |i: usize, v: &Value| {
        if v.is_object() {
            Some(text_of(v.get("id")))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "?".into())
        } else {
            format!("\u{0}invalid{i}")
        }
    };
    let keys: Vec<String> = items.iter().enumerate().map(|(i, v)| key(i, v)).collect();
    items
        .iter()
        .enumerate()
        .filter(|(i, _)| !keys[i + 1..].contains(&keys[*i]))
        .map(|(_, v)| v)
        .collect()
}

fn write(list: &mut Vec<TodoItem>, todos: &[Value], merge: bool) {
    if !merge {
        *list = dedupe(todos).into_iter().map(validate).collect();
    } else {
        for item in dedupe(todos) {
            let id = text_of(item.get("id"));
            if id.is_empty() {
                continue;
            }
            match list.iter_mut().find(|t| t.id == id) {
                Some(existing) => {
                    let content = text_of(item.get("content"));
                    if !content.is_empty() {
                        existing.content = cap(content);
                    }
                    if let Some(status) = status_of(item.get("status")) {
                        existing.status = status;
                    }
                }
                None => list.push(validate(item)),
            }
        }
    }
    list.truncate(MAX_ITEMS);
}

fn render(list: &[TodoItem]) -> Value {
    let count = |s: &str| list.iter().filter(|t| t.status == s).count();
    json!({
        "todos": list,
        "summary": {
            "total": list.len(),
            "pending": count("pending"),
            "in_progress": count("in_progress"),
            "completed": count("completed"),
            "cancelled": count("cancelled"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_merge_and_dedupe() {
        let mut list = Vec::new();
        write(
            &mut list,
            &[
                json!({"id": "1", "content": "a", "status": "pending"}),
                json!({"id": "2", "content": "b", "status": "weird"}),
                json!({"id": "1", "content": "a2", "status": "in_progress"}),
            ],
            false,
        );
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].id, "2");
        assert_eq!(list[0].status, "pending");
        assert_eq!(list[1].content, "a2");
        write(
            &mut list,
            &[
                json!({"id": "2", "status": "completed"}),
                json!({"id": "3", "content": "c", "status": "pending"}),
            ],
            true,
        );
        assert_eq!(list[0].status, "completed");
        assert_eq!(list[0].content, "b");
        assert_eq!(list[2].id, "3");
        let shown = render(&list);
        assert_eq!(shown["summary"]["completed"], 1);
        assert_eq!(shown["summary"]["total"], 3);
    }
}
