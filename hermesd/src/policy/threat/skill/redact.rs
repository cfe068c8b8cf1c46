//! Masks secrets in the text a finding quotes, so a report never repeats a key in full:
//! known token shapes keep their prefix and four characters, assigned values two.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::checks::compile;

static TOKEN: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r"(?-i)\b(sk-(?:ant-|proj-|svcacct-|admin-)?|gh[pousr]_|github_pat_|xox[baprs]-|AKIA|ASIA|AIza|glpat-|hf_)([A-Za-z0-9_\-]{8,})",
    )
});
static QUOTED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r#"((?:api[_-]?key|apikey|token|secret|password|passwd|pwd|private[_-]?key)["']?\s*[=:]\s*["'])([^"'\s]{6,})"#,
    )
});
static BARE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r#"((?:api[_-]?key|apikey|token|secret|password|passwd|private[_-]?key)\s*[=:]\s*|\b(?:bearer|basic)\s+|authorization["']?\s*:\s*(?:token\s+|bearer\s+|basic\s+)?)([A-Za-z0-9_\-+/=.~]{8,})"#,
    )
});
/// Cheap literal screen: lines without any of these need no masking.
static CANDIDATE: LazyLock<Option<regex::bytes::Regex>> = LazyLock::new(|| {
    regex::bytes::Regex::new(
        r"(?i-u)sk-|gh[pousr]_|github_pat_|xox[baprs]-|akia|asia|aiza|glpat-|hf_|key|token|secret|passw|pwd|bearer|basic|authorization|://[^/\s:@]+:[^@\s/]+@",
    )
    .ok()
});
static URL_PASSWORD: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"(://[^/\s:@]+:)([^@\s/]{3,})(@)"));

const MASK: &str = "…[redacted]";

/// Masks group 2 of a match, keeping groups 1 and 3 and `visible` characters; `needs_digit` leaves
/// digit-free values (identifiers such as `os.environ.get`) alone.
fn mask(caps: &Captures<'_>, visible: usize, needs_digit: bool) -> String {
    let whole = caps.get(0).map_or("", |m| m.as_str());
    let prefix = caps.get(1).map_or("", |m| m.as_str());
    let secret = caps.get(2).map_or("", |m| m.as_str());
    if secret.contains(MASK) || (needs_digit && !secret.bytes().any(|b| b.is_ascii_digit())) {
        return whole.to_owned();
    }
    let suffix = caps.get(3).map_or("", |m| m.as_str());
    let shown: String = secret.chars().take(visible).collect();
    format!("{prefix}{shown}{MASK}{suffix}")
}

fn apply<'a>(
    text: Cow<'a, str>,
    regex: &LazyLock<Option<Regex>>,
    visible: usize,
    needs_digit: bool,
) -> Cow<'a, str> {
    let Some(re) = regex.as_ref() else {
        return text;
    };
    if !re.is_match(&text) {
        return text;
    }
    Cow::Owned(
        re.replace_all(&text, |caps: &Captures<'_>| {
            mask(caps, visible, needs_digit)
        })
        .into_owned(),
    )
}

/// `text` with token-shaped secrets, `key = value` secrets and URL passwords masked.
pub(super) fn redact(text: &str) -> Cow<'_, str> {
    if CANDIDATE
        .as_ref()
        .is_some_and(|re| !re.is_match(text.as_bytes()))
    {
        return Cow::Borrowed(text);
    }
    let text = apply(Cow::Borrowed(text), &TOKEN, 4, false);
    let text = apply(text, &QUOTED, 2, false);
    let text = apply(text, &BARE, 2, true);
    apply(text, &URL_PASSWORD, 0, false)
}
