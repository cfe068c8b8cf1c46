//! Applies the hunks of one `*** Update File:` to a file's text in memory: each hunk's context
//! and removed lines are located with the fuzzy chain; addition-only hunks go after their
//! `@@` hint line or at the end of the file.

use super::fuzzy::{PatchError, fuzzy_replace};
use super::v4a::{Hunk, HunkLine};

/// Bytes searched before a hunk's `@@` hint when the whole file gave no unique match.
const HINT_WINDOW_BEFORE: usize = 500;
/// Bytes searched after the start of the hint.
const HINT_WINDOW_AFTER: usize = 2000;

/// Result of applying the hunks of one file.
pub(super) struct Updated {
    /// The new text.
    pub(super) text: String,
    /// Hunks that add or remove something (inert context-only hunks are skipped).
    pub(super) changes: usize,
}

/// Applies `hunks` in order to `text`; every failing hunk is reported as `path: hunk N …`.
pub(super) fn apply_hunks(path: &str, text: &str, hunks: &[Hunk]) -> Result<Updated, Vec<String>> {
    let mut current = text.to_owned();
    let mut changes = 0;
    let mut errors = Vec::new();
    for (index, hunk) in hunks.iter().enumerate() {
        let mut search = Vec::new();
        let mut replace = Vec::new();
        let mut changed = false;
        for line in &hunk.lines {
            match line {
                HunkLine::Context(text) => {
                    search.push(text.as_str());
                    replace.push(text.as_str());
                }
                HunkLine::Remove(text) => {
                    search.push(text.as_str());
                    changed = true;
                }
                HunkLine::Add(text) => {
                    replace.push(text.as_str());
                    changed = true;
                }
            }
        }
        if !changed {
            continue;
        }
        changes += 1;
        let label = match &hunk.context_hint {
            Some(hint) => format!("'{hint}'"),
            None => "(no hint)".to_owned(),
        };
        let prefix = format!(
            "{path}: hunk {} {label} (patch line {})",
            index + 1,
            hunk.line
        );
        let outcome = if search.is_empty() {
            insert_after_hint(&current, hunk.context_hint.as_deref(), &replace.join("\n"))
                .map_err(|reason| format!("{path}: addition-only hunk {reason}"))
        } else {
            replace_near_hint(
                &current,
                &search.join("\n"),
                &replace.join("\n"),
                hunk.context_hint.as_deref(),
            )
            .map_err(|(err, describe)| match err {
                PatchError::NotFound => format!("{prefix} not found — {describe}"),
                _ => format!("{prefix} not applied — {describe}"),
            })
        };
        match outcome {
            Ok(next) => current = next,
            Err(message) => errors.push(message),
        }
    }
    if errors.is_empty() {
        Ok(Updated {
            text: current,
            changes,
        })
    } else {
        Err(errors)
    }
}

/// Fuzzy-replaces `search` in `text`; if that fails and the hint occurs in the text, retries
/// within a window around the hint. The error comes with its readable description.
fn replace_near_hint(
    text: &str,
    search: &str,
    replacement: &str,
    hint: Option<&str>,
) -> Result<String, (PatchError, String)> {
    let err = match fuzzy_replace(text, search, replacement, false) {
        Ok(done) => return Ok(done.content),
        Err(err) => err,
    };
    if let Some(at) = hint
        .filter(|hint| !hint.is_empty())
        .and_then(|hint| text.find(hint))
    {
        let start = floor_boundary(text, at.saturating_sub(HINT_WINDOW_BEFORE));
        let end = ceil_boundary(text, at.saturating_add(HINT_WINDOW_AFTER));
        if let Ok(done) = fuzzy_replace(&text[start..end], search, replacement, false) {
            return Ok([&text[..start], &done.content, &text[end..]].concat());
        }
    }
    let describe = err.describe(search, text);
    Err((err, describe))
}

/// Inserts `insert` after the single line containing `hint`, or at the end without a hint.
fn insert_after_hint(text: &str, hint: Option<&str>, insert: &str) -> Result<String, String> {
    let Some(hint) = hint else {
        return Ok(format!("{}\n{insert}\n", text.trim_end_matches('\n')));
    };
    match count_overlapping(text, hint) {
        0 => Err(format!("context hint '{hint}' not found")),
        1 => {
            let at = text.find(hint).unwrap_or(0);
            Ok(match text[at..].find('\n') {
                Some(eol) => {
                    let split = at + eol + 1;
                    [&text[..split], insert, "\n", &text[split..]].concat()
                }
                None => format!("{text}\n{insert}"),
            })
        }
        n => Err(format!(
            "context hint '{hint}' is ambiguous ({n} occurrences) — provide a more unique hint"
        )),
    }
}

/// Occurrences of `needle` in `text`, overlapping ones included.
fn count_overlapping(text: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    let mut count = 0;
    let mut from = 0;
    while let Some(found) = text[from..].find(needle) {
        count += 1;
        let at = from + found;
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    count
}

/// Largest char boundary of `text` at or below `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Smallest char boundary of `text` at or above `at` (capped at its length).
fn ceil_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}
