//! Non-executing shell scanning for the terminal guard: top-level segments, command starts,
//! substitutions, shell words and the command-position words of a command line.
//!
//! Offsets are byte offsets into the scanned `&str`; every offset produced here sits on a
//! character boundary because the lexer only ever splits at ASCII bytes.

use std::borrow::Cow;

/// Python's `str.isspace()`: Unicode white space plus the ASCII information separators.
pub(super) fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `s` lower-cased as `str::to_lowercase` does, borrowed when it has nothing to lower.
pub(super) fn lowercase(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii()) {
        Cow::Owned(s.to_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

/// Length in bytes of the character starting at byte `i` (1 past the end).
pub(super) fn char_len_at(s: &str, i: usize) -> usize {
    s.get(i..)
        .and_then(|rest| rest.chars().next())
        .map_or(1, char::len_utf8)
}

/// The character starting at byte `i`, if any.
fn char_at(s: &str, i: usize) -> Option<char> {
    s.get(i..).and_then(|rest| rest.chars().next())
}

/// Offset of the first non-space character at or after `pos`.
pub(super) fn skip_space(s: &str, mut pos: usize) -> usize {
    while let Some(c) = char_at(s, pos) {
        if !is_py_space(c) {
            break;
        }
        pos += c.len_utf8();
    }
    pos
}

/// The last path component (POSIX `basename`).
pub(super) fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Split on unquoted `;`, `&`, `|`, newline (`&&`/`||` count once); yields `(offset, segment)`.
pub(super) fn top_level_segments(command: &str) -> Vec<(usize, &str)> {
    let bytes = command.as_bytes();
    let mut segments = Vec::new();
    let (mut start, mut index) = (0, 0);
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    while index < bytes.len() {
        let c = bytes[index];
        if escaped {
            escaped = false;
        } else if c == b'\\' && quote != Some(b'\'') {
            escaped = true;
        } else if let Some(q) = quote {
            if c == q {
                quote = None;
            }
        } else if c == b'\'' || c == b'"' {
            quote = Some(c);
        } else if matches!(c, b';' | b'&' | b'|' | b'\n') {
            if start < index {
                segments.push((start, &command[start..index]));
            }
            if (c == b'&' || c == b'|') && bytes.get(index + 1) == Some(&c) {
                index += 1;
            }
            start = index + 1;
        }
        index += char_len_at(command, index);
    }
    if start < bytes.len() {
        segments.push((start, &command[start..]));
    }
    segments
}

/// Quote-aware offsets where a new command begins (after separators, `$(`, `(`, `{`).
pub(super) fn command_starts(command: &str) -> Vec<usize> {
    let bytes = command.as_bytes();
    let mut starts = vec![0];
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let next = bytes.get(i + 1).copied();
        match quote {
            Some(b'\'') => {
                if c == b'\'' {
                    quote = None;
                }
            }
            Some(_) => {
                if c == b'\\' && next.is_some() {
                    i += 1 + char_len_at(command, i + 1);
                    continue;
                }
                if c == b'"' {
                    quote = None;
                } else if c == b'$' && next == Some(b'(') {
                    starts.push(i + 2);
                    i += 2;
                    continue;
                }
            }
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'\\' if next.is_some() => {
                    i += 1 + char_len_at(command, i + 1);
                    continue;
                }
                b'$' if next == Some(b'(') => {
                    starts.push(i + 2);
                    i += 2;
                    continue;
                }
                b'(' | b'{' | b';' | b'\n' => starts.push(i + 1),
                b'&' | b'|' if next == Some(c) => {
                    starts.push(i + 2);
                    i += 2;
                    continue;
                }
                b'&' | b'|' => starts.push(i + 1),
                _ => {}
            },
        }
        i += char_len_at(command, i);
    }
    let mut seen = Vec::with_capacity(starts.len());
    for start in starts {
        let start = skip_space(command, start);
        if start < bytes.len() && !seen.contains(&start) {
            seen.push(start);
        }
    }
    seen
}

/// Insert a newline before every real (quote-aware) command start after offset 0.
pub(super) fn mark_command_starts(command: &str) -> String {
    mark_command_starts_at(command, &command_starts(command))
}

/// [`mark_command_starts`] given the command starts of `command`.
pub(super) fn mark_command_starts_at(command: &str, starts: &[usize]) -> String {
    let mut offsets: Vec<usize> = starts.iter().copied().filter(|&o| o > 0).collect();
    offsets.sort_unstable();
    let mut marked = String::with_capacity(command.len() + offsets.len());
    let mut previous = 0;
    for offset in offsets {
        marked.push_str(&command[previous..offset]);
        marked.push('\n');
        previous = offset;
    }
    marked.push_str(&command[previous..]);
    marked
}

/// Offset just past a balanced `$(...)` starting at `start`.
pub(super) fn dollar_paren_end(s: &str, start: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut depth = 1;
    let mut quote: Option<u8> = None;
    let mut i = start + 2;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if c == b'\\' && q == b'"' && i + 1 < bytes.len() {
                i += 1 + char_len_at(s, i + 1);
                continue;
            }
            if c == q {
                quote = None;
            }
        } else if c == b'\'' || c == b'"' {
            quote = Some(c);
        } else if c == b'\\' && i + 1 < bytes.len() {
            i += 1 + char_len_at(s, i + 1);
            continue;
        } else if c == b'$' && bytes.get(i + 1) == Some(&b'(') {
            depth += 1;
            i += 2;
            continue;
        } else if c == b')' {
            depth -= 1;
            if depth == 0 {
                return Some(i + 1);
            }
        }
        i += char_len_at(s, i);
    }
    None
}

/// Offset just past the backtick closing the one at `start`.
pub(super) fn backtick_end(s: &str, start: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = start + 1;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            i += 1 + char_len_at(s, i + 1);
            continue;
        }
        if bytes[i] == b'`' {
            return Some(i + 1);
        }
        i += char_len_at(s, i);
    }
    None
}

/// Read one shell word at `pos` without expanding it; returns its `(start, end)`.
pub(super) fn read_word(s: &str, pos: usize) -> (usize, usize) {
    let bytes = s.as_bytes();
    let start = skip_space(s, pos);
    let mut i = start;
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if c == b'\\' && q == b'"' && i + 1 < bytes.len() {
                i += 1 + char_len_at(s, i + 1);
                continue;
            }
            if c == q {
                quote = None;
            }
            i += char_len_at(s, i);
            continue;
        }
        match c {
            b'\'' | b'"' => quote = Some(c),
            b'\\' if i + 1 < bytes.len() => {
                i += 1 + char_len_at(s, i + 1);
                continue;
            }
            b'$' if bytes.get(i + 1) == Some(&b'(') => {
                i = dollar_paren_end(s, i).unwrap_or(i + 2);
                continue;
            }
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                i = s[i + 2..].find('}').map_or(i + 2, |end| i + 2 + end + 1);
                continue;
            }
            b'`' => {
                i = backtick_end(s, i).unwrap_or(i + 1);
                continue;
            }
            b';' | b'&' | b'|' => break,
            _ => {
                if char_at(s, i).is_some_and(is_py_space) {
                    break;
                }
            }
        }
        i += char_len_at(s, i);
    }
    (start, i)
}
