//! Secret values in a Hermes home's settings file (`config.yaml` of the daemon's home, the root
//! `~/.hermes` or a profile), masked when a tool shows the file: `read_file` and `search_files`
//! read it through [`mask_settings`], so a key written straight into the file — in no `.env`, of
//! no vendor shape — is never shown, while the rest of the file stays readable.
//!
//! A value is masked when its key holds secrets ([`is_secret_key`]: `api_key`, `token`,
//! `secret`, `password`, `Authorization`, keys ending in those words, `*_KEY`, …) or when the
//! value has one of the masker's key shapes (`sk-…`, `ghp_…`, a JWT, `Bearer …`), whatever its
//! key; of any other value, the parts the masker takes for keys by their content (a
//! random-looking token, a URL's password) are masked. Everything under a secret key is masked: a block scalar (`|`, `>`), a
//! continuation line, a nested mapping's values or a list's items. The file keeps its lines —
//! one line in, one line out — so line numbers, offsets and searches stay those of the file;
//! each masked value becomes the file-content marker (`«redacted-secret»`,
//! `«redacted:sk-…»`). Values that cannot be secrets stay: empty, `null`, `~`, `true`, `false`,
//! and a reference to the environment (`${OPENAI_API_KEY}`).
//!
//! The reading is YAML's block style line by line (indentation, `key: value`, `- item`,
//! comments, quoted scalars, flow mappings on one line), not a full parser: it works on files
//! that do not parse, and a commented-out `# api_key: …` line is masked too.

use std::borrow::Cow;
use std::path::Path;

use super::{Style, names, sentinel, shapes, values};
use crate::policy::paths::{PathPolicy, Protected};

/// Whether `path` (real) is a Hermes home's settings file: a file directly in a Hermes home that
/// the path policy protects as settings and lets the agent read (`config.yaml`; the credential
/// files it protects are not readable at all).
pub fn is_settings_file(paths: &PathPolicy, path: &Path) -> bool {
    path.parent().is_some_and(|dir| paths.is_hermes_home(dir))
        && paths.protected(path) == Some(Protected::Settings)
        && paths.check_read(path).is_ok()
}

/// Words a secret-holding key is, or ends in (compared in lower case, `-` read as `_`).
const SECRET_KEY_ENDINGS: &[&str] = &[
    "api_key",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "credential",
    "credentials",
    "private_key",
    "privatekey",
];

/// Keys that hold secrets under other names (HTTP headers of MCP servers and providers).
const SECRET_KEYS: &[&str] = &["authorization", "proxy_authorization", "cookie", "key"];

/// Whether a settings key holds a secret: `api_key`, `token`, `secret`, `password` and the like,
/// any key ending in one of them (`bot_token`, `accessToken`, `client_secret`), any `*_KEY`
/// (`OPENAI_API_KEY`, `x-api-key`), `Authorization` and `Cookie`.
pub fn is_secret_key(key: &str) -> bool {
    let key = key.trim().to_ascii_lowercase().replace('-', "_");
    SECRET_KEYS.contains(&key.as_str())
        || SECRET_KEY_ENDINGS.iter().any(|end| key.ends_with(end))
        || names::is_secret_name(&key)
}

/// `text` (a settings file) with every secret value masked (see the module comment); borrowed
/// when there is none. Line endings, indentation, keys and comments are kept.
pub fn mask_settings(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut changed = false;
    let mut open: Option<Block> = None;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let masked = mask_line(body, &mut open);
        changed |= matches!(masked, Cow::Owned(_));
        out.push_str(&masked);
        out.push_str(ending);
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

/// The lines below a secret key: those indented deeper than the key's column belong to it.
#[derive(Debug, Clone, Copy)]
struct Block {
    column: usize,
    /// The key's value started on its line (a block scalar, or a scalar going on): every line
    /// is part of it, a `#` too. Otherwise a mapping or a list, whose comments are comments.
    scalar: bool,
}

/// One line with its secret values masked; `open` is the secret key whose lines it may be in.
fn mask_line<'a>(line: &'a str, open: &mut Option<Block>) -> Cow<'a, str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    if let Some(block) = *open {
        if rest.trim().is_empty() {
            return Cow::Borrowed(line);
        }
        if indent > block.column {
            if !block.scalar && rest.starts_with('#') {
                return mask_comment(line, true);
            }
            // Inside a secret: a key's value, a list item, or a line of a scalar.
            return match entry(line, indent) {
                Some(entry) if entry.key.is_some() || entry.item => mask_value(line, &entry, true),
                _ => replace(line, indent..line.len(), &mask_of(rest.trim_end())),
            };
        }
        *open = None;
    }
    if rest.starts_with('#') {
        return mask_comment(line, false);
    }
    let Some(entry) = entry(line, indent) else {
        return Cow::Borrowed(line);
    };
    let secret = entry.key.is_some_and(is_secret_key);
    if secret {
        let value = line[entry.value..].trim_start();
        *open = Some(Block {
            column: entry.column,
            scalar: !(value.is_empty() || value.starts_with('#')),
        });
    }
    mask_value(line, &entry, secret)
}

/// A comment line: a commented-out setting is masked like a setting (it opens nothing);
/// `inside` when it is inside a secret mapping.
fn mask_comment(line: &str, inside: bool) -> Cow<'_, str> {
    let comment = line.trim_start().trim_start_matches('#').trim_start();
    let start = line.len() - comment.len();
    match entry(line, start) {
        Some(entry) if entry.key.is_some() || (inside && entry.item) => {
            let secret = inside || entry.key.is_some_and(is_secret_key);
            mask_value(line, &entry, secret)
        }
        _ => Cow::Borrowed(line),
    }
}

/// A `key: value` or `- value` line, as positions in it.
#[derive(Debug)]
struct Entry<'a> {
    /// The key, unquoted; `None` for a list item without one.
    key: Option<&'a str>,
    /// Whether the line is a list item (`- …`).
    item: bool,
    /// The column of the key (or of the item's value): deeper lines belong to it.
    column: usize,
    /// Where the value starts (after `key:` and spaces, or `- `), up to the line's end.
    value: usize,
}

/// Reads the entry of `line` from byte `start` (after indentation or a comment's `#`).
fn entry(line: &str, start: usize) -> Option<Entry<'_>> {
    let mut at = start;
    let mut item = false;
    // `- `, `- - ` …: the entry is what follows the last dash.
    while let Some(after) = line[at..].strip_prefix('-') {
        if after.is_empty() || after.starts_with(' ') {
            item = true;
            at = line.len() - after.trim_start_matches(' ').len();
        } else {
            break;
        }
    }
    let column = at;
    match key_at(line, at) {
        Some((key, value)) => Some(Entry {
            key: Some(key),
            item,
            column,
            value,
        }),
        None if item => Some(Entry {
            key: None,
            item,
            column,
            value: at,
        }),
        None => None,
    }
}

/// The key starting at `at` and where its value starts, if `line` has `key:` there.
fn key_at(line: &str, at: usize) -> Option<(&str, usize)> {
    let rest = &line[at..];
    let (key, after) = match rest.chars().next()? {
        quote @ ('"' | '\'') => {
            let close = rest[1..].find(quote)? + 1;
            (&rest[1..close], close + 1)
        }
        '{' | '[' | '#' | '|' | '>' | '&' | '*' | '!' | '%' | '@' | '`' => return None,
        _ => {
            let colon = colon_of(rest)?;
            (rest[..colon].trim_end(), colon)
        }
    };
    let tail = rest[after..].trim_start_matches(' ');
    let tail = tail.strip_prefix(':')?;
    if !(tail.is_empty() || tail.starts_with([' ', '\t'])) {
        return None;
    }
    let value = line.len() - tail.trim_start_matches([' ', '\t']).len();
    Some((key, value))
}

/// Where a plain key's `:` is: the first `:` followed by a space or the end of the line.
fn colon_of(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len())
        .find(|&i| bytes[i] == b':' && bytes.get(i + 1).is_none_or(|b| *b == b' ' || *b == b'\t'))
}

/// `line` with the value of `entry` masked when `secret` (its key holds a secret, or it is
/// inside one) or when the value has a key's shape.
fn mask_value<'a>(line: &'a str, entry: &Entry<'_>, secret: bool) -> Cow<'a, str> {
    let mut start = entry.value;
    // Anchors and tags name the value; they are not it.
    loop {
        let rest = &line[start..];
        if !(rest.starts_with('&') || rest.starts_with('!')) {
            break;
        }
        let token = rest.find(' ').unwrap_or(rest.len());
        start += token;
        start = line.len() - line[start..].trim_start_matches(' ').len();
    }
    let rest = &line[start..];
    match rest.chars().next() {
        None | Some('#') => Cow::Borrowed(line),
        // A block scalar: its lines follow, inside the key's block.
        Some('|' | '>') => Cow::Borrowed(line),
        Some('{') if !secret => mask_flow(line, start),
        Some('[') if !secret => mask_flow_items(line, start),
        Some(quote @ ('"' | '\'')) => {
            let inner = start + 1;
            let close = closing_quote(&line[inner..], quote).map_or(line.len(), |c| inner + c);
            masked_scalar(line, inner..close, entry.key, secret)
        }
        Some(_) => {
            let end = start + plain_end(rest);
            masked_scalar(line, start..end, entry.key, secret)
        }
    }
}

/// `line` with the scalar at `range` masked: whole when [`must_mask`] says so, else the parts
/// of it that look like keys.
fn masked_scalar<'a>(
    line: &'a str,
    range: std::ops::Range<usize>,
    key: Option<&str>,
    secret: bool,
) -> Cow<'a, str> {
    let value = &line[range.clone()];
    if must_mask(value, secret) {
        return replace(line, range, &mask_of(value));
    }
    if secret {
        return Cow::Borrowed(line);
    }
    match mask_parts(key.unwrap_or_default(), value) {
        Some(masked) => replace(line, range, &masked),
        None => Cow::Borrowed(line),
    }
}

/// Where a quoted scalar's closing quote is in `text` (after the opening one): `''` is an
/// escaped `'`, `\"` an escaped `"`.
fn closing_quote(text: &str, quote: char) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == '"' => i += 2,
            b'\'' if quote == '\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b if b == quote as u8 => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The length of a plain scalar at the start of `text`: up to a comment (` #`) or the end,
/// trailing spaces left out.
fn plain_end(text: &str) -> usize {
    let cut = text
        .find(" #")
        .or_else(|| text.find("\t#"))
        .unwrap_or(text.len());
    text[..cut].trim_end().len()
}

/// Whether `value` is shown masked: a secret's value (unless it cannot be one), or any value of
/// a key's shape.
fn must_mask(value: &str, secret: bool) -> bool {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return false;
    }
    if secret {
        return !is_not_a_secret(trimmed);
    }
    has_shape(trimmed)
}

/// Whether `value` has one of the masker's key shapes (`sk-…`, a JWT, `Bearer …`).
fn has_shape(value: &str) -> bool {
    matches!(
        shapes::mask_shapes(Cow::Borrowed(value), Style::FileContent),
        Cow::Owned(_)
    )
}

/// `value` (of a key that says nothing) with each part that looks like a key masked — a
/// random-looking token, a URL's password (the masker's content rule, `values`); `None` when
/// nothing does.
fn mask_parts(key: &str, value: &str) -> Option<String> {
    let parts = values::secret_parts(key, value);
    if parts.is_empty() {
        return None;
    }
    let mut masked = value.to_owned();
    for part in parts {
        masked = masked.replace(&part, &mask_of(&part));
    }
    (masked != value).then_some(masked)
}

/// Values a secret key may have that are no secret: nothing, a boolean, or a reference to an
/// environment variable (`${NAME}`, `$NAME`).
fn is_not_a_secret(value: &str) -> bool {
    if matches!(
        value.to_ascii_lowercase().as_str(),
        "~" | "null" | "true" | "false"
    ) {
        return true;
    }
    let name = value
        .strip_prefix("${")
        .and_then(|v| v.strip_suffix('}'))
        .or_else(|| value.strip_prefix('$'));
    name.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
}

/// The marker a masked value becomes (names a known vendor prefix, never the value).
fn mask_of(value: &str) -> String {
    sentinel(value.trim())
}

fn replace<'a>(line: &'a str, range: std::ops::Range<usize>, with: &str) -> Cow<'a, str> {
    let mut out = String::with_capacity(line.len());
    out.push_str(&line[..range.start]);
    out.push_str(with);
    out.push_str(&line[range.end..]);
    Cow::Owned(out)
}

/// A flow mapping on one line (`{api_key: x, url: y}`) from `start`: each secret key's value,
/// and each value of a key's shape, masked.
fn mask_flow(line: &str, start: usize) -> Cow<'_, str> {
    let Some(close) = line[start..].rfind('}').map(|c| start + c) else {
        return Cow::Borrowed(line);
    };
    let mut out = String::with_capacity(line.len());
    out.push_str(&line[..=start]);
    let mut first = true;
    for pair in line[start + 1..close].split(',') {
        if !first {
            out.push(',');
        }
        first = false;
        let masked = match pair.split_once(':') {
            Some((key, value)) => {
                let key_text = key.trim().trim_matches(['"', '\'']);
                let secret = is_secret_key(key_text);
                let inner = value.trim().trim_matches(['"', '\'']);
                if must_mask(inner, secret) {
                    Cow::Owned(pair.replacen(inner, &mask_of(inner), 1))
                } else {
                    Cow::Borrowed(pair)
                }
            }
            None => Cow::Borrowed(pair),
        };
        out.push_str(&masked);
    }
    out.push_str(&line[close..]);
    if out == line {
        Cow::Borrowed(line)
    } else {
        Cow::Owned(out)
    }
}

/// A flow sequence on one line (`[a, b]`) from `start`: each item of a key's shape masked.
fn mask_flow_items(line: &str, start: usize) -> Cow<'_, str> {
    let Some(close) = line[start..].rfind(']').map(|c| start + c) else {
        return Cow::Borrowed(line);
    };
    let items = &line[start + 1..close];
    let mut out = String::with_capacity(line.len());
    out.push_str(&line[..=start]);
    let mut first = true;
    for item in items.split(',') {
        if !first {
            out.push(',');
        }
        first = false;
        let inner = item.trim().trim_matches(['"', '\'']);
        if must_mask(inner, false) {
            out.push_str(&item.replacen(inner, &mask_of(inner), 1));
        } else {
            out.push_str(item);
        }
    }
    out.push_str(&line[close..]);
    if out == line {
        Cow::Borrowed(line)
    } else {
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_keys() {
        for key in [
            "api_key",
            "apiKey",
            "token",
            "bot_token",
            "accessToken",
            "secret",
            "client_secret",
            "password",
            "db-password",
            "OPENAI_API_KEY",
            "x-api-key",
            "GITHUB_TOKEN",
            "Authorization",
            "private_key",
            "credentials",
            "key",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "model",
            "base_url",
            "max_tokens",
            "token_limit",
            "keyboard",
            "monkey",
            "secrets_dir_hint",
            "provider",
        ] {
            assert!(!is_secret_key(key), "{key}");
        }
    }

    fn masked(text: &str) -> String {
        mask_settings(text).into_owned()
    }

    #[test]
    fn values_of_secret_keys_are_masked_and_the_rest_kept() {
        let text = "model:\n  default: gpt-5\n  api_key: plainvalue1234567890\n  \
                    base_url: https://x.example/v1\nproviders:\n  x:\n    api_key: \"sk-live-abcdefghijklmnop1234\"\n    \
                    token: 'it''s-a-secret' # rotated monthly\n";
        assert_eq!(
            masked(text),
            "model:\n  default: gpt-5\n  api_key: «redacted-secret»\n  \
             base_url: https://x.example/v1\nproviders:\n  x:\n    api_key: \"«redacted:sk-…»\"\n    \
             token: '«redacted-secret»' # rotated monthly\n"
        );
    }

    #[test]
    fn everything_under_a_secret_key_is_masked() {
        let text = "mcp_servers:\n  y:\n    env:\n      GITHUB_TOKEN: abc123abc123\n      LOG: debug\n  \
                    z:\n    headers:\n      Authorization: Bearer opaque-token\ncredentials:\n  primary: p1\n  \
                    list:\n    - one\n    - two\nprivate_key: |\n  line-one\n\n  line-two\nafter: shown\n\
                    password: first\n  continued\nkept: yes\n";
        assert_eq!(
            masked(text),
            "mcp_servers:\n  y:\n    env:\n      GITHUB_TOKEN: «redacted-secret»\n      LOG: debug\n  \
             z:\n    headers:\n      Authorization: «redacted-secret»\ncredentials:\n  primary: «redacted-secret»\n  \
             list:\n    - «redacted-secret»\n    - «redacted-secret»\nprivate_key: |\n  «redacted-secret»\n\n  «redacted-secret»\nafter: shown\n\
             password: «redacted-secret»\n  «redacted-secret»\nkept: yes\n"
        );
    }

    #[test]
    fn key_shaped_values_are_masked_under_any_key() {
        let text = "notes: ghp_R4nd0mT0k3nV4lu3F0rT3st1ngAbCdEf12\nargs: [\"--x\", \"sk-live-abcdefghijklmnop1234\"]\n\
                    headers: {Authorization: Bearer abc, Accept: json}\nurl: https://example.com\n";
        assert_eq!(
            masked(text),
            "notes: «redacted:ghp_…»\nargs: [\"--x\", \"«redacted:sk-…»\"]\n\
             headers: {Authorization: «redacted-secret», Accept: json}\nurl: https://example.com\n"
        );
    }

    #[test]
    fn what_cannot_be_a_secret_stays() {
        let text = "api_key:\ntoken: ~\nsecret: null\npassword: \"\"\nOPENAI_API_KEY: ${OPENAI_API_KEY}\n\
                    key: $MY_KEY\nenabled: true\n";
        assert!(matches!(mask_settings(text), Cow::Borrowed(_)));
    }

    #[test]
    fn comments_in_a_secret_mapping_stay_comments_and_in_a_scalar_are_its_text() {
        let text =
            "credentials:\n  # the main one\n  primary: p1\n  # backup: b2\ntoken: |\n  # abc\n";
        assert_eq!(
            masked(text),
            "credentials:\n  # the main one\n  primary: «redacted-secret»\n  # backup: «redacted-secret»\n\
             token: |\n  «redacted-secret»\n"
        );
    }

    #[test]
    fn parts_that_look_like_keys_are_masked_in_other_values() {
        let text = "webhook_url: https://hooks.example.com/services/T0A1B2C3D/Xk39fJ2lQp8ZrT5vBn7WmC4y\n\
                    database_url: postgres://app:Sup3rS3cretPw@db.internal:5432/app\nmodel: gpt-4o-mini\n";
        let out = masked(text);
        assert!(!out.contains("Xk39fJ2lQp8ZrT5vBn7WmC4y"), "{out}");
        assert!(!out.contains("Sup3rS3cretPw"), "{out}");
        assert!(out.contains("https://hooks.example.com/services/"), "{out}");
        // A URL with a password has a key's shape: masked whole.
        assert!(out.contains("database_url: «redacted-secret»"), "{out}");
        assert!(out.contains("model: gpt-4o-mini"), "{out}");
    }

    #[test]
    fn the_masker_keeps_the_marker_of_a_masked_header() {
        let text = masked("headers:\n  Authorization: Bearer opaque\n  x-api-key: k-123456789\n");
        let shown =
            crate::policy::secrets::SecretMasker::default().mask_as(&text, Style::FileContent);
        assert_eq!(
            shown,
            "headers:\n  Authorization: «redacted-secret»\n  x-api-key: «redacted-secret»\n"
        );
    }

    #[test]
    fn comments_lists_anchors_and_line_endings() {
        let text = "# api_key: old-value-123\r\n- token: &t secret-one\r\n- - password: two\r\nanchor: *t\r\n";
        assert_eq!(
            masked(text),
            "# api_key: «redacted-secret»\r\n- token: &t «redacted-secret»\r\n- - password: «redacted-secret»\r\nanchor: *t\r\n"
        );
        assert_eq!(masked("a: b\napi_key: x").lines().count(), 2);
        assert_eq!(masked("api_key: x"), "api_key: «redacted-secret»");
    }
}
