//! One credential of a pool — an API key or an OAuth login — and what is known of its health:
//! parked (until when, and why), dead, or usable. Secrets never reach logs or `Debug`.

use std::{
    sync::Arc,
    time::{Duration, SystemTime},
};

use serde::{Deserialize, Serialize};

/// A key or token; shows as `<secret>` in `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<str>);

impl Secret {
    pub fn new(text: &str) -> Option<Self> {
        let text = text.trim();
        (!text.is_empty()).then(|| Self(text.into()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `sha256:<16 hex>`, as Hermes fingerprints a secret it does not store.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(self.0.as_bytes());
        let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<secret>")
    }
}

/// Hermes' `auth_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthType {
    ApiKey,
    #[serde(rename = "oauth")]
    OAuth,
}

impl AuthType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ApiKey => "api_key",
            Self::OAuth => "oauth",
        }
    }
}

/// Where a credential was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Python Hermes' `auth.json` (read-only to hermesd).
    HermesFile,
    /// hermesd's own store (`hermesctl auth add`).
    Own,
    /// A key variable of the provider (`OPENROUTER_API_KEY`, …).
    Environment,
}

/// One credential as the pool uses it.
#[derive(Debug, Clone)]
pub struct Credential {
    /// Hermes' 6-hex id for file rows; `env:<VAR>` rows keep their source as id when the file has
    /// none for them.
    pub id: String,
    pub label: String,
    pub auth_type: AuthType,
    /// Hermes' `source`: `manual`, `env:OPENROUTER_API_KEY`, `device_code`, …
    pub source: String,
    /// `None` when the row names a source whose secret is not available here.
    pub secret: Option<Secret>,
    pub origin: Origin,
}

/// Why a credential is out of use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parked {
    /// Seconds since the epoch when it may be tried again; `None` for a dead credential, which
    /// only a new login or `auth add` brings back.
    pub until: Option<f64>,
    /// The HTTP status that parked it.
    pub code: Option<u16>,
    /// The provider's message.
    pub message: String,
    /// When it was parked (seconds since the epoch).
    pub at: f64,
}

impl Parked {
    /// Parked for `ttl` from `now` after `code`.
    pub fn new(now: SystemTime, ttl: Duration, code: Option<u16>, message: &str) -> Self {
        let at = epoch_seconds(now);
        Self {
            until: Some(at + ttl.as_secs_f64()),
            code,
            message: message.chars().take(300).collect(),
            at,
        }
    }

    /// Whether it is still out of use at `now`.
    pub fn holds(&self, now: SystemTime) -> bool {
        self.until.is_none_or(|until| epoch_seconds(now) < until)
    }

    /// Time left at `now` (`None` when dead).
    pub fn left(&self, now: SystemTime) -> Option<Duration> {
        self.until
            .map(|until| Duration::from_secs_f64((until - epoch_seconds(now)).max(0.0)))
    }

    /// Hermes' words for the kind of trouble: `rate-limited`, `auth failed`, `exhausted`.
    pub fn kind(&self) -> &'static str {
        let message = self.message.to_ascii_lowercase();
        match self.code {
            Some(401 | 403) => "auth failed",
            Some(429) => "rate-limited",
            _ if ["rate limit", "usage limit", "quota", "too many requests"]
                .iter()
                .any(|m| message.contains(m)) =>
            {
                "rate-limited"
            }
            _ => "exhausted",
        }
    }
}

/// Seconds since the epoch (0 before it).
pub fn epoch_seconds(at: SystemTime) -> f64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// How long a credential stays parked after `status` when the provider does not say (Hermes'
/// TTLs: 5 minutes after a 401, an hour after anything else — 402, 429 quota, 403).
pub fn park_ttl(status: Option<u16>) -> Duration {
    match status {
        Some(401) => Duration::from_secs(300),
        _ => Duration::from_secs(3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_hide_in_debug_and_fingerprint_as_hermes() {
        let secret = Secret::new(" sk-or-v1-aaaa ").unwrap();
        assert_eq!(format!("{secret:?}"), "<secret>");
        assert_eq!(secret.expose(), "sk-or-v1-aaaa");
        assert!(secret.fingerprint().starts_with("sha256:"));
        assert_eq!(secret.fingerprint().len(), "sha256:".len() + 16);
        assert!(Secret::new("  ").is_none());
    }

    #[test]
    fn parking_holds_until_its_ttl_and_dead_holds_forever() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let parked = Parked::new(now, park_ttl(Some(429)), Some(429), "quota");
        assert!(parked.holds(now + Duration::from_secs(3599)));
        assert!(!parked.holds(now + Duration::from_secs(3600)));
        assert_eq!(parked.kind(), "rate-limited");
        assert_eq!(park_ttl(Some(401)), Duration::from_secs(300));
        let dead = Parked {
            until: None,
            ..parked
        };
        assert!(dead.holds(now + Duration::from_secs(10_000_000)));
    }
}
