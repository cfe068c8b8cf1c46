//! All-or-nothing batches (`operations=[{action, content?, old_text?}, …]`): every operation is
//! applied to a working copy under the lock and only the final size is checked against the limit.

use super::entries::{format_count, joined_chars, py_strip};
use super::error::MemoryError;
use super::scan::first_threat_message;
use super::store::{Edit, MemoryStore, Outcome, Target};

/// One operation of a batch, as received (unstripped; empty string when a field is absent).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BatchOp {
    /// `"add"`, `"replace"` or `"remove"`; anything else fails the batch.
    pub action: String,
    /// New entry text for add/replace.
    pub content: String,
    /// Unique substring of the entry for replace/remove.
    pub old_text: String,
}

impl MemoryStore {
    /// Applies `operations` to `target` atomically: on any failure, or if the final size
    /// exceeds the limit, nothing is written. A duplicate add is skipped, not an error.
    pub fn apply_batch(
        &self,
        target: Target,
        operations: &[BatchOp],
    ) -> Result<Outcome, MemoryError> {
        if operations.is_empty() {
            return Err(MemoryError::Invalid("operations list is empty."));
        }
        for (i, op) in operations.iter().enumerate() {
            if matches!(op.action.as_str(), "add" | "replace")
                && !op.content.is_empty()
                && let Some(message) = first_threat_message(&op.content)
            {
                return Err(MemoryError::Blocked(format!(
                    "Operation {}: {message}",
                    i + 1
                )));
            }
        }
        self.mutate(target, |entries, limit| {
            let mut working = entries.clone();
            for (i, op) in operations.iter().enumerate() {
                if let Err(reason) = apply_one(&mut working, op) {
                    let action = if op.action.is_empty() { "unknown" } else { op.action.as_str() };
                    return Err(MemoryError::Batch {
                        message: format!(
                            "Operation {} ({action}): {reason} No operations were applied (batch is all-or-nothing).",
                            i + 1
                        ),
                        current: joined_chars(entries),
                        limit,
                        entries: entries.clone(),
                    });
                }
            }
            let new_total = joined_chars(&working);
            if new_total > limit {
                return Err(MemoryError::Batch {
                    message: format!(
                        "After applying all {} operations, memory would be at {}/{} chars -- over the limit. \
                         Remove or shorten more entries in the same batch (see current_entries below), then retry.",
                        operations.len(),
                        format_count(new_total),
                        format_count(limit)
                    ),
                    current: joined_chars(entries),
                    limit,
                    entries: entries.clone(),
                });
            }
            *entries = working;
            Ok(Edit { message: format!("Applied {} operation(s).", operations.len()), write: true })
        })
    }
}

/// Applies one operation to the working copy; `Err` carries Hermes' reason text.
fn apply_one(working: &mut Vec<String>, op: &BatchOp) -> Result<(), String> {
    let content = py_strip(&op.content);
    let old_text = py_strip(&op.old_text);
    match op.action.as_str() {
        "add" => {
            if content.is_empty() {
                return Err("content is required.".into());
            }
            if !working.iter().any(|e| e == content) {
                working.push(content.to_owned());
            }
        }
        "replace" => {
            if old_text.is_empty() {
                return Err("old_text is required.".into());
            }
            if content.is_empty() {
                return Err("content is required (use action='remove' to delete).".into());
            }
            let index = unique_match(working, old_text)?;
            working[index] = content.to_owned();
        }
        "remove" => {
            if old_text.is_empty() {
                return Err("old_text is required.".into());
            }
            let index = unique_match(working, old_text)?;
            working.remove(index);
        }
        _ => return Err("unknown action. Use add, replace, or remove.".into()),
    }
    Ok(())
}

/// The first entry containing `old_text`, unless none or several distinct entries do.
fn unique_match(working: &[String], old_text: &str) -> Result<usize, String> {
    let mut matching = working
        .iter()
        .enumerate()
        .filter(|(_, e)| e.contains(old_text));
    let Some((index, first)) = matching.next() else {
        return Err(format!("no entry matched '{old_text}'."));
    };
    if matching.any(|(_, other)| other != first) {
        return Err(format!(
            "'{old_text}' matched multiple distinct entries -- be more specific."
        ));
    }
    Ok(index)
}
