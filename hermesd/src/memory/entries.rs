//! The on-disk entry format (entries joined by `"\n§\n"`), character accounting and the small
//! text helpers (Python-compatible strip, `1,234` grouping, usage strings, previews).

/// Separator between entries in MEMORY.md / USER.md: newline, section sign, newline.
pub const ENTRY_DELIMITER: &str = "\n§\n";

/// Characters (not bytes) in [`ENTRY_DELIMITER`].
pub const DELIMITER_CHARS: usize = 3;

/// Characters shown of each entry in an "ambiguous match" preview.
const PREVIEW_CHARS: usize = 80;

/// Strips like Python's `str.strip()`: Unicode whitespace plus U+001C..U+001F.
pub fn py_strip(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || ('\u{1C}'..='\u{1F}').contains(&c))
}

/// Splits file text into entries: split on the full delimiter (a bare `§` is content),
/// strip each piece, drop empty ones and keep only the first of identical entries.
pub fn parse_entries(raw: &str) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    for piece in raw.split(ENTRY_DELIMITER).map(py_strip) {
        if !piece.is_empty() && !entries.iter().any(|e| e == piece) {
            entries.push(piece.to_owned());
        }
    }
    entries
}

/// Characters of `entries` joined by the delimiter (the size counted against the limit),
/// computed without building the joined string.
pub fn joined_chars<S: AsRef<str>>(entries: &[S]) -> usize {
    let text: usize = entries.iter().map(|e| e.as_ref().chars().count()).sum();
    text + DELIMITER_CHARS * entries.len().saturating_sub(1)
}

/// Formats a count with comma thousands separators, like Python's `f"{n:,}"`.
pub fn format_count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Whole percent of `limit` used, truncated and capped at 100 (0 when `limit` is 0),
/// computed in floating point exactly as Hermes does.
pub fn percent_used(current: usize, limit: usize) -> usize {
    if limit == 0 {
        return 0;
    }
    let percent = (current as f64 / limit as f64) * 100.0;
    (percent as usize).min(100)
}

/// `"1,234/2,200"` — the short usage form used in error results.
pub fn short_usage(current: usize, limit: usize) -> String {
    format!("{}/{}", format_count(current), format_count(limit))
}

/// `"56% — 1,234/2,200 chars"` — the usage form used in headers and success results.
pub fn long_usage(current: usize, limit: usize) -> String {
    format!(
        "{}% — {}/{} chars",
        percent_used(current, limit),
        format_count(current),
        format_count(limit)
    )
}

/// One-line previews: the first 80 characters of each entry, with `...` when cut.
pub fn previews<S: AsRef<str>>(entries: &[S]) -> Vec<String> {
    entries
        .iter()
        .map(|entry| {
            let entry = entry.as_ref();
            match entry.char_indices().nth(PREVIEW_CHARS) {
                Some((cut, _)) => format!("{}...", &entry[..cut]),
                None => entry.to_owned(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn parse_splits_only_on_full_delimiter() {
        let raw = "  first\nline two \n§\n§ not a delimiter\n§\n\n§\n  \n§\nfirst\nline two";
        assert_eq!(
            parse_entries(raw),
            vec!["first\nline two", "§ not a delimiter"]
        );
        assert!(parse_entries(" \n\t").is_empty());
    }

    #[test]
    fn strip_matches_python() {
        assert_eq!(py_strip("\u{1F}\u{3000} x y\u{85}\u{A0}"), "x y");
        assert_eq!(py_strip("\u{200B}x"), "\u{200B}x");
    }

    #[test]
    fn counts_characters_not_bytes() {
        assert_eq!(joined_chars::<&str>(&[]), 0);
        assert_eq!(joined_chars(&["é§"]), 2);
        assert_eq!(joined_chars(&["ab", "日本"]), 7);
    }

    #[test]
    fn usage_formatting() {
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(1375), "1,375");
        assert_eq!(format_count(1_234_567), "1,234,567");
        assert_eq!(long_usage(82, 2200), "3% — 82/2,200 chars");
        assert_eq!(long_usage(2202, 2200), "100% — 2,202/2,200 chars");
        assert_eq!(long_usage(5, 0), "0% — 5/0 chars");
        assert_eq!(short_usage(1375, 1375), "1,375/1,375");
    }

    #[test]
    fn previews_cut_at_80_chars() {
        let long = "é".repeat(81);
        let short = "x".repeat(80);
        let shown = previews(&[long.as_str(), short.as_str()]);
        assert_eq!(shown[0], format!("{}...", "é".repeat(80)));
        assert_eq!(shown[1], short);
    }
}
