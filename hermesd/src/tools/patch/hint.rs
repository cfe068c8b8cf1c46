//! "Did you mean one of these sections?" hints: the file lines closest to a text that was not
//! found, numbered, with a little context (Hermes' `find_closest_lines`).

use super::seqmatch;
use super::strategies::py_strip;

/// Lines of context shown around each candidate.
const CONTEXT_LINES: usize = 2;
/// Most candidate sections shown.
const MAX_RESULTS: usize = 3;
/// A line must be more similar than this to the anchor to be shown.
const MIN_SIMILARITY: f64 = 0.3;

/// `"\n\nDid you mean one of these sections?\n…"` for a not-found `old`, or `""` when nothing
/// in `content` looks close.
pub(super) fn no_match_hint(old: &str, content: &str) -> String {
    let sections = closest_sections(old, content);
    if sections.is_empty() {
        return String::new();
    }
    format!("\n\nDid you mean one of these sections?\n{sections}")
}

/// Numbered excerpts of `content` around the lines most similar to the first non-blank line of
/// `old`, separated by `---`.
pub fn closest_sections(old: &str, content: &str) -> String {
    let old_lines: Vec<&str> = old.lines().collect();
    let content_lines: Vec<&str> = content.lines().collect();
    let Some(anchor) = old_lines
        .iter()
        .map(|line| py_strip(line))
        .find(|line| !line.is_empty())
    else {
        return String::new();
    };
    let anchor: Vec<char> = anchor.chars().collect();
    let mut scored: Vec<(f64, usize)> = Vec::new();
    let mut line_chars = Vec::new();
    let mut matcher = seqmatch::Matcher::default();
    for (index, line) in content_lines.iter().enumerate() {
        let stripped = py_strip(line);
        if stripped.is_empty()
            || seqmatch::ratio_upper_bound(anchor.len(), stripped.chars().count()) <= MIN_SIMILARITY
        {
            continue;
        }
        line_chars.clear();
        line_chars.extend(stripped.chars());
        let similarity = matcher.ratio(&anchor, &line_chars);
        if similarity > MIN_SIMILARITY {
            scored.push((similarity, index));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut seen = Vec::new();
    let mut sections = Vec::new();
    for &(_, line_index) in scored.iter().take(MAX_RESULTS) {
        let start = line_index.saturating_sub(CONTEXT_LINES);
        let end = content_lines
            .len()
            .min(line_index + old_lines.len() + CONTEXT_LINES);
        if seen.contains(&(start, end)) {
            continue;
        }
        seen.push((start, end));
        let numbered: Vec<String> = (start..end)
            .map(|at| format!("{:4}| {}", at + 1, content_lines[at]))
            .collect();
        sections.push(numbered.join("\n"));
    }
    sections.join("\n---\n")
}
