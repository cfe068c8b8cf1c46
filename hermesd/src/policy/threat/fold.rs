//! Normalisation before matching. NFKC first, as Hermes does, so full-width and compatibility
//! forms (`ｃａｔ`, `ﬁ`) meet the patterns as the ASCII they look like. Then, for Hermes' threat
//! patterns, one ASCII byte per character, so the engine's ASCII classes mean what Python's
//! Unicode ones mean: a non-ASCII letter or digit becomes `0` (a word character), non-ASCII
//! white space a space, anything else a byte no pattern names; the C0 separators U+001C–U+001F,
//! white space to Python, a space too. Counts stay characters (`[^\n]{0,2048}` is 2,048
//! characters, as in Python) and no match Python finds is lost. The one difference: a pattern's
//! explicit ASCII class (`[A-Za-z0-9…]`) also accepts the `0` a folded letter became, so a
//! 20-character quoted secret with accented letters counts as one.

use std::borrow::Cow;

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// What a non-ASCII letter or digit becomes.
const WORD: u8 = b'0';
/// What any other non-ASCII, non-space character becomes: a control byte no pattern names.
const OTHER: u8 = 0x1a;

/// `text` in NFKC; borrowed when it already is (the quick check settles almost every text).
pub(crate) fn nfkc(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    // ASCII is NFKC and starts no reordering: looking at the other characters settles it (a
    // skipped ASCII character can only make the check more cautious, never wrongly `Yes`).
    match is_nfkc_quick(text.chars().filter(|c| !c.is_ascii())) {
        IsNormalized::Yes => Cow::Borrowed(text),
        _ => Cow::Owned(text.nfkc().collect()),
    }
}

/// Python's white space that the ASCII `\s` lacks: the file, group, record and unit separators.
fn is_c0_separator(byte: u8) -> bool {
    (0x1c..=0x1f).contains(&byte)
}

/// The byte a non-ASCII character becomes.
fn fold_char(c: char) -> u8 {
    if c.is_whitespace() {
        b' '
    } else if c.is_alphanumeric() {
        WORD
    } else {
        OTHER
    }
}

/// The bytes Hermes' threat patterns are matched against (see the module comment).
pub(crate) fn for_patterns(text: &str) -> Cow<'_, [u8]> {
    if text.is_ascii() && !text.bytes().any(is_c0_separator) {
        return Cow::Borrowed(text.as_bytes());
    }
    let normalised = nfkc(text);
    let mut out = Vec::with_capacity(normalised.len());
    let mut rest: &str = &normalised;
    while !rest.is_empty() {
        // A run of ASCII is copied as it is (separators aside), then one other character folded.
        let run = rest
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(rest.len());
        out.extend(rest.as_bytes()[..run].iter().map(
            |&b| {
                if is_c0_separator(b) { b' ' } else { b }
            },
        ));
        rest = &rest[run..];
        if let Some(c) = rest.chars().next() {
            out.push(fold_char(c));
            rest = &rest[c.len_utf8()..];
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_is_borrowed_and_other_text_folds_one_byte_a_character() {
        assert!(matches!(for_patterns("plain text"), Cow::Borrowed(_)));
        assert_eq!(
            &*for_patterns("caf\u{e9}\u{a0}\u{2014}\u{ff43}at\u{1c}x"),
            b"caf0 \x1acat x"
        );
        assert_eq!(nfkc("\u{fb01}le"), "file");
        assert!(matches!(nfkc("na\u{ef}ve \u{1f600}"), Cow::Borrowed(_)));
    }
}
