//! Snippets: the text around the first match in a message, matched words between « and ».
//! Built here rather than with FTS5's `snippet()`: `messages_cjk` stores no text, and for
//! `messages_fts` a second FTS5 pass over the matches costs more than the rest of a search.

use std::collections::HashSet;

use super::cjk::{Piece, is_cjk, pieces};
use super::query::Expr;

/// Characters of context kept on each side of the first match.
const CONTEXT_CHARS: usize = 40;

/// Something to mark: a word (matched at a word start, and whole unless `prefix`) or a run of
/// CJK characters (matched anywhere), lower-cased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Needle {
    chars: Vec<char>,
    prefix: bool,
    cjk: bool,
}

fn fold(c: char) -> char {
    if c.is_ascii() {
        c.to_ascii_lowercase()
    } else {
        c.to_lowercase().next().unwrap_or(c)
    }
}

/// The words and CJK runs of the terms a matching message contains (terms under NOT left out),
/// longest first. With `only`, words not in it are left out (CJK runs are kept).
pub(super) fn needles(expr: &Expr, only: Option<&HashSet<String>>) -> Vec<Needle> {
    let mut out = Vec::new();
    collect(expr, only, &mut out);
    out.sort_by_key(|n| std::cmp::Reverse(n.chars.len()));
    out.dedup();
    out
}

fn collect(expr: &Expr, only: Option<&HashSet<String>>, out: &mut Vec<Needle>) {
    match expr {
        Expr::Term(term) => {
            let mut words = Vec::new();
            for piece in pieces(&term.text) {
                match piece {
                    Piece::Cjk(run) => words.push((run.to_string(), true)),
                    Piece::Other(other) => words.extend(
                        other
                            .split(|c: char| !c.is_alphanumeric())
                            .filter(|w| !w.is_empty())
                            .map(|w| (w.to_lowercase(), false)),
                    ),
                }
            }
            let last = words.len().saturating_sub(1);
            for (i, (word, cjk)) in words.into_iter().enumerate() {
                if !cjk && only.is_some_and(|only| !only.contains(&word)) {
                    continue;
                }
                out.push(Needle {
                    chars: word.chars().map(fold).collect(),
                    prefix: term.prefix && i == last,
                    cjk,
                });
            }
        }
        Expr::And(items) | Expr::Or(items) => {
            for item in items {
                collect(item, only, out);
            }
        }
        Expr::Not(kept, _) => collect(kept, only, out),
    }
}

fn word_char(c: char) -> bool {
    c.is_alphanumeric() && !is_cjk(c)
}

/// The length in chars of the first needle matching at `at` in `folded` (the text, folded
/// char by char), if any.
fn match_at(folded: &[char], at: usize, needles: &[Needle]) -> Option<usize> {
    let first = folded[at];
    let starts_word = || at == 0 || !word_char(folded[at - 1]);
    needles
        .iter()
        .find(|needle| {
            if needle.chars.first() != Some(&first) || !(needle.cjk || starts_word()) {
                return false;
            }
            let end = at + needle.chars.len();
            folded.get(at..end) == Some(needle.chars.as_slice())
                && (needle.cjk || needle.prefix || folded.get(end).is_none_or(|&c| !word_char(c)))
        })
        .map(|needle| needle.chars.len())
}

/// About `CONTEXT_CHARS` characters either side of the first occurrence of any needle in
/// `content`, every occurrence inside marked «like this»; "…" where text was cut. Without any
/// occurrence, the start of the content.
pub(super) fn snippet(content: &str, needles: &[Needle]) -> String {
    let text: Vec<char> = content.chars().collect();
    let folded: Vec<char> = text.iter().map(|&c| fold(c)).collect();
    let first = (0..text.len()).find_map(|i| match_at(&folded, i, needles).map(|len| (i, len)));
    let (start, end) = match first {
        Some((at, len)) => (
            at.saturating_sub(CONTEXT_CHARS),
            (at + len + CONTEXT_CHARS).min(text.len()),
        ),
        None => (0, (2 * CONTEXT_CHARS).min(text.len())),
    };
    let mut out = String::with_capacity((end - start) * 3 + 16);
    if start > 0 {
        out.push('…');
    }
    let mut i = start;
    while i < end {
        match match_at(&folded, i, needles).filter(|len| i + len <= end) {
            Some(len) => {
                out.push('«');
                out.extend(&text[i..i + len]);
                out.push('»');
                i += len;
            }
            None => {
                out.push(text[i]);
                i += 1;
            }
        }
    }
    if end < text.len() {
        out.push('…');
    }
    out
}
