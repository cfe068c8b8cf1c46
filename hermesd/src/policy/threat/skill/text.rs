//! Text plumbing shared by the scanner: logical lines (shell `\` continuations joined), safe
//! slicing at byte offsets from byte-mode regexes, Markdown table rows and code spans.

use std::borrow::Cow;

/// Continuation lines joined into one logical line at most (bounds pathological input).
const MAX_JOINED_LINES: usize = 64;

/// A logical line: one physical line, or several joined by trailing backslashes.
pub(super) struct LogicalLine<'a> {
    /// 1-based number of the first physical line.
    pub number: usize,
    /// Line text without the trailing `\r`; continuations joined with a space.
    pub text: Cow<'a, str>,
}

/// Splits `text` into logical lines. Like Hermes, lines are split on `\n` only.
pub(super) fn logical_lines(text: &str) -> impl Iterator<Item = LogicalLine<'_>> {
    let mut physical = text.split('\n').enumerate().peekable();
    std::iter::from_fn(move || {
        let (index, first) = physical.next()?;
        let first = strip_cr(first);
        if !continues(first) {
            return Some(LogicalLine {
                number: index + 1,
                text: Cow::Borrowed(first),
            });
        }
        let mut joined = String::with_capacity(first.len() * 2);
        joined.push_str(&first[..first.len() - 1]);
        let mut count = 1;
        while count < MAX_JOINED_LINES {
            let Some((_, next)) = physical.next() else {
                break;
            };
            let next = strip_cr(next);
            joined.push(' ');
            count += 1;
            if continues(next) {
                joined.push_str(&next[..next.len() - 1]);
            } else {
                joined.push_str(next);
                break;
            }
        }
        Some(LogicalLine {
            number: index + 1,
            text: Cow::Owned(joined),
        })
    })
}

fn strip_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

/// A line ending in a single backslash continues on the next line (shell syntax).
fn continues(line: &str) -> bool {
    line.ends_with('\\') && !line.ends_with("\\\\")
}

/// `line[pos..]`, with `pos` moved forward to the next character boundary.
pub(super) fn after(line: &str, pos: usize) -> &str {
    let mut pos = pos.min(line.len());
    while !line.is_char_boundary(pos) {
        pos += 1;
    }
    &line[pos..]
}

/// `line[..pos]`, with `pos` moved back to the previous character boundary.
pub(super) fn before(line: &str, pos: usize) -> &str {
    let mut pos = pos.min(line.len());
    while !line.is_char_boundary(pos) {
        pos -= 1;
    }
    &line[..pos]
}

/// A Markdown table row (`| a | b |`): its pipes separate cells, not commands.
pub(super) fn is_table_row(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.len() > 1 && trimmed.starts_with('|') && trimmed.ends_with('|')
}

/// The inline code spans of a line (text between single backticks), with GitHub's escaped
/// table pipes (`\|`) turned back into pipes.
pub(super) fn code_spans(line: &str) -> Vec<String> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| !span.trim().is_empty())
        .map(|span| span.replace("\\|", "|"))
        .collect()
}

/// Trimmed line shortened to Hermes' 120 characters (117 + `...`).
pub(super) fn shorten(line: &str) -> String {
    let trimmed = line.trim();
    match trimmed.char_indices().nth(117) {
        Some((cut, _)) if trimmed.chars().count() > 120 => format!("{}...", &trimmed[..cut]),
        _ => trimmed.to_owned(),
    }
}

/// 1-based line number of byte offset `pos` in `text`.
pub(super) fn line_of(text: &str, pos: usize) -> usize {
    before(text, pos).bytes().filter(|&b| b == b'\n').count() + 1
}
