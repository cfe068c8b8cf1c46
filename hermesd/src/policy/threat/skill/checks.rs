//! Post-filters about secrets and destinations: which names are secret-shaped, whether a
//! request carrying one goes to the secret's own service or to loopback (exempt), and whether
//! a secret file or an environment dump flows into a network tool in the same command.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

pub(super) use super::super::engine::compile;
pub(super) use super::secret_names::is_secret_name;
use super::secret_names::{GENERIC_SEGMENTS, VENDOR_ALIASES, segments};
use super::text::{after, before, is_table_row};

/// `Some(is_match)`, or `None` when the helper regex failed to compile.
pub(super) fn found(regex: &LazyLock<Option<Regex>>, text: &str) -> Option<bool> {
    regex.as_ref().map(|re| re.is_match(text))
}

static SHELL_VAR: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)"));
static IDENTIFIER: LazyLock<Option<Regex>> = LazyLock::new(|| compile(r"[A-Za-z_][A-Za-z0-9_]*"));
static URL_HOST: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r#"\b(?:https?|wss?|ftp)://([^\s/"'?#<>)\]`]+)"#));
static LOOPBACK_WORD: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"\b(?:localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3})\b|\[::1\]"));
static SECRET_FILE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r#"\.ssh(?:/[\w.*-]*)?|\.aws/credentials|\.gnupg\b|\.kube/config|\.docker/config\.json|\.netrc\b|\.pgpass\b|\.git-credentials\b|\.npmrc\b|\.pypirc\b|\.vault-token\b|\.hermes\}?/(?:\.env|auth\.json)|HERMES_HOME[^/\s]*/\.env|(?:^|[\s/"'=])\.env(?:$|[\s"';|&)])|/etc/shadow\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?:\.pub)?"#,
    )
});
static ENV_DUMP: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r"(?:^|[;&|(`]|\$\()\s*(?:printenv|env)\s*(?:\||\)|$)|\bos\.environ\b\s*(?:\)|\.items\(\)|\.copy\(\)|\})|dict\(\s*os\.environ\s*\)|\bprocess\.env\s*\)|JSON\.stringify\(\s*process\.env",
    )
});

/// Secret-shaped `$VAR`s in `text` (and bare identifiers too when `identifiers`).
fn secret_refs(text: &str, identifiers: bool) -> Vec<&str> {
    let mut refs = Vec::new();
    if let Some(re) = SHELL_VAR.as_ref() {
        refs.extend(
            re.captures_iter(text)
                .filter_map(|c| c.get(1))
                .map(|m| m.as_str()),
        );
    }
    if identifiers && let Some(re) = IDENTIFIER.as_ref() {
        refs.extend(re.find_iter(text).map(|m| m.as_str()));
    }
    refs.retain(|name| is_secret_name(name));
    refs
}

/// Hosts of the literal URLs in `text`, lower-cased, without user info and port.
fn url_hosts(text: &str) -> Vec<String> {
    let Some(re) = URL_HOST.as_ref() else {
        return Vec::new();
    };
    re.captures_iter(text)
        .filter_map(|c| c.get(1))
        .map(|m| {
            let authority = m.as_str().rsplit('@').next().unwrap_or_default();
            let host = match authority.strip_prefix('[') {
                Some(v6) => v6.split(']').next().unwrap_or_default(),
                None => authority.split(':').next().unwrap_or_default(),
            };
            host.to_ascii_lowercase()
        })
        .collect()
}

/// `localhost`, `127.x.x.x`, `::1`, `0.0.0.0`.
pub(super) fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host.starts_with("127.")
        || host == "::1"
        || host == "0.0.0.0"
}

/// The registrable label of a host: `github` for `api.github.com`, `bbc` for `www.bbc.co.uk`.
fn registrable_label(host: &str) -> &str {
    let labels: Vec<&str> = host.split('.').filter(|l| !l.is_empty()).collect();
    match labels.as_slice() {
        [] => host,
        [only] => only,
        [.., third, second, last]
            if last.len() == 2
                && ["co", "com", "net", "org", "gov", "ac", "edu"].contains(second) =>
        {
            third
        }
        [.., second, _] => second,
    }
}

/// Service names a secret is named after (`openai` for `OPENAI_API_KEY`), aliases included.
fn vendors(secret: &str) -> Vec<String> {
    let mut names: Vec<String> = segments(secret)
        .into_iter()
        .filter(|s| s.len() >= 2 && !GENERIC_SEGMENTS.contains(&s.as_str()))
        .collect();
    let aliases: Vec<String> = names
        .iter()
        .filter_map(|n| VENDOR_ALIASES.iter().find(|(alias, _)| alias == n))
        .map(|(_, domain)| (*domain).to_owned())
        .collect();
    names.extend(aliases);
    names
}

/// A secret sent to hosts whose registrable name starts with the secret's service name, or
/// (no literal URL) with another variable on the line naming that service, is ordinary use.
fn goes_to_own_service(secret: &str, hosts: &[String], line_lower: &str) -> bool {
    let vendors = vendors(secret);
    if vendors.is_empty() {
        return false;
    }
    if hosts.is_empty() {
        return vendors
            .iter()
            .any(|v| line_lower.matches(v.as_str()).count() >= 2);
    }
    hosts.iter().filter(|h| !is_loopback(h)).all(|host| {
        let label = registrable_label(host);
        vendors.iter().any(|v| label.starts_with(v.as_str()))
    })
}

/// Where a secret named after the match goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SecretUse {
    /// No secret, loopback, or the secret's own service.
    Fine,
    /// A generically named secret (`$API_KEY`, `token`): the skill's own setting.
    Generic,
    /// A secret named after a service (`$OPENAI_API_KEY`) sent somewhere else.
    Leak,
}

/// Classifies the secrets referenced after byte `start` of a request line. Exfiltration
/// targets well-known names (`OPENAI_API_KEY`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`), so
/// a service-named secret going to another host is a leak, while a generic name is the
/// skill's own configuration.
fn secret_use(line: &str, start: usize, identifiers: bool) -> SecretUse {
    let secrets = secret_refs(after(line, start), identifiers);
    if secrets.is_empty() {
        return SecretUse::Fine;
    }
    let hosts = url_hosts(line);
    let loopback_only = if hosts.is_empty() {
        found(&LOOPBACK_WORD, line).unwrap_or(false)
    } else {
        hosts.iter().all(|h| is_loopback(h))
    };
    if loopback_only {
        return SecretUse::Fine;
    }
    let lower = line.to_ascii_lowercase();
    let mut verdict = SecretUse::Fine;
    for secret in secrets {
        if vendors(secret).is_empty() {
            verdict = SecretUse::Generic;
        } else if !goes_to_own_service(secret, &hosts, &lower) {
            return SecretUse::Leak;
        }
    }
    verdict
}

/// `curl`/`wget` with a service-named secret `$VAR` to a foreign host.
pub(super) fn shell_secret_leaves(line: &str, m: Range<usize>) -> bool {
    secret_use(line, m.start, false) == SecretUse::Leak
}

/// `requests.post(…)`/`fetch(…)` with a service-named secret to a foreign host.
pub(super) fn code_secret_leaves(line: &str, m: Range<usize>) -> bool {
    secret_use(line, m.start, true) == SecretUse::Leak
}

/// A request carrying a generically named secret (informational).
pub(super) fn generic_secret_sent(line: &str, m: Range<usize>) -> bool {
    let call = after(line, m.start)
        .get(..4)
        .unwrap_or("")
        .to_ascii_lowercase();
    let shell_tool = call == "curl" || call == "wget";
    secret_use(line, m.start, !shell_tool) == SecretUse::Generic
}

/// A secret `$VAR` on a line that opens a raw socket (nc, socat, /dev/tcp), not to loopback.
pub(super) fn secret_on_socket(line: &str, _m: Range<usize>) -> bool {
    !secret_refs(line, false).is_empty() && !found(&LOOPBACK_WORD, line).unwrap_or(false)
}

/// Where `line` names a credential file. Public keys, known_hosts, authorized_keys and
/// `~/.ssh/config` hold no secrets; `~/.kube/config` and `~/.docker/config.json` do.
fn secret_file_positions(line: &str) -> Vec<usize> {
    let Some(re) = SECRET_FILE.as_ref() else {
        return vec![0];
    };
    re.find_iter(line)
        .filter(|m| {
            let s = m.as_str();
            !(s.ends_with(".pub")
                || s.ends_with("known_hosts")
                || s.ends_with("/config")
                || s.ends_with("authorized_keys"))
                || s.contains("kube")
                || s.contains("docker")
        })
        .map(|m| m.start())
        .collect()
}

/// `true` when positions `a` and `b` are in the same command (no `;`, `&&`, `||` between).
fn same_command(line: &str, a: usize, b: usize) -> bool {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let between = after(before(line, hi), lo);
    !(between.contains(';') || between.contains("&&") || between.contains("||"))
}

/// A network tool (the match) in the same command as a secret file.
pub(super) fn secret_file_to_network(line: &str, m: Range<usize>) -> bool {
    secret_file_positions(line)
        .into_iter()
        .any(|p| same_command(line, p, m.start))
        && !found(&LOOPBACK_WORD, line).unwrap_or(false)
}

/// A network tool (the match) in the same command as a dump of the whole environment.
pub(super) fn env_dump_to_network(line: &str, m: Range<usize>) -> bool {
    let Some(re) = ENV_DUMP.as_ref() else {
        return true;
    };
    re.find_iter(line)
        .any(|d| same_command(line, d.start(), m.start))
        && !found(&LOOPBACK_WORD, line).unwrap_or(false)
}

/// In a Markdown table row only hits inside backtick code count; elsewhere all do.
pub(super) fn code_if_table(line: &str, m: Range<usize>) -> bool {
    !is_table_row(line) || before(line, m.start).matches('`').count() % 2 == 1
}

/// Hermes' `printenv|env |` (all variables), skipping `printenv HOME` and table prose.
pub(super) fn dumps_environment(line: &str, m: Range<usize>) -> bool {
    if !code_if_table(line, m.clone()) {
        return false;
    }
    let matched =
        after(before(line, m.end), m.start).trim_start_matches(|c: char| !c.is_ascii_alphabetic());
    if !matched.to_ascii_lowercase().starts_with("printenv") {
        return true;
    }
    match after(line, m.end).split_whitespace().next() {
        Some(arg) if arg.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => {
            is_secret_name(arg.trim_end_matches([';', ')', '`', '"', '\'']))
        }
        _ => true,
    }
}
