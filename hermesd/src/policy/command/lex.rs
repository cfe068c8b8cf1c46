//! Tokenizers of the terminal guard: a Python-`shlex`-compatible splitter, a whitespace
//! splitter that keeps each word's source span, and the decoding of bash's `$'…'` and `$"…"`
//! quoting that runs before either (and before every rule) sees a command.

use std::borrow::Cow;

use super::reader::{Input, Mark, scan};
use super::shell::is_py_space;

/// How deep here-document bodies inside bodies are decoded; deeper ones are left as written.
const MAX_BODY_DEPTH: usize = 8;

/// `text` with its quoting spelled plainly, as bash reads it: every `$'…'` (ANSI-C quoting)
/// becomes the string bash makes of it (`$'\x72\x6d'` → `rm`), quoted where it needs quotes,
/// and every `$"…"` (locale quoting) a plain double-quoted string, so the words every rule
/// splits are the words bash runs. Quoted text stays one word: `$'a b'` → `'a b'`. Inside
/// `"…"` bash leaves `$'…'` as text, but the string may be a script another shell runs
/// (`bash -c "…"`, `ssh host "…"`), so it is decoded there too, escaped so that the string
/// still reads the same way; a here-document's body is decoded as the script it may be (`bash
/// <<EOF`). Text without `$'` or `$"` is returned as it is.
pub(super) fn decode_quoting(text: &str) -> Cow<'_, str> {
    decode_quoting_at(text, 0)
}

fn decode_quoting_at(text: &str, depth: usize) -> Cow<'_, str> {
    if depth > MAX_BODY_DEPTH || !(text.contains("$'") || text.contains("$\"")) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for mark in scan(text, Input::Script).marks {
        match mark {
            Mark::AnsiC {
                start,
                end,
                in_double,
            } => {
                out.push_str(&text[copied..start]);
                let body = &text[start + 2..end - 1];
                if in_double {
                    let decoded = decode_ansi_c(&undo_double_quote_escapes(body));
                    push_word_in_double_quotes(&mut out, &decoded);
                } else {
                    push_word(&mut out, &decode_ansi_c(body));
                }
                copied = end;
            }
            Mark::Locale { at } => {
                out.push_str(&text[copied..at]);
                copied = at + 1;
            }
            Mark::Body { start, end } => {
                out.push_str(&text[copied..start]);
                out.push_str(&decode_quoting_at(&text[start..end], depth + 1));
                copied = end;
            }
            Mark::End { .. } => {}
        }
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// `text` as one shell word that means it: bare when no character of it is special to the
/// shell anywhere in a word (`rm`, `.env`, `/tmp/x`), so the plain patterns see it; otherwise
/// single-quoted, a `'` in it written `"'"`.
fn push_word(out: &mut String, text: &str) {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./+,:@%-".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        out.push_str(text);
        return;
    }
    if text.is_empty() {
        out.push_str("''");
        return;
    }
    for (index, piece) in text.split('\'').enumerate() {
        if index > 0 {
            out.push_str("\"'\"");
        }
        if !piece.is_empty() {
            out.push('\'');
            out.push_str(piece);
            out.push('\'');
        }
    }
}

/// [`push_word`] inside `"…"`: the word as the shell the string is given to should read it,
/// written so that the double-quoted string still reads the same way (its `"`, `\`, `$` and
/// backticks escaped, a `'` written `\"'\"`).
fn push_word_in_double_quotes(out: &mut String, text: &str) {
    let mut word = String::new();
    push_word(&mut word, text);
    for c in word.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
}

/// The text a shell given the contents of `"…"` reads from `raw`: the double quotes' escapes
/// (`\\`, `\"`, `\$`, `` \` ``, backslash-newline) undone.
fn undo_double_quote_escapes(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('\n')) => {
                chars.next();
            }
            ('\\', Some(&next @ ('\\' | '"' | '$' | '`'))) => {
                chars.next();
                out.push(next);
            }
            _ => out.push(c),
        }
    }
    out
}

/// The string bash makes of the text between the quotes of `$'…'`: `\a \b \e \E \f \n \r
/// \t \v`, `\\ \' \" \?`, `\nnn` (one to three octal digits), `\xHH` (one or two hex
/// digits), `\uHHHH` and `\UHHHHHHHH` (one to four or eight hex digits, a Unicode character),
/// `\cX` (a control character; `\c?` is DEL). Any other backslash is kept with what follows
/// it (`\q`, and `\x`, `\u`, `\c` without what they need). A character whose value is zero ends
/// the string, as in bash. Bytes that are no UTF-8 (`\xff`) read as U+FFFD.
pub(super) fn decode_ansi_c(body: &str) -> String {
    let bytes = body.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let Some(&escape) = bytes.get(i + 1).filter(|_| bytes[i] == b'\\') else {
            out.push(bytes[i]);
            i += 1;
            continue;
        };
        i += 2;
        let byte = match escape {
            b'a' => 0x07,
            b'b' => 0x08,
            b'e' | b'E' => 0x1b,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0b,
            b'\\' | b'\'' | b'"' | b'?' => escape,
            b'0'..=b'7' => {
                let (value, used) = digits(&bytes[i..], 8, 2);
                i += used;
                // bash keeps the low byte of `\400` and above.
                ((u32::from(escape - b'0') << (3 * used)) + value) as u8
            }
            b'x' => match digits(&bytes[i..], 16, 2) {
                (_, 0) => {
                    out.extend_from_slice(b"\\x");
                    continue;
                }
                (value, used) => {
                    i += used;
                    value as u8
                }
            },
            b'u' | b'U' => {
                let most = if escape == b'u' { 4 } else { 8 };
                let (value, used) = digits(&bytes[i..], 16, most);
                if used == 0 {
                    out.extend_from_slice(&[b'\\', escape]);
                    continue;
                }
                i += used;
                if value == 0 {
                    break;
                }
                let c = char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER);
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                continue;
            }
            b'c' => {
                let Some(&control) = bytes.get(i) else {
                    out.extend_from_slice(b"\\c");
                    continue;
                };
                i += 1;
                // `\c\\` is the control character of a backslash.
                if control == b'\\' && bytes.get(i) == Some(&b'\\') {
                    i += 1;
                }
                if control == b'?' {
                    0x7f
                } else {
                    control.to_ascii_uppercase() & 0x1f
                }
            }
            other => {
                out.extend_from_slice(&[b'\\', other]);
                continue;
            }
        };
        if byte == 0 {
            break;
        }
        out.push(byte);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The value of the first digits of `bytes` in `radix`, at most `most` of them, and how many
/// were read.
fn digits(bytes: &[u8], radix: u32, most: usize) -> (u32, usize) {
    let mut value = 0u32;
    let mut used = 0;
    for &b in bytes.iter().take(most) {
        let Some(digit) = char::from(b).to_digit(radix) else {
            break;
        };
        value = value * radix + digit;
        used += 1;
    }
    (value, used)
}

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
