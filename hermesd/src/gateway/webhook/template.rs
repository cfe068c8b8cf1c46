//! Hermes' webhook prompt templates: `{dotted.path}` is looked up in the JSON payload (objects
//! only; a missing key stays as written), `{event_type}` is the event and `{__raw__}` the whole
//! payload as indented JSON (4,000 characters at most). Objects and arrays render as indented
//! JSON (2,000 characters), strings as they are, other values as Python prints them (`True`,
//! `None`). One pass: text put in is not looked at again. An empty template is Hermes' default
//! prompt.

use serde_json::Value;

const RAW_CHARS: usize = 4_000;
const VALUE_CHARS: usize = 2_000;

fn indented(value: &Value, chars: usize) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.chars().take(chars).collect()
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        Value::Number(n) => n.to_string(),
        other => indented(other, VALUE_CHARS),
    }
}

fn lookup<'p>(payload: &'p Value, path: &str) -> Option<&'p Value> {
    path.split('.')
        .try_fold(payload, |node, key| node.as_object()?.get(key))
}

/// Render `template` over `payload`.
pub fn render(template: &str, payload: &Value, event_type: &str, route: &str) -> String {
    if template.is_empty() {
        return format!(
            "Webhook event '{event_type}' on route '{route}':\n\n```json\n{}\n```",
            indented(payload, RAW_CHARS)
        );
    }
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let key_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(after.len());
        if key_len == 0 || !after[key_len..].starts_with('}') {
            out.push('{');
            rest = after;
            continue;
        }
        let key = &after[..key_len];
        let rendered = match key {
            "__raw__" => Some(indented(payload, RAW_CHARS)),
            "event_type" => Some(event_type.to_string()),
            _ => lookup(payload, key).map(scalar),
        };
        match rendered {
            Some(text) => out.push_str(&text),
            None => {
                out.push('{');
                out.push_str(key);
                out.push('}');
            }
        }
        rest = &after[key_len + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_specials_and_missing_keys() {
        let payload =
            json!({"pull_request": {"title": "Fix {it}", "draft": false, "n": 7}, "tags": ["a"]});
        let text = render(
            "{event_type}: {pull_request.title} draft={pull_request.draft} #{pull_request.n} {nope.x} {tags} { x }",
            &payload,
            "pull_request",
            "gh",
        );
        assert_eq!(
            text,
            "pull_request: Fix {it} draft=False #7 {nope.x} [\n  \"a\"\n] { x }"
        );
        assert!(
            render("", &payload, "push", "gh")
                .starts_with("Webhook event 'push' on route 'gh':\n\n```json\n{")
        );
    }
}
