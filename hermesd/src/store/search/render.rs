//! Turn a parsed query into FTS5 MATCH expressions: one for `messages_fts` (unicode61 over the
//! raw text) and one for `messages_cjk` (CJK runs as bigram phrases), and the words a match
//! contains, for ranking.

use super::cjk::{Piece, has_cjk, pieces, push_bigrams};
use super::query::{Expr, Term};

/// Which index an expression is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Index {
    /// `messages_fts`: unicode61 over the stored text.
    Plain,
    /// `messages_cjk`: unicode61 over [`super::cjk::cjk_terms`] of the stored text.
    Cjk,
}

/// The FTS5 expression for `expr` against `index`; every term is a quoted string, every
/// operator parenthesised, so the result is always valid FTS5 syntax.
pub(super) fn fts5(expr: &Expr, index: Index) -> String {
    let mut out = String::new();
    write_expr(expr, index, &mut out);
    out
}

fn write_expr(expr: &Expr, index: Index, out: &mut String) {
    match expr {
        Expr::Term(term) => write_term(term, index, out),
        Expr::And(items) => write_list(items, " AND ", index, out),
        Expr::Or(items) => write_list(items, " OR ", index, out),
        Expr::Not(kept, excluded) => {
            out.push('(');
            write_expr(kept, index, out);
            out.push_str(" NOT ");
            write_expr(excluded, index, out);
            out.push(')');
        }
    }
}

fn write_list(items: &[Expr], operator: &str, index: Index, out: &mut String) {
    out.push('(');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(operator);
        }
        write_expr(item, index, out);
    }
    out.push(')');
}

fn write_term(term: &Term, index: Index, out: &mut String) {
    let mut prefix = term.prefix;
    out.push('"');
    if index == Index::Cjk && has_cjk(&term.text) {
        prefix |= write_cjk_phrase(&term.text, out);
    } else {
        push_escaped(&term.text, out);
    }
    out.push('"');
    if prefix {
        out.push('*');
    }
}

/// Write the tokens `messages_cjk` holds for this text, in order, so that they form an FTS5
/// phrase: a CJK run of two or more characters as its bigrams (plus its last character alone
/// when more text follows, as in the index), other text as it is. Returns whether the phrase
/// must end as a prefix query: true when it ends with a one-character run.
fn write_cjk_phrase(text: &str, out: &mut String) -> bool {
    let mut parts = pieces(text).peekable();
    let mut ends_single = false;
    while let Some(piece) = parts.next() {
        let last = parts.peek().is_none();
        match piece {
            Piece::Other(other) => push_escaped(other, out),
            Piece::Cjk(run) => {
                out.push(' ');
                push_bigrams(run, out);
                let mut chars = run.chars();
                let final_char = chars.next_back();
                let single = chars.next().is_none();
                if let (false, false, Some(c)) = (last, single, final_char) {
                    out.push(' ');
                    out.push(c);
                }
                out.push(' ');
                ends_single = last && single;
            }
        }
    }
    ends_single
}

fn push_escaped(text: &str, out: &mut String) {
    for c in text.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
}

/// Every word (token) of the terms a matching message contains (terms under NOT left out),
/// each as a one-word FTS5 phrase (prefix kept on a term's last word), without repeats: what
/// ranking scores by. Words are split where unicode61 would split them, approximately.
pub(super) fn positive_words(expr: &Expr, index: Index) -> Vec<String> {
    let mut out = Vec::new();
    collect_words(expr, index, &mut out);
    out
}

fn collect_words(expr: &Expr, index: Index, out: &mut Vec<String>) {
    match expr {
        Expr::Term(term) => {
            let (text, prefix) = if index == Index::Cjk && has_cjk(&term.text) {
                let mut text = String::new();
                let single = write_cjk_phrase(&term.text, &mut text);
                (text, term.prefix || single)
            } else {
                (term.text.clone(), term.prefix)
            };
            let words: Vec<&str> = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect();
            for (i, word) in words.iter().enumerate() {
                let star = if prefix && i + 1 == words.len() {
                    "*"
                } else {
                    ""
                };
                let phrase = format!("\"{word}\"{star}");
                if !out.contains(&phrase) {
                    out.push(phrase);
                }
            }
        }
        Expr::And(items) | Expr::Or(items) => {
            for item in items {
                collect_words(item, index, out);
            }
        }
        Expr::Not(kept, _) => collect_words(kept, index, out),
    }
}

/// Whether `expr` is a single term of one word (its window can be scored as it is read).
pub(super) fn single_word(expr: &Expr) -> bool {
    match expr {
        Expr::Term(term) => {
            let mut words = term
                .text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty());
            words.next().is_some() && words.next().is_none() && !has_cjk(&term.text)
        }
        _ => false,
    }
}

/// Whether `expr` can match a message without CJK text, where every CJK term is false.
pub(super) fn matches_without_cjk(expr: &Expr) -> bool {
    match expr {
        Expr::Term(term) => !has_cjk(&term.text),
        Expr::And(items) => items.iter().all(matches_without_cjk),
        Expr::Or(items) => items.iter().any(matches_without_cjk),
        Expr::Not(kept, _) => matches_without_cjk(kept),
    }
}
