//! ANSI / ECMA-48 escape-sequence stripping (Python's `tools/ansi_strip.py`), the crate's one
//! copy: `exec` strips command output so the model never sees terminal formatting, and the
//! command rules strip a command before judging it, so escapes cannot hide a dangerous word.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// CSI, OSC, DCS/SOS/PM/APC strings, nF and single-byte escapes, plus the
/// 8-bit C1 forms.
static ANSI_ESCAPE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?s)\x1b(?:",
        r"\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]",
        r"|\].*?(?:\x07|\x1b\\)",
        r"|[PX^_].*?\x1b\\",
        r"|[\x20-\x2f]+[\x30-\x7e]",
        r"|[\x30-\x7e]",
        r")",
        r"|\x{9b}[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]",
        r"|\x{9d}.*?(?:\x07|\x{9c})",
        r"|[\x{80}-\x{9f}]",
    ))
    .ok()
});

/// ESC, or a C1 control (U+0080–U+009F, encoded as 0xC2 0x80–0x9F).
fn may_contain_escape(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b == 0x1b || (b == 0xc2 && bytes.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)))
    })
}

/// Removes ANSI escape sequences; borrows the input when there are none.
pub fn strip_ansi(text: &str) -> Cow<'_, str> {
    if !may_contain_escape(text) {
        return Cow::Borrowed(text);
    }
    match ANSI_ESCAPE.as_ref() {
        Some(re) => re.replace_all(text, ""),
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn regex_compiles() {
        assert!(ANSI_ESCAPE.is_some());
    }

    #[test]
    fn strips_common_sequences() {
        assert_eq!(strip_ansi("\x1b[1;31mred\x1b[0m plain"), "red plain");
        assert_eq!(strip_ansi("\x1b]0;title\x07after"), "after");
        assert_eq!(strip_ansi("\x1b]8;;http://x\x1b\\link"), "link");
        assert_eq!(strip_ansi("a\x1b[?25lb"), "ab");
        assert_eq!(strip_ansi("x\u{9b}31my"), "xy");
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(strip_ansi("héllo\nworld"), Cow::Borrowed(_)));
    }
}
