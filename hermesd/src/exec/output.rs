//! Output buffering for child processes: incremental UTF-8 decoding, the
//! bounded head/tail collector used by foreground commands, and the rolling
//! tail buffer kept for background processes. All limits count characters,
//! as Python does.

/// Decodes a byte stream into text chunk by chunk, keeping a multi-byte
/// sequence split across reads until its remaining bytes arrive. Invalid
/// bytes become U+FFFD.
#[derive(Debug, Default)]
pub(super) struct Utf8Decoder {
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// Appends the decoded text of `chunk` to `out` (which is not cleared).
    pub(super) fn decode_into(&mut self, chunk: &[u8], out: &mut String) {
        if self.pending.is_empty() {
            let rest = decode_complete_prefix(chunk, out);
            self.pending.extend_from_slice(rest);
        } else {
            let mut joined = std::mem::take(&mut self.pending);
            joined.extend_from_slice(chunk);
            let rest = decode_complete_prefix(&joined, out);
            self.pending = rest.to_vec();
        }
    }

    /// Flushes an incomplete trailing sequence as U+FFFD.
    pub(super) fn finish_into(&mut self, out: &mut String) {
        if !self.pending.is_empty() {
            out.push_str(&String::from_utf8_lossy(&self.pending));
            self.pending.clear();
        }
    }
}

/// Decodes as much of `bytes` as possible into `out`; returns the trailing
/// bytes that may be the start of an incomplete character.
fn decode_complete_prefix<'a>(mut bytes: &'a [u8], out: &mut String) -> &'a [u8] {
    loop {
        match std::str::from_utf8(bytes) {
            Ok(text) => {
                out.push_str(text);
                return &[];
            }
            Err(err) => {
                let (valid, after) = bytes.split_at(err.valid_up_to());
                // from_utf8 just validated this prefix, so the lossy
                // conversion copies it without replacements.
                out.push_str(&String::from_utf8_lossy(valid));
                match err.error_len() {
                    None => return after,
                    Some(bad) => {
                        out.push(char::REPLACEMENT_CHARACTER);
                        bytes = &after[bad..];
                    }
                }
            }
        }
    }
}

/// Byte index just after the first `n` characters of `text` (or its length).
pub(super) fn byte_index_after_chars(text: &str, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    text.char_indices()
        .nth(n)
        .map_or(text.len(), |(idx, _)| idx)
}

/// The last `n` characters of `text`.
pub(super) fn last_chars(text: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    match text.char_indices().rev().nth(n - 1) {
        Some((idx, _)) => &text[idx..],
        None => text,
    }
}

/// Formats an integer with `,` thousands separators (Python's `{:,}`).
pub(super) fn with_thousands(value: usize) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Keeps the first 40% and a rolling last 60% of a stream of text, so a
/// verbose command never grows memory beyond about twice `max_chars`.
#[derive(Debug)]
pub(super) struct HeadTailCollector {
    max_chars: usize,
    head_limit: usize,
    tail_limit: usize,
    head: String,
    head_chars: usize,
    /// May hold up to `2 * tail_limit` chars before it is compacted; only
    /// the last `tail_limit` chars are logically part of the tail.
    tail: String,
    tail_chars: usize,
    total_chars: usize,
}

impl HeadTailCollector {
    pub(super) fn new(max_chars: usize) -> Self {
        let max_chars = max_chars.max(1);
        let head_limit = max_chars * 2 / 5;
        Self {
            max_chars,
            head_limit,
            tail_limit: max_chars - head_limit,
            head: String::new(),
            head_chars: 0,
            tail: String::new(),
            tail_chars: 0,
            total_chars: 0,
        }
    }

    /// Characters seen so far, including evicted ones.
    pub(super) fn total_chars(&self) -> usize {
        self.total_chars
    }

    /// Bytes currently held in memory (for bounds checks).
    #[cfg(test)]
    pub(super) fn retained_bytes(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    pub(super) fn push(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut count = text.chars().count();
        self.total_chars += count;
        let mut rest = text;
        if self.head_chars < self.head_limit {
            let take = (self.head_limit - self.head_chars).min(count);
            let split = byte_index_after_chars(rest, take);
            self.head.push_str(&rest[..split]);
            self.head_chars += take;
            rest = &rest[split..];
            count -= take;
        }
        if count == 0 || self.tail_limit == 0 {
            return;
        }
        if count >= self.tail_limit {
            self.tail.clear();
            self.tail.push_str(last_chars(rest, self.tail_limit));
            self.tail_chars = self.tail_limit;
            return;
        }
        self.tail.push_str(rest);
        self.tail_chars += count;
        if self.tail_chars > 2 * self.tail_limit {
            let excess = self.tail_chars - self.tail_limit;
            let cut = byte_index_after_chars(&self.tail, excess);
            self.tail.drain(..cut);
            self.tail_chars = self.tail_limit;
        }
    }

    fn tail_view(&self) -> &str {
        if self.tail_chars > self.tail_limit {
            let skip = byte_index_after_chars(&self.tail, self.tail_chars - self.tail_limit);
            &self.tail[skip..]
        } else {
            &self.tail
        }
    }

    /// Renders at most `max_chars` characters, ending with `suffix` and, when
    /// output was dropped, Python's `[OUTPUT TRUNCATED - …]` notice between
    /// head and tail.
    pub(super) fn render(&self, suffix: &str) -> String {
        let suffix_chars = suffix.chars().count();
        if suffix_chars >= self.max_chars {
            return last_chars(suffix, self.max_chars).to_owned();
        }
        let tail = self.tail_view();
        let available = self.max_chars - suffix_chars;
        if self.total_chars <= available {
            let mut out = String::with_capacity(self.head.len() + tail.len() + suffix.len());
            out.push_str(&self.head);
            out.push_str(tail);
            out.push_str(suffix);
            return out;
        }
        let mut notice = String::new();
        for _ in 0..4 {
            let budget = available.saturating_sub(notice.chars().count());
            let head_chars = budget * 2 / 5;
            let tail_chars = budget - head_chars;
            let omitted = self.total_chars.saturating_sub(head_chars + tail_chars);
            let updated = format!(
                "\n\n... [OUTPUT TRUNCATED - {} chars omitted out of {} total] ...\n\n",
                with_thousands(omitted),
                with_thousands(self.total_chars)
            );
            if updated == notice {
                break;
            }
            notice = updated;
        }
        let budget = available.saturating_sub(notice.chars().count());
        let head_chars = budget * 2 / 5;
        let tail_chars = budget - head_chars;
        let head = &self.head[..byte_index_after_chars(&self.head, head_chars)];
        let notice = &notice[..byte_index_after_chars(&notice, available)];
        let tail = last_chars(tail, tail_chars);
        let mut out = String::with_capacity(head.len() + notice.len() + tail.len() + suffix.len());
        out.push_str(head);
        out.push_str(notice);
        out.push_str(tail);
        out.push_str(suffix);
        out
    }
}

/// The last `max_chars` characters of a background process's output, plus
/// the number of bytes it has written in total.
#[derive(Debug)]
pub(super) struct RollingText {
    max_chars: usize,
    /// Holds up to 1.5 × `max_chars` before compaction; see [`Self::view`].
    text: String,
    chars: usize,
    total_bytes: u64,
}

impl RollingText {
    pub(super) fn new(max_chars: usize) -> Self {
        Self {
            max_chars: max_chars.max(1),
            text: String::new(),
            chars: 0,
            total_bytes: 0,
        }
    }

    /// Appends decoded text; `raw_bytes` is the byte count it came from.
    pub(super) fn push(&mut self, text: &str, raw_bytes: usize) {
        self.total_bytes += raw_bytes as u64;
        if text.is_empty() {
            return;
        }
        self.text.push_str(text);
        self.chars += text.chars().count();
        if self.chars > self.max_chars + self.max_chars / 2 {
            let excess = self.chars - self.max_chars;
            let cut = byte_index_after_chars(&self.text, excess);
            self.text.drain(..cut);
            self.chars = self.max_chars;
        }
    }

    /// The retained output (at most `max_chars` characters).
    pub(super) fn view(&self) -> &str {
        if self.chars > self.max_chars {
            let cut = byte_index_after_chars(&self.text, self.chars - self.max_chars);
            &self.text[cut..]
        } else {
            &self.text
        }
    }

    /// The last `n` characters of the retained output.
    pub(super) fn last(&self, n: usize) -> &str {
        last_chars(self.view(), n)
    }

    /// Bytes the process has written since it started.
    pub(super) fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// True when older output has been dropped from the buffer.
    pub(super) fn dropped_output(&self) -> bool {
        self.total_bytes > self.view().len() as u64
    }
}

/// Splits text into lines the way Python's `str.splitlines()` does (any of
/// `\n`, `\r\n`, `\r`, `\x0b`, `\x0c`, `\x1c`–`\x1e`, `\x85`, U+2028, U+2029
/// ends a line; no trailing empty line).
pub(super) fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((idx, ch)) = chars.next() {
        let is_break = matches!(
            ch,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if !is_break {
            continue;
        }
        lines.push(&text[start..idx]);
        let mut next = idx + ch.len_utf8();
        if ch == '\r' && matches!(chars.peek(), Some((_, '\n'))) {
            chars.next();
            next += 1;
        }
        start = next;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}
