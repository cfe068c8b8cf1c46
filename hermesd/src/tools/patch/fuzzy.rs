//! Fuzzy find-and-replace of `old_string` by `new_string` (Hermes' `fuzzy_find_and_replace`):
//! runs the strategy chain, enforces uniqueness, guards against escape drift and keeps the
//! file's indentation and typographic characters in the replacement.

use std::borrow::Cow;

use super::hint;
use super::seqmatch::{self, OpTag};
use super::strategies::{self, Span};

/// Why a find-and-replace did not happen; `Display` gives Hermes' message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// `old_string` was empty.
    #[error("old_string cannot be empty")]
    EmptyOld,
    /// `old_string == new_string`.
    #[error("old_string and new_string are identical")]
    Identical,
    /// More than one match without `replace_all`.
    #[error(
        "Found {0} matches for old_string. Provide more context to make it unique, or use replace_all=True."
    )]
    Ambiguous(usize),
    /// A fuzzy match whose strings carry a backslash-escaped quote (`'` or `"`) absent from the file.
    #[error("{}", escape_drift_message(*.0))]
    EscapeDrift(char),
    /// No strategy matched.
    #[error("Could not find a match for old_string in the file")]
    NotFound,
}

impl PatchError {
    /// The message, plus a "Did you mean one of these sections?" excerpt of `content` when the
    /// text was simply not found.
    pub fn describe(&self, old: &str, content: &str) -> String {
        let mut message = self.to_string();
        if *self == Self::NotFound {
            message.push_str(&hint::no_match_hint(old, content));
        }
        message
    }
}

fn escape_drift_message(quote: char) -> String {
    let (sequence, plain) = if quote == '"' {
        (r#"'\\"'"#, r#"'"'"#)
    } else {
        (r#""\\'""#, r#""'""#)
    };
    format!(
        "Escape-drift detected: old_string and new_string contain the literal sequence {sequence} \
         but the matched region of the file does not. This is almost always a tool-call \
         serialization artifact where an apostrophe or quote got prefixed with a spurious \
         backslash. Re-read the file with read_file and pass old_string/new_string without \
         backslash-escaping {plain} characters."
    )
}

/// A successful find-and-replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// The whole text after replacement.
    pub content: String,
    /// How many regions were replaced.
    pub count: usize,
    /// Name of the strategy that matched (`exact`, `line_trimmed`, …, `context_aware`).
    pub strategy: &'static str,
}

/// Replaces `old` by `new` in `content`, trying the strategies in Hermes' order. Without
/// `replace_all` the first matching strategy must find exactly one region.
pub fn fuzzy_replace(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Replacement, PatchError> {
    if old.is_empty() {
        return Err(PatchError::EmptyOld);
    }
    if old == new {
        return Err(PatchError::Identical);
    }
    for (name, strategy) in strategies::CHAIN {
        let spans = strategy(content, old);
        if spans.is_empty() {
            continue;
        }
        if spans.len() > 1 && !replace_all {
            return Err(PatchError::Ambiguous(spans.len()));
        }
        let is_exact = name == "exact";
        if !is_exact && let Some(quote) = escape_drift(content, &spans, old, new) {
            return Err(PatchError::EscapeDrift(quote));
        }
        let mut replacement = unescape_controls(new, content, &spans);
        if name == "unicode_normalized" {
            replacement = Cow::Owned(keep_file_unicode(content, &spans, old, &replacement));
        }
        let (content, count) =
            apply_spans(content, &spans, &replacement, (!is_exact).then_some(old));
        return Ok(Replacement {
            content,
            count,
            strategy: name,
        });
    }
    Err(PatchError::NotFound)
}

/// Concatenation of the matched regions.
fn matched_text(content: &str, spans: &[Span]) -> String {
    spans
        .iter()
        .map(|&(start, end)| &content[start..end])
        .collect()
}

/// The quote whose backslash-escaped form is in both strings but not in the matched regions.
fn escape_drift(content: &str, spans: &[Span], old: &str, new: &str) -> Option<char> {
    if !new.contains("\\'") && !new.contains("\\\"") {
        return None;
    }
    let matched = matched_text(content, spans);
    ['\'', '"'].into_iter().find(|&quote| {
        let sequence = if quote == '"' { "\\\"" } else { "\\'" };
        new.contains(sequence) && old.contains(sequence) && !matched.contains(sequence)
    })
}

/// `new` with literal `\t` / `\r` turned into control characters when the matched regions
/// contain real ones (the model escaped them in JSON).
fn unescape_controls<'a>(new: &'a str, content: &str, spans: &[Span]) -> Cow<'a, str> {
    let has_tab = new.contains("\\t");
    let has_cr = new.contains("\\r");
    if !has_tab && !has_cr {
        return Cow::Borrowed(new);
    }
    let in_region = |ch: char| spans.iter().any(|&(s, e)| content[s..e].contains(ch));
    let mut out = Cow::Borrowed(new);
    if has_tab && in_region('\t') {
        out = Cow::Owned(out.replace("\\t", "\t"));
    }
    if has_cr && in_region('\r') {
        out = Cow::Owned(out.replace("\\r", "\r"));
    }
    out
}

/// Applies the ASCII-level edit `old -> new` to the file's own text so typographic characters
/// the edit did not touch survive (used after a `unicode_normalized` match).
fn keep_file_unicode(content: &str, spans: &[Span], old: &str, new: &str) -> String {
    let region: Vec<char> = matched_text(content, spans).chars().collect();
    let old_norm: Vec<char> = strategies::unicode_normalize(old).chars().collect();
    let mut region_norm = Vec::with_capacity(region.len());
    // Normalised char offset of each region char, plus the end sentinel.
    let mut norm_offsets = Vec::with_capacity(region.len() + 1);
    for &ch in &region {
        norm_offsets.push(region_norm.len());
        match strategies::ascii_spelling(ch) {
            Some(ascii) => region_norm.extend(ascii.chars()),
            None => region_norm.push(ch),
        }
    }
    norm_offsets.push(region_norm.len());
    if region_norm != old_norm {
        return new.to_owned();
    }
    let new_chars: Vec<char> = new.chars().collect();
    let mut out = String::with_capacity(new.len());
    for op in seqmatch::opcodes(&old_norm, &new_chars) {
        match op.tag {
            OpTag::Equal => {
                let start = norm_offsets[..region.len()]
                    .binary_search(&op.a_start)
                    .unwrap_or(0);
                let end = start
                    + norm_offsets[start..region.len()].partition_point(|&norm| norm < op.a_end);
                out.extend(&region[start..end]);
            }
            OpTag::Replace | OpTag::Insert => out.extend(&new_chars[op.b_start..op.b_end]),
            OpTag::Delete => {}
        }
    }
    out
}

/// Replaces every span (overlapping ones after the first are skipped) and returns the new text
/// and the number of replacements. With `reindent_from`, the replacement is re-indented per
/// region to the file's indentation.
fn apply_spans(
    content: &str,
    spans: &[Span],
    new: &str,
    reindent_from: Option<&str>,
) -> (String, usize) {
    let mut ordered = spans.to_vec();
    ordered.sort_unstable();
    let mut out = String::with_capacity(content.len() + new.len());
    let mut copied_to = 0;
    let mut count = 0;
    for (start, end) in ordered {
        if start < copied_to {
            continue;
        }
        out.push_str(&content[copied_to..start]);
        match reindent_from {
            Some(old) => out.push_str(&reindent(&content[start..end], old, new)),
            None => out.push_str(new),
        }
        copied_to = end;
        count += 1;
    }
    out.push_str(&content[copied_to..]);
    (out, count)
}

/// Leading spaces and tabs of `line`.
fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// First line of `text` with non-whitespace content.
fn first_meaningful_line(text: &str) -> Option<&str> {
    text.split('\n')
        .find(|line| !strategies::py_strip(line).is_empty())
}

/// `new` shifted from the model's base indentation (that of `old`) to the file region's.
fn reindent<'a>(region: &str, old: &str, new: &'a str) -> Cow<'a, str> {
    if new.is_empty() {
        return Cow::Borrowed(new);
    }
    let (Some(old_first), Some(file_first)) =
        (first_meaningful_line(old), first_meaningful_line(region))
    else {
        return Cow::Borrowed(new);
    };
    let (old_indent, file_indent) = (indent_of(old_first), indent_of(file_first));
    if old_indent == file_indent {
        return Cow::Borrowed(new);
    }
    let mut out = String::with_capacity(new.len() + 16);
    for (index, line) in new.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        if strategies::py_strip(line).is_empty() {
            out.push_str(line);
        } else if let Some(rest) = line.strip_prefix(old_indent) {
            out.push_str(file_indent);
            out.push_str(rest);
        } else {
            out.push_str(file_indent);
            out.push_str(line.trim_start_matches([' ', '\t']));
        }
    }
    Cow::Owned(out)
}
