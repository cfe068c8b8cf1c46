//! What replaces the middle when no summary could be made: a short note, keeping any earlier summary.

use super::summary::wrapped_message;
use crate::llm::ChatMessage;

/// Body of a fallback note when there was no earlier summary; never reported as a previous summary.
pub const NO_SUMMARY_BODY: &str = "No summary is available for the removed messages.";
/// Failure reasons longer than this are cut in the note.
const MAX_REASON_CHARS: usize = 160;

/// The note saying `removed` messages were dropped because summarising failed with `reason`.
///
/// It has the shape of a summary message: with `previous_summary`, its body is that summary
/// unchanged, so the next compression updates it as usual.
pub fn fallback_message(
    removed: usize,
    previous_summary: Option<&str>,
    reason: &str,
) -> ChatMessage {
    let reason = one_line(reason);
    match previous_summary.map(str::trim).filter(|s| !s.is_empty()) {
        Some(previous) => wrapped_message(
            &format!(
                "{removed} later messages were removed because a summary of them could not be made \
                 ({reason}); the summary below covers only the turns before them. Ask the user if \
                 something from the removed turns is needed."
            ),
            previous,
        ),
        None => wrapped_message(
            &format!(
                "{removed} earlier messages were removed because a summary of them could not be made \
                 ({reason}). Ask the user if something from them is needed."
            ),
            NO_SUMMARY_BODY,
        ),
    }
}

/// `reason` on one line, bounded, never empty.
fn one_line(reason: &str) -> String {
    let mut line: String = reason
        .split_whitespace()
        .flat_map(|word| [" ", word])
        .skip(1)
        .collect();
    if line.is_empty() {
        return "unknown error".to_owned();
    }
    if line.chars().count() > MAX_REASON_CHARS {
        line = line.chars().take(MAX_REASON_CHARS - 1).collect();
        line.push('…');
    }
    line
}
