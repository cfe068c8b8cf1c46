//! Vendor key prefixes (Hermes' `_PREFIX_PATTERNS`): `sk-…`, `ghp_…`, `xoxb-…`, `AKIA…` and the
//! rest, each a whole token. Hermes brackets the alternation with look-arounds (no token
//! character before or after); the `regex` crate has none, so one leftmost-first search finds
//! candidates and the boundaries are checked here, retrying the alternatives one by one (with
//! the backtracking Python would do) only when the first choice ends inside a token.

use std::sync::LazyLock;

use regex::Regex;

use super::{
    Style,
    shapes::{mask_token, sentinel},
};

/// Hermes' prefix patterns, in its order (the first that fits wins).
const PATTERNS: &[&str] = &[
    r"sk-[A-Za-z0-9_-]{10,}",
    r"ghp_[A-Za-z0-9]{10,}",
    r"github_pat_[A-Za-z0-9_]{10,}",
    r"gho_[A-Za-z0-9]{10,}",
    r"ghu_[A-Za-z0-9]{10,}",
    r"ghs_[A-Za-z0-9]{10,}",
    r"ghr_[A-Za-z0-9]{10,}",
    r"xapp-[0-9]+-[A-Za-z0-9-]{10,}",
    r"xox[baprs]-[A-Za-z0-9-]{10,}",
    r"AIza[A-Za-z0-9_-]{30,}",
    r"pplx-[A-Za-z0-9]{10,}",
    r"fal_[A-Za-z0-9_-]{10,}",
    r"fc-[A-Za-z0-9]{10,}",
    r"bb_live_[A-Za-z0-9_-]{10,}",
    r"gAAAA[A-Za-z0-9_=-]{20,}",
    r"AKIA[A-Z0-9]{16}",
    r"sk_live_[A-Za-z0-9]{10,}",
    r"sk_test_[A-Za-z0-9]{10,}",
    r"rk_live_[A-Za-z0-9]{10,}",
    r"SG\.[A-Za-z0-9_-]{10,}",
    r"hf_[A-Za-z0-9]{10,}",
    r"r8_[A-Za-z0-9]{10,}",
    r"npm_[A-Za-z0-9]{10,}",
    r"pypi-[A-Za-z0-9_-]{10,}",
    r"dop_v1_[A-Za-z0-9]{10,}",
    r"doo_v1_[A-Za-z0-9]{10,}",
    r"am_[A-Za-z0-9_-]{10,}",
    r"sk_[A-Za-z0-9_]{10,}",
    r"tvly-[A-Za-z0-9]{10,}",
    r"exa_[A-Za-z0-9]{10,}",
    r"gsk_[A-Za-z0-9]{10,}",
    r"syt_[A-Za-z0-9]{10,}",
    r"retaindb_[A-Za-z0-9]{10,}",
    r"hsk-[A-Za-z0-9]{10,}",
    r"mem0_[A-Za-z0-9]{10,}",
    r"brv_[A-Za-z0-9]{10,}",
    r"xai-[A-Za-z0-9]{30,}",
    r"ntn_[A-Za-z0-9]{10,}",
    r"fw-[A-Za-z0-9]{30,}",
    r"fw_[A-Za-z0-9]{30,}",
    r"fpk_[A-Za-z0-9]{30,}",
];

/// The characters a key token is made of (Hermes' look-around class `[A-Za-z0-9_-]`).
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Every prefix pattern as one alternation.
pub fn alternation() -> String {
    let alternatives: Vec<String> = PATTERNS.iter().map(|p| format!("(?:{p})")).collect();
    alternatives.join("|")
}

/// The literal start of each pattern (Hermes' `_PREFIX_SUBSTRINGS`): up to its first regex
/// metacharacter.
fn literal_prefix(pattern: &str) -> &str {
    let end = pattern
        .find(|c: char| "[(\\.?*+|{^$".contains(c))
        .unwrap_or(pattern.len());
    &pattern[..end]
}

/// The vendor label a key starts with (`sk-`, `ghp_`, …), if any.
pub fn label_of(token: &str) -> Option<&'static str> {
    PATTERNS
        .iter()
        .map(|p| literal_prefix(p))
        .find(|label| token.starts_with(label))
}

struct Compiled {
    any: Regex,
    /// Each pattern anchored at the start, and anchored at both ends.
    starts: Vec<Regex>,
    whole: Vec<Regex>,
}

static COMPILED: LazyLock<Option<Compiled>> = LazyLock::new(|| {
    let any = Regex::new(&alternation()).ok()?;
    let anchored = |fmt: fn(&str) -> String| -> Option<Vec<Regex>> {
        PATTERNS.iter().map(|p| Regex::new(&fmt(p)).ok()).collect()
    };
    Some(Compiled {
        any,
        starts: anchored(|p| format!("^(?:{p})"))?,
        whole: anchored(|p| format!("^(?:{p})$"))?,
    })
});

/// `text` with every prefixed key masked, or `None` when it has none.
pub fn mask_prefixed(text: &str, style: Style) -> Option<String> {
    let compiled = COMPILED.as_ref()?;
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = compiled.any.find_at(text, at) {
        let start = found.start();
        let preceded = start > 0 && is_token_byte(bytes[start - 1]);
        let end = if preceded {
            None
        } else {
            accepted_end(compiled, text, start, found.end())
        };
        let Some(end) = end else {
            // No key starts inside this token: go on after it.
            at = start
                + bytes[start..]
                    .iter()
                    .position(|b| !is_token_byte(*b))
                    .unwrap_or(bytes.len() - start);
            continue;
        };
        out.push_str(&text[copied..start]);
        let token = &text[start..end];
        out.push_str(&match style {
            Style::Display => mask_token(token),
            Style::FileContent => sentinel(token),
        });
        copied = end;
        at = end;
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Where the key starting at `start` ends, given the first alternative's greedy `end`: no token
/// character may follow. Otherwise each alternative is tried in order, longest end first.
fn accepted_end(compiled: &Compiled, text: &str, start: usize, end: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let free = |at: usize| at >= bytes.len() || !is_token_byte(bytes[at]);
    if free(end) {
        return Some(end);
    }
    let rest = &text[start..];
    for (first, whole) in compiled.starts.iter().zip(&compiled.whole) {
        let Some(m) = first.find(rest) else {
            continue;
        };
        let greedy = start + m.end();
        if free(greedy) {
            return Some(greedy);
        }
        // A shorter match can only end before a non-token character inside it (`=` of a
        // `gAAAA` token).
        let shorter = (start + 1..greedy)
            .rev()
            .filter(|&j| free(j))
            .find(|&j| whole.is_match(&text[start..j]));
        if shorter.is_some() {
            return shorter;
        }
    }
    None
}
