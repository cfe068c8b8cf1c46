//! Which names hold secrets: `GITHUB_TOKEN`, `apiKey`, `DB_PASSWORD` do, `max_tokens`,
//! `SSH_KEY_PATH`, `PWD` do not; and which service a secret is named after.

/// Name segments that mark a variable as holding a secret.
pub(super) const SECRET_SEGMENTS: &[&str] = &[
    "key",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "credential",
    "credentials",
    "pat",
];
/// Trailing segments that make a secret-looking name a path, URL, id… rather than a secret.
pub(super) const NOT_SECRET_SUFFIXES: &[&str] = &[
    "path", "file", "dir", "url", "uri", "host", "endpoint", "name", "id", "env", "var", "header",
    "type", "len", "length", "count", "limit", "prefix", "field", "format", "source",
];
/// Segments that say nothing about which service a secret belongs to.
pub(super) const GENERIC_SEGMENTS: &[&str] = &[
    "key",
    "apikey",
    "api",
    "token",
    "secret",
    "password",
    "passwd",
    "credential",
    "credentials",
    "access",
    "auth",
    "bot",
    "personal",
    "pat",
    "app",
    "client",
    "private",
    "bearer",
    "my",
    "the",
    "user",
    "service",
    "account",
    "oauth",
    "refresh",
    "id",
    "default",
    "prod",
    "dev",
    "v1",
    "v2",
    "db",
    "database",
    "admin",
    "root",
    "smtp",
    "mail",
    "email",
    "webhook",
    "signing",
    "encryption",
    "jwt",
    "session",
    "master",
    "local",
    "test",
    "live",
    "public",
    "read",
    "write",
];
/// Service names whose domains are spelled differently from their secrets.
pub(super) const VENDOR_ALIASES: &[(&str, &str)] = &[
    ("hf", "huggingface"),
    ("gh", "github"),
    ("gl", "gitlab"),
    ("aws", "amazonaws"),
    ("gemini", "googleapis"),
    ("google", "googleapis"),
    ("cf", "cloudflare"),
    ("tg", "telegram"),
    ("claude", "anthropic"),
    ("oai", "openai"),
];

/// Lower-cased name segments, split on `_` and camelCase boundaries.
pub(super) fn segments(name: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for chunk in name.split('_').filter(|c| !c.is_empty()) {
        let mut current = String::new();
        let mut prev_lower = false;
        for ch in chunk.chars() {
            if ch.is_ascii_uppercase() && prev_lower && !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
            prev_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
            current.push(ch.to_ascii_lowercase());
        }
        parts.push(current);
    }
    parts
}

/// `GITHUB_TOKEN`, `apiKey`, `DB_PASSWORD` yes; `max_tokens`, `SSH_KEY_PATH`, `PWD` no.
pub(super) fn is_secret_name(name: &str) -> bool {
    let parts = segments(name);
    let Some(last) = parts.last() else {
        return false;
    };
    parts.iter().any(|p| SECRET_SEGMENTS.contains(&p.as_str()))
        && !NOT_SECRET_SUFFIXES.contains(&last.as_str())
}
