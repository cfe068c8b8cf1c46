//! The nine match strategies of the fuzzy chain, each returning the byte ranges of `content`
//! that it considers equal to the pattern (Hermes' `fuzzy_match.py` strategies 1-9).

use super::seqmatch;

/// A matched byte range `start..end` of the content.
pub(super) type Span = (usize, usize);

/// A match strategy: `(content, pattern) -> spans`.
type StrategyFn = fn(&str, &str) -> Vec<Span>;

/// The chain, in the order it is tried; the first strategy with any match wins.
pub(super) const CHAIN: [(&str, StrategyFn); 9] = [
    ("exact", exact),
    ("line_trimmed", line_trimmed),
    ("whitespace_normalized", whitespace_normalized),
    ("indentation_flexible", indentation_flexible),
    ("escape_normalized", escape_normalized),
    ("trimmed_boundary", trimmed_boundary),
    ("unicode_normalized", unicode_normalized),
    ("block_anchor", block_anchor),
    ("context_aware", context_aware),
];

/// Typographic characters the model usually types as ASCII, with their ASCII spelling.
const UNICODE_ASCII: [(char, &str); 8] = [
    ('\u{201c}', "\""),
    ('\u{201d}', "\""),
    ('\u{2018}', "'"),
    ('\u{2019}', "'"),
    ('\u{2014}', "--"),
    ('\u{2013}', "-"),
    ('\u{2026}', "..."),
    ('\u{00a0}', " "),
];

/// ASCII spelling of `ch` if it is one of the typographic characters.
pub(super) fn ascii_spelling(ch: char) -> Option<&'static str> {
    UNICODE_ASCII
        .iter()
        .find(|(from, _)| *from == ch)
        .map(|(_, to)| *to)
}

/// `text` with typographic characters spelled in ASCII.
pub(super) fn unicode_normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ascii_spelling(ch) {
            Some(ascii) => out.push_str(ascii),
            None => out.push(ch),
        }
    }
    out
}

/// Whether Python's `str.isspace` holds for `ch`.
pub(super) fn is_py_space(ch: char) -> bool {
    ch.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&ch)
}

/// Python's `str.strip()`.
pub(super) fn py_strip(text: &str) -> &str {
    text.trim_matches(is_py_space)
}

/// Byte offset where each `\n`-separated line of `content` starts, plus `content.len() + 1`.
fn line_starts(content: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(content.match_indices('\n').map(|(at, _)| at + 1));
    starts.push(content.len() + 1);
    starts
}

/// Span covering lines `first..first + count` (without the last line's newline).
fn line_span(starts: &[usize], first: usize, count: usize, content_len: usize) -> Span {
    (starts[first], (starts[first + count] - 1).min(content_len))
}

/// Strategy 1: plain non-overlapping substring search.
pub(super) fn exact(content: &str, pattern: &str) -> Vec<Span> {
    if pattern.is_empty() {
        return Vec::new();
    }
    content
        .match_indices(pattern)
        .map(|(at, found)| (at, at + found.len()))
        .collect()
}

/// Windows of `content` whose lines, after `normalize`, equal the pattern's normalised lines.
fn match_normalized_lines(content: &str, pattern: &str, normalize: fn(&str) -> &str) -> Vec<Span> {
    let pattern_lines: Vec<&str> = pattern.split('\n').map(normalize).collect();
    let content_lines: Vec<&str> = content.split('\n').map(normalize).collect();
    let count = pattern_lines.len();
    if content_lines.len() < count {
        return Vec::new();
    }
    let starts = line_starts(content);
    (0..=content_lines.len() - count)
        .filter(|&first| content_lines[first..first + count] == pattern_lines[..])
        .map(|first| line_span(&starts, first, count, content.len()))
        .collect()
}

/// Strategy 2: lines compared with surrounding whitespace stripped.
pub(super) fn line_trimmed(content: &str, pattern: &str) -> Vec<Span> {
    match_normalized_lines(content, pattern, py_strip)
}

/// Strategy 3: runs of spaces/tabs collapsed to one space on both sides.
fn whitespace_normalized(content: &str, pattern: &str) -> Vec<Span> {
    let (pattern_norm, _) = collapse_blanks(pattern);
    let (content_norm, sources) = collapse_blanks(content);
    exact(&content_norm, &pattern_norm)
        .into_iter()
        .map(|(start, end)| (sources[start].0, sources[end - 1].1))
        .collect()
}

/// `text` with space/tab runs collapsed, and for each output byte the input byte range it came from.
fn collapse_blanks(text: &str) -> (String, Vec<Span>) {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut sources = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if matches!(bytes[at], b' ' | b'\t') {
            let run_start = at;
            while at < bytes.len() && matches!(bytes[at], b' ' | b'\t') {
                at += 1;
            }
            out.push(b' ');
            sources.push((run_start, at));
        } else {
            out.push(bytes[at]);
            sources.push((at, at + 1));
            at += 1;
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes, so the result is still UTF-8.
    let text = String::from_utf8(out)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned());
    (text, sources)
}

/// Strategy 4: leading whitespace of every line ignored.
fn indentation_flexible(content: &str, pattern: &str) -> Vec<Span> {
    match_normalized_lines(content, pattern, |line| {
        line.trim_start_matches(is_py_space)
    })
}

/// Strategy 5: literal `\n`, `\t`, `\r` in the pattern read as control characters.
fn escape_normalized(content: &str, pattern: &str) -> Vec<Span> {
    let unescaped = pattern
        .replace("\\n", "\n")
        .replace("\\t", "\t")
        .replace("\\r", "\r");
    if unescaped == pattern {
        return Vec::new();
    }
    exact(content, &unescaped)
}

/// Strategy 6: only the first and last line of the block compared with whitespace stripped.
fn trimmed_boundary(content: &str, pattern: &str) -> Vec<Span> {
    let pattern_lines: Vec<&str> = pattern.split('\n').collect();
    let content_lines: Vec<&str> = content.split('\n').collect();
    let count = pattern_lines.len();
    if content_lines.len() < count {
        return Vec::new();
    }
    let last = count - 1;
    let line_matches = |index: usize, pattern_line: &str, content_line: &str| {
        if index == 0 || index == last {
            py_strip(pattern_line) == py_strip(content_line)
        } else {
            pattern_line == content_line
        }
    };
    let starts = line_starts(content);
    (0..=content_lines.len() - count)
        .filter(|&first| {
            pattern_lines
                .iter()
                .zip(&content_lines[first..first + count])
                .enumerate()
                .all(|(index, (p, c))| line_matches(index, p, c))
        })
        .map(|first| line_span(&starts, first, count, content.len()))
        .collect()
}

/// Strategy 7: typographic characters normalised to ASCII, then exact or line-trimmed search.
fn unicode_normalized(content: &str, pattern: &str) -> Vec<Span> {
    let pattern_norm = unicode_normalize(pattern);
    let content_norm = unicode_normalize(content);
    if content_norm == content && pattern_norm == pattern {
        return Vec::new();
    }
    let mut spans = exact(&content_norm, &pattern_norm);
    if spans.is_empty() {
        spans = line_trimmed(&content_norm, &pattern_norm);
    }
    if spans.is_empty() {
        return Vec::new();
    }
    // (original byte offset, normalised byte offset) of every char, plus the end sentinel.
    let mut offsets = Vec::with_capacity(content.len() + 1);
    let mut norm_at = 0;
    for (orig_at, ch) in content.char_indices() {
        offsets.push((orig_at, norm_at));
        norm_at += ascii_spelling(ch).map_or(ch.len_utf8(), str::len);
    }
    offsets.push((content.len(), norm_at));
    spans
        .into_iter()
        .filter_map(|(norm_start, norm_end)| {
            let start = offsets
                .binary_search_by_key(&norm_start, |&(_, norm)| norm)
                .ok()?;
            let end = offsets
                .partition_point(|&(_, norm)| norm < norm_end)
                .min(offsets.len() - 1);
            Some((offsets[start].0, offsets[end].0))
        })
        .collect()
}

/// Strategy 8: first and last lines anchor the block; the middle must be similar enough.
fn block_anchor(content: &str, pattern: &str) -> Vec<Span> {
    let pattern_norm = unicode_normalize(pattern);
    let content_norm = unicode_normalize(content);
    let pattern_lines: Vec<&str> = pattern_norm.split('\n').collect();
    let count = pattern_lines.len();
    if count < 2 {
        return Vec::new();
    }
    let content_lines: Vec<&str> = content_norm.split('\n').collect();
    if content_lines.len() < count {
        return Vec::new();
    }
    let first_line = py_strip(pattern_lines[0]);
    let last_line = py_strip(pattern_lines[count - 1]);
    let candidates: Vec<usize> = (0..=content_lines.len() - count)
        .filter(|&i| {
            py_strip(content_lines[i]) == first_line
                && py_strip(content_lines[i + count - 1]) == last_line
        })
        .collect();
    let threshold = if candidates.len() == 1 { 0.50 } else { 0.70 };
    let pattern_middle: Vec<char> = pattern_lines[1..count - 1].join("\n").chars().collect();
    let starts = line_starts(content);
    let mut matcher = seqmatch::Matcher::default();
    candidates
        .into_iter()
        .filter(|&i| {
            count <= 2 || {
                let middle: Vec<char> = content_lines[i + 1..i + count - 1]
                    .join("\n")
                    .chars()
                    .collect();
                matcher.ratio(&middle, &pattern_middle) >= threshold
            }
        })
        .map(|i| line_span(&starts, i, count, content.len()))
        .collect()
}

/// Strategy 9: blocks where at least half the lines are at least 80% similar.
fn context_aware(content: &str, pattern: &str) -> Vec<Span> {
    let pattern_lines: Vec<Vec<char>> = pattern
        .split('\n')
        .map(|line| py_strip(line).chars().collect())
        .collect();
    let content_lines: Vec<Vec<char>> = content
        .split('\n')
        .map(|line| py_strip(line).chars().collect())
        .collect();
    let count = pattern_lines.len();
    if content_lines.len() < count {
        return Vec::new();
    }
    let needed = count as f64 * 0.5;
    let mut matcher = seqmatch::Matcher::default();
    let mut similar = |p: &[char], c: &[char]| {
        seqmatch::ratio_upper_bound(p.len(), c.len()) >= 0.80 && matcher.ratio(p, c) >= 0.80
    };
    let starts = line_starts(content);
    (0..=content_lines.len() - count)
        .filter(|&first| {
            let mut hits = 0usize;
            for (index, (p, c)) in pattern_lines
                .iter()
                .zip(&content_lines[first..first + count])
                .enumerate()
            {
                if similar(p, c) {
                    hits += 1;
                }
                if hits as f64 >= needed {
                    return true;
                }
                if ((hits + count - index - 1) as f64) < needed {
                    return false;
                }
            }
            false
        })
        .map(|first| line_span(&starts, first, count, content.len()))
        .collect()
}
