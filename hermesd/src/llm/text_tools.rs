//! Tool calls written into the text by models that do not use the `tool_calls` field: the Hermes
//! `<tool_call>{json}</tool_call>` format always, and a bare JSON object for endpoints marked
//! `text_tool_calls: true` when it is the whole message and names an enabled tool.

use serde_json::Value;

use super::types::ToolCall;

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

/// Pull tool calls out of `text`. Returns the text without them and the calls found.
pub fn extract(text: &str, bare_json: bool, enabled_tools: &[String]) -> (String, Vec<ToolCall>) {
    let mut calls = Vec::new();
    let mut rest = String::with_capacity(text.len());
    let mut remaining = text;
    while let Some(start) = remaining.find(OPEN) {
        let after = &remaining[start + OPEN.len()..];
        let (inner, tail, block_len) = match after.find(CLOSE) {
            Some(end) => (
                &after[..end],
                &after[end + CLOSE.len()..],
                OPEN.len() + end + CLOSE.len(),
            ),
            // An unclosed block at the end of the message: take what is there.
            None => (after, "", OPEN.len() + after.len()),
        };
        match call_from_json(inner.trim(), calls.len()) {
            Some(call) => {
                rest.push_str(&remaining[..start]);
                calls.push(call);
            }
            // Not a call: the block stays in the text as written.
            None => rest.push_str(&remaining[..start + block_len]),
        }
        remaining = tail;
    }
    rest.push_str(remaining);
    if calls.is_empty() && bare_json {
        let trimmed = rest.trim();
        let trimmed = trimmed
            .strip_prefix("```json")
            .or_else(|| trimmed.strip_prefix("```"))
            .and_then(|t| t.strip_suffix("```"))
            .map(str::trim)
            .unwrap_or(trimmed);
        if trimmed.starts_with('{')
            && let Some(call) = call_from_json(trimmed, 0)
            && enabled_tools.contains(&call.name)
        {
            return (String::new(), vec![call]);
        }
    }
    let rest = if calls.is_empty() {
        rest
    } else {
        rest.trim().to_string()
    };
    (rest, calls)
}

/// `{"name": …, "arguments": {…}}` (or `parameters`); arguments may also be a JSON string.
fn call_from_json(text: &str, index: usize) -> Option<ToolCall> {
    let value: Value = serde_json::from_str(text).ok()?;
    let name = value.get("name")?.as_str()?.to_string();
    let arguments = match value.get("arguments").or_else(|| value.get("parameters")) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "{}".to_string(),
    };
    Some(ToolCall {
        id: format!("call_text_{index}"),
        name,
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<String> {
        vec!["terminal".into()]
    }

    #[test]
    fn hermes_tags_become_calls_and_leave_the_prose() {
        let text = "Let me look.\n<tool_call>\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>";
        let (rest, calls) = extract(text, false, &tools());
        assert_eq!(rest, "Let me look.");
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "terminal");
        assert_eq!(calls[0].arguments, "{\"command\":\"ls\"}");
    }

    #[test]
    fn two_tags_two_calls() {
        let text = "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call><tool_call>{\"name\":\"b\",\"arguments\":\"{\\\"x\\\":1}\"}</tool_call>";
        let (_, calls) = extract(text, false, &tools());
        assert_eq!(
            calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(calls[1].arguments, "{\"x\":1}");
        assert_ne!(calls[0].id, calls[1].id);
    }

    #[test]
    fn bare_json_only_when_enabled_whole_and_known() {
        let bare = "{\"name\": \"terminal\", \"arguments\": {\"command\": \"pwd\"}}";
        assert!(
            extract(bare, false, &tools()).1.is_empty(),
            "not marked text_tool_calls"
        );
        assert_eq!(extract(bare, true, &tools()).1.len(), 1);
        let unknown = "{\"name\": \"rm_rf\", \"arguments\": {}}";
        assert!(
            extract(unknown, true, &tools()).1.is_empty(),
            "unknown tool"
        );
        let prose = format!("Here is JSON: {bare}");
        assert!(
            extract(&prose, true, &tools()).1.is_empty(),
            "not the whole message"
        );
        let fenced = format!("```json\n{bare}\n```");
        assert_eq!(extract(&fenced, true, &tools()).1.len(), 1);
    }

    #[test]
    fn broken_tag_content_stays_text() {
        let text = "<tool_call>{not json}</tool_call> ok";
        let (rest, calls) = extract(text, false, &tools());
        assert!(calls.is_empty());
        assert_eq!(rest, text, "the text is left as written");
    }
}
