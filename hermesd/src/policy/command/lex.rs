//! Tokenizers of the terminal guard: a Python-`shlex`-compatible splitter and a whitespace
//! splitter that keeps each word's source span.

use super::shell::is_py_space;

/// One word of [`tokens_with_spans`]: unquoted value, source span, and whether the word is
/// inert single-quoted data.
pub(super) struct SpannedToken {
    pub(super) value: String,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) inert_single_quoted: bool,
}

/// Whitespace-split words from `start`, with quotes removed; `None` on unbalanced quoting.
pub(super) fn tokens_with_spans(segment: &str, start: usize) -> Option<Vec<SpannedToken>> {
    let mut tokens = Vec::new();
    let mut chars = segment.get(start..)?.char_indices().peekable();
    loop {
        while chars.next_if(|&(_, c)| is_py_space(c)).is_some() {}
        let Some(&(token_start, _)) = chars.peek() else {
            break;
        };
        let mut value = String::new();
        let mut quote: Option<char> = None;
        let mut token_end = segment.len() - start;
        while let Some(&(at, c)) = chars.peek() {
            if quote.is_none() && is_py_space(c) {
                token_end = at;
                break;
            }
            chars.next();
            match quote {
                Some(q) if c == q => quote = None,
                Some('"') if c == '\\' && chars.peek().is_some() => {
                    value.extend(chars.next().map(|(_, next)| next));
                }
                Some(_) => value.push(c),
                None if c == '\'' || c == '"' => quote = Some(c),
                None if c == '\\' => value.push(chars.next()?.1),
                None => value.push(c),
            }
        }
        if quote.is_some() {
            return None;
        }
        let raw = &segment[start + token_start..start + token_end];
        let inert_single_quoted = (raw.len() >= 2 && raw.starts_with('\'') && raw.ends_with('\''))
            || (raw.contains("='") && raw.ends_with('\''))
            || raw == "'";
        tokens.push(SpannedToken {
            value,
            start: start + token_start,
            end: start + token_end,
            inert_single_quoted,
        });
    }
    Some(tokens)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LexState {
    Space,
    Word,
    Punctuation,
    Quote(char),
    Escape(EscapedFrom),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EscapedFrom {
    Word,
    DoubleQuote,
}

/// Python `shlex` in POSIX mode with `whitespace_split=True` and no comments; with
/// `punctuation` the characters `<` and `>` form their own tokens (`punctuation_chars="<>"`).
/// `None` where Python raises `ValueError` (unclosed quote, trailing escape).
pub(super) fn shlex_split(text: &str, punctuation: bool) -> Option<Vec<String>> {
    let is_punct = |c: char| punctuation && (c == '<' || c == '>');
    let is_ws = |c: char| matches!(c, ' ' | '\t' | '\r' | '\n');
    let mut tokens = Vec::new();
    let mut token = String::new();
    let mut quoted = false;
    let mut state = LexState::Space;
    let mut pushback: Option<char> = None;
    let mut chars = text.chars();
    let mut emit = |token: &mut String, quoted: &mut bool| {
        if !token.is_empty() || *quoted {
            tokens.push(std::mem::take(token));
        }
        *quoted = false;
    };
    loop {
        let next = pushback.take().or_else(|| chars.next());
        match (state, next) {
            (LexState::Quote(_) | LexState::Escape(_), None) => return None,
            (_, None) => {
                emit(&mut token, &mut quoted);
                break;
            }
            (LexState::Space, Some(c)) => {
                if is_ws(c) {
                    continue;
                }
                state = match c {
                    '\\' => LexState::Escape(EscapedFrom::Word),
                    '\'' | '"' => LexState::Quote(c),
                    _ if is_punct(c) => {
                        token.push(c);
                        LexState::Punctuation
                    }
                    _ => {
                        token.push(c);
                        LexState::Word
                    }
                };
            }
            (LexState::Word, Some(c)) => match c {
                _ if is_ws(c) => {
                    state = LexState::Space;
                    emit(&mut token, &mut quoted);
                }
                '\'' | '"' => state = LexState::Quote(c),
                '\\' => state = LexState::Escape(EscapedFrom::Word),
                _ if is_punct(c) => {
                    pushback = Some(c);
                    state = LexState::Space;
                    emit(&mut token, &mut quoted);
                }
                _ => token.push(c),
            },
            (LexState::Punctuation, Some(c)) => {
                if is_punct(c) {
                    token.push(c);
                } else {
                    if !is_ws(c) {
                        pushback = Some(c);
                    }
                    state = LexState::Space;
                    emit(&mut token, &mut quoted);
                }
            }
            (LexState::Quote(q), Some(c)) => {
                quoted = true;
                if c == q {
                    state = LexState::Word;
                } else if c == '\\' && q == '"' {
                    state = LexState::Escape(EscapedFrom::DoubleQuote);
                } else {
                    token.push(c);
                }
            }
            (LexState::Escape(from), Some(c)) => {
                if from == EscapedFrom::DoubleQuote && c != '\\' && c != '"' {
                    token.push('\\');
                }
                token.push(c);
                state = match from {
                    EscapedFrom::Word => LexState::Word,
                    EscapedFrom::DoubleQuote => LexState::Quote('"'),
                };
            }
        }
    }
    Some(tokens)
}
