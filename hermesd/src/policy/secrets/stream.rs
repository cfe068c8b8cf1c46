//! Masking output that arrives in chunks (a command's streamed output): text is released a line
//! at a time, so a secret split between two reads is whole when it is masked. What is held back
//! is at most the unfinished last line (a very long line is cut in the middle, keeping its last
//! [`LONG_LINE_KEEP`] bytes), a configured value that may continue past a line break, and an
//! unfinished private key block; [`StreamMasker::finish`] releases the rest.

use std::sync::Arc;

use super::SecretMasker;

/// A line without a break longer than this is released in parts.
const LONG_LINE: usize = 16 * 1024;
/// Bytes of a long line kept back when part of it is released.
const LONG_LINE_KEEP: usize = 1024;
/// A private key block longer than this is not held back any longer.
const KEY_BLOCK_MAX: usize = 64 * 1024;

const BEGIN: &str = "-----BEGIN";
const KEY_END: &str = "PRIVATE KEY-----";
const END: &str = "-----END";

/// One stream of output (one tool call's), masked as it goes.
#[derive(Debug)]
pub struct StreamMasker {
    masker: Arc<SecretMasker>,
    pending: String,
}

impl StreamMasker {
    pub fn new(masker: Arc<SecretMasker>) -> Self {
        Self {
            masker,
            pending: String::new(),
        }
    }

    /// Take the next chunk; returns the masked text that is safe to show now (maybe empty).
    pub fn push(&mut self, chunk: &str) -> String {
        if !self.masker.is_enabled() {
            return chunk.to_string();
        }
        self.pending.push_str(chunk);
        let cut = self.safe_cut();
        if cut == 0 {
            return String::new();
        }
        let rest = self.pending.split_off(cut);
        let ready = std::mem::replace(&mut self.pending, rest);
        self.masker.mask(&ready).into_owned()
    }

    /// The stream ended: the masked rest.
    pub fn finish(&mut self) -> String {
        let ready = std::mem::take(&mut self.pending);
        self.masker.mask(&ready).into_owned()
    }

    /// How much of the pending text can be released without splitting a secret.
    fn safe_cut(&self) -> usize {
        let text = self.pending.as_str();
        let mut cut = text.rfind(['\n', '\r']).map_or(0, |i| i + 1);
        let long = cut == 0 && text.len() > LONG_LINE;
        if long {
            cut = long_line_cut(text);
        }
        for value in self.masker.literal_texts() {
            if long || value.contains(['\n', '\r']) {
                cut = before_straddling(text, cut, value);
            }
        }
        before_open_key_block(text, cut)
    }
}

/// Where to cut a long line: after the last space before its kept tail, else at the tail.
fn long_line_cut(text: &str) -> usize {
    let mut limit = text.len() - LONG_LINE_KEEP;
    while !text.is_char_boundary(limit) {
        limit -= 1;
    }
    text[..limit]
        .rfind(|c: char| c.is_whitespace())
        .map_or(limit, |i| i + 1)
}

/// `cut`, or the start of an occurrence of `value` (whole or begun at the end of `text`) that
/// `cut` would split.
fn before_straddling(text: &str, cut: usize, value: &str) -> usize {
    let (text_bytes, value_bytes) = (text.as_bytes(), value.as_bytes());
    let first = cut.saturating_sub(value_bytes.len().saturating_sub(1));
    (first..cut)
        .find(|&i| {
            let avail = &text_bytes[i..];
            let n = avail.len().min(value_bytes.len());
            i + value_bytes.len() > cut && avail[..n] == value_bytes[..n]
        })
        .unwrap_or(cut)
}

/// `cut`, or the start of a private key block begun before it and not ended before it.
fn before_open_key_block(text: &str, cut: usize) -> usize {
    let mut from = 0;
    while let Some(found) = text[from..cut].find(BEGIN) {
        let begin = from + found;
        let line_end = text[begin..].find('\n').map_or(text.len(), |i| begin + i);
        if !text[begin..line_end].contains(KEY_END) {
            from = begin + BEGIN.len();
            continue;
        }
        let ended = text[begin..cut]
            .find(END)
            .and_then(|e| text[begin + e..cut].find(KEY_END).map(|k| begin + e + k));
        match ended {
            Some(end) => from = end + KEY_END.len(),
            None if text.len() - begin > KEY_BLOCK_MAX => return cut,
            None => return begin,
        }
    }
    cut
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use hermes_proto::env::Env;

    fn masker() -> Arc<SecretMasker> {
        Arc::new(SecretMasker::new(
            &Env::from_pairs([
                ("MY_SERVICE_TOKEN", "zzcanaryvalue123"),
                ("MULTI_SECRET", "first-line\nsecond-line"),
            ]),
            true,
        ))
    }

    /// Every way of cutting `text` in two, streamed, shows no secret.
    fn assert_split_safe(text: &str, secrets: &[&str]) {
        let masker = masker();
        for at in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            let mut stream = masker.stream();
            let mut shown = stream.push(&text[..at]);
            shown.push_str(&stream.push(&text[at..]));
            shown.push_str(&stream.finish());
            for secret in secrets {
                assert!(!shown.contains(secret), "split at {at}: {shown}");
            }
            assert_eq!(shown, masker.mask(text), "split at {at}");
        }
    }

    #[test]
    fn a_secret_split_between_chunks_is_still_masked() {
        assert_split_safe(
            "token: zzcanaryvalue123 and sk-abcdefghijklmnop0123 end\nnext\n",
            &["zzcanaryvalue123", "ghijklmnop"],
        );
        assert_split_safe("a\nfirst-line\nsecond-line\nb\n", &["first-line\nsecond"]);
        assert_split_safe(
            "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\ndef\n-----END RSA PRIVATE KEY-----\ny\n",
            &["MIIEabc", "def\n"],
        );
    }

    #[test]
    fn whole_lines_are_released_at_once_and_the_rest_on_finish() {
        let mut stream = masker().stream();
        assert_eq!(stream.push("one\ntw"), "one\n");
        assert_eq!(stream.push("o"), "");
        assert_eq!(stream.finish(), "two");
        let mut off = Arc::new(SecretMasker::disabled()).stream();
        assert_eq!(
            off.push("zzcanaryvalue123 partial"),
            "zzcanaryvalue123 partial"
        );
    }

    #[test]
    fn a_long_line_is_released_in_parts() {
        let mut stream = masker().stream();
        let line = "word ".repeat(LONG_LINE / 4);
        let shown = stream.push(&line);
        assert!(!shown.is_empty() && shown.len() < line.len());
        assert_eq!(format!("{shown}{}", stream.finish()), line);
    }
}
