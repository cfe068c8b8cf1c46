//! Hermes' key shapes (`agent/redact.py`): vendor key prefixes (`sk-…`, `ghp_…`, …),
//! `Authorization:` and API-key headers, Telegram bot tokens, private key blocks, database and
//! bare-token URL credentials, JWTs — each pass applied in Hermes' order, with its masks.
//! One `RegexSet` scan says which passes can match, so clean text costs a single pass.

use std::{borrow::Cow, sync::LazyLock};

use regex::{Captures, Regex, RegexSet};

use super::{Style, prefix};

/// Hermes' `_mask_token`: tokens under 18 characters become `***`, longer ones keep their
/// first 6 and last 4 characters around `...`.
pub fn mask_token(token: &str) -> String {
    let count = token.chars().count();
    if count < 18 {
        return "***".to_string();
    }
    let head: String = token.chars().take(6).collect();
    let tail: String = token.chars().skip(count - 4).collect();
    format!("{head}...{tail}")
}

/// Hermes' `_mask_token_nonreusable`, for file content: a marker naming the key's vendor
/// prefix that cannot be mistaken for (or written back as) a usable key.
pub fn sentinel(token: &str) -> String {
    match prefix::label_of(token) {
        Some(label) => format!("«redacted:{label}…»"),
        None => SECRET_MARKER.to_string(),
    }
}

/// The file-content marker of a secret of no known vendor.
const SECRET_MARKER: &str = "«redacted-secret»";

const AUTH_HEADER: &str = r#"(?i)((?:Proxy-)?Authorization:\s*)([A-Za-z][\w.+-]*\s+)?([^\s"']+)"#;
const SECRET_HEADER: &str = r"(?i)((?:x-api-key|x-goog-api-key|api-key|apikey|x-api-token|x-auth-token|x-access-token)\s*:\s*)(\S+)";
const TELEGRAM: &str = r"(bot)?([0-9]{8,}):([-A-Za-z0-9_]{30,})";
const PRIVATE_KEY: &str =
    r"(?s)-----BEGIN[A-Z ]*PRIVATE KEY-----.*?-----END[A-Z ]*PRIVATE KEY-----";
const DB_CONNSTR: &str =
    r"(?i)((?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|amqp)://[^:\s]+:)([^@\s]+)(@)";
const URL_BARE_TOKEN: &str = r"(?i)((?:https?|wss?|git|ssh|ftp|ftps|sftp)://)([^\s:@/]{8,})(@\S+)";
const JWT: &str = r"eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_=-]{4,}){0,2}";

/// The passes after the prefix one, in Hermes' order.
const PASSES: &[&str] = &[
    AUTH_HEADER,
    SECRET_HEADER,
    TELEGRAM,
    PRIVATE_KEY,
    DB_CONNSTR,
    URL_BARE_TOKEN,
    JWT,
];

/// Which passes can match a text: index 0 is the prefix alternation, then [`PASSES`] in order.
/// Every masked text is gated by it; the passes themselves compile on the first text they may
/// match (most daemons never log a key).
static GATE: LazyLock<Option<RegexSet>> = LazyLock::new(|| {
    let mut sources = vec![prefix::alternation()];
    sources.extend(PASSES.iter().map(|p| p.to_string()));
    RegexSet::new(&sources).ok()
});

static PASS_REGEXES: LazyLock<Option<Vec<Regex>>> = LazyLock::new(|| {
    PASSES
        .iter()
        .map(|p| Regex::new(p))
        .collect::<Result<_, _>>()
        .ok()
});

/// Whether the shape patterns compiled (they are constants; a failure is a bug the unit tests
/// catch, and masking then covers only the configured values). Compiles them.
#[cfg(test)]
pub fn available() -> bool {
    GATE.is_some() && PASS_REGEXES.is_some()
}

/// Compile the gate on a thread of its own, so the first masked log line finds it ready and
/// start-up does not wait for it; a failure is logged.
pub fn warm_up() {
    let spawned = std::thread::Builder::new()
        .name("mask-warm-up".into())
        .spawn(|| {
            if GATE.is_none() {
                tracing::error!(
                    "the key-shape patterns did not compile; only configured values are masked"
                );
            }
        });
    if let Err(e) = spawned {
        tracing::debug!(error = %e, "no warm-up thread; the patterns compile on first use");
    }
}

/// `text` with every Hermes key shape masked.
pub fn mask_shapes(text: Cow<'_, str>, style: Style) -> Cow<'_, str> {
    let Some(gate) = GATE.as_ref() else {
        return text;
    };
    let hits = gate.matches(&text);
    if !hits.matched_any() {
        return text;
    }
    let mut text = text;
    if hits.matched(0)
        && let Some(masked) = prefix::mask_prefixed(&text, style)
    {
        text = Cow::Owned(masked);
    }
    let passes = match PASS_REGEXES.as_ref() {
        Some(passes) if hits.iter().any(|i| i > 0) => passes.as_slice(),
        _ => &[],
    };
    for (i, pass) in passes.iter().enumerate() {
        if !hits.matched(i + 1) {
            continue;
        }
        let replaced = pass.replace_all(&text, |c: &Captures<'_>| replace(i, c));
        if let Cow::Owned(s) = replaced {
            text = Cow::Owned(s);
        }
    }
    text
}

/// The replacement of one match of pass `i` of [`PASSES`].
fn replace(i: usize, c: &Captures<'_>) -> String {
    let group = |n: usize| c.get(n).map_or("", |m| m.as_str());
    // A header whose value is already the file-content marker (a settings file's masked
    // `Authorization:`) keeps it.
    let token = match i {
        0 => group(3),
        1 => group(2),
        _ => "",
    };
    if token == SECRET_MARKER {
        return group(0).to_string();
    }
    match i {
        0 => format!("{}{}{}", group(1), group(2), mask_token(group(3))),
        1 => format!("{}{}", group(1), mask_token(group(2))),
        2 => format!("{}{}:***", group(1), group(2)),
        3 => "[REDACTED PRIVATE KEY]".to_string(),
        4 => {
            // A `{…}` password is a template reference in code, not a credential.
            let password = group(2);
            if password.starts_with('{') && password.ends_with('}') {
                group(0).to_string()
            } else {
                format!("{}***{}", group(1), group(3))
            }
        }
        5 => format!("{}{}{}", group(1), mask_token(group(2)), group(3)),
        _ => mask_token(group(0)),
    }
}
