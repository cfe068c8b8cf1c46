//! Lenient readers for individual frontmatter fields (strings, string lists, `metadata.hermes`).

use serde_yaml::{Mapping, Value};

/// The scalar `value` as text (strings as is, numbers and booleans formatted); `None` for
/// null, lists and mappings.
pub(super) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Tagged(tagged) => scalar_text(&tagged.value),
        Value::Null | Value::Sequence(_) | Value::Mapping(_) => None,
    }
}

/// Reads a list-of-strings field the way Hermes reads `tags`: a YAML list, a `"[a, b]"` string
/// or a `"a, b"` string. Items are trimmed (and unquoted when they came from a string); empty
/// items are dropped.
pub(super) fn string_list(value: Option<&Value>) -> Vec<String> {
    let Some(value) = value else {
        return Vec::new();
    };
    match value {
        Value::Sequence(items) => items
            .iter()
            .filter_map(scalar_text)
            .map(|item| item.trim().to_owned())
            .filter(|item| !item.is_empty())
            .collect(),
        Value::String(text) => split_inline_list(text),
        Value::Tagged(tagged) => string_list(Some(&tagged.value)),
        other => scalar_text(other).into_iter().collect(),
    }
}

/// Splits `"[a, 'b']"` or `"a, b"` into its trimmed, unquoted, non-empty items.
fn split_inline_list(text: &str) -> Vec<String> {
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or(trimmed);
    inner
        .split(',')
        .map(|item| item.trim().trim_matches(|c| c == '"' || c == '\''))
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The `metadata.hermes` mapping, when both levels are mappings.
pub(super) fn hermes_metadata(frontmatter: &Mapping) -> Option<&Mapping> {
    frontmatter
        .get("metadata")
        .and_then(Value::as_mapping)
        .and_then(|metadata| metadata.get("hermes"))
        .and_then(Value::as_mapping)
}

/// A list field read from `metadata.hermes.<key>` first, then from the top-level `<key>`
/// (Hermes' precedence for `tags` and `related_skills`).
pub(super) fn hermes_or_top_level_list(frontmatter: &Mapping, key: &str) -> Vec<String> {
    let nested = string_list(hermes_metadata(frontmatter).and_then(|hermes| hermes.get(key)));
    if nested.is_empty() {
        string_list(frontmatter.get(key))
    } else {
        nested
    }
}

/// Text cut to at most `max_chars` characters, ending in `...` when cut (Hermes' truncation).
pub(super) fn truncate_chars(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let keep = max_chars.saturating_sub(3);
    let end = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
    format!("{}...", &text[..end])
}

/// `text` with every run of whitespace (including newlines) replaced by one space, trimmed.
pub(super) fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}
