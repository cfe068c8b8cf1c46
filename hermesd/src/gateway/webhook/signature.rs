//! Checking a webhook's signature as Hermes does. The first scheme whose header is present
//! decides, with no falling through to a weaker one: GitHub's `X-Hub-Signature-256`
//! (`sha256=` + hex HMAC-SHA256 of the body), GitLab's `X-Gitlab-Token` (the secret itself), the
//! generic `X-Webhook-Signature-V2` (hex HMAC-SHA256 of `<X-Webhook-Timestamp>.<body>`, the
//! timestamp within 5 minutes of now), then the legacy `X-Webhook-Signature` (hex HMAC-SHA256
//! of the body alone: accepted, with a warning, since a captured request can be replayed).
//! [`signed_digest`] names what a passed signature covers, so a replay is recognised.

use axum::http::HeaderMap;

use crate::gateway::secret;

/// How far a V2 timestamp may be from now.
pub const WINDOW_SECS: i64 = 300;

/// Why a signature was refused (logged; the sender only learns "Invalid signature").
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    Missing,
    Mismatch,
    NoTimestamp,
    Stale,
}

/// A signature that passed; `Legacy` is V1 (body only).
#[derive(Debug, PartialEq, Eq)]
pub enum Passed {
    Signed,
    Legacy,
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// The scheme of a request: the first signature header present, with its value.
enum Scheme<'h> {
    GitHub(&'h str),
    GitLab(&'h str),
    V2(&'h str),
    Legacy(&'h str),
}

fn scheme(headers: &HeaderMap) -> Option<Scheme<'_>> {
    if let Some(given) = header(headers, "x-hub-signature-256") {
        return Some(Scheme::GitHub(given));
    }
    if let Some(token) = header(headers, "x-gitlab-token") {
        return Some(Scheme::GitLab(token));
    }
    if let Some(given) = header(headers, "x-webhook-signature-v2") {
        return Some(Scheme::V2(given));
    }
    header(headers, "x-webhook-signature").map(Scheme::Legacy)
}

/// What the V2 signature covers: `<timestamp>.<body>`.
fn v2_signed(stamp: &str, body: &[u8]) -> Vec<u8> {
    let mut signed = Vec::with_capacity(stamp.len() + 1 + body.len());
    signed.extend_from_slice(stamp.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(body);
    signed
}

/// Check `body` against `secret` by the first signature header present; `now` in Unix seconds.
pub fn check(headers: &HeaderMap, body: &[u8], secret: &str, now: i64) -> Result<Passed, Refused> {
    let key = secret.as_bytes();
    match scheme(headers).ok_or(Refused::Missing)? {
        Scheme::GitHub(given) => {
            let hex = given.strip_prefix("sha256=").ok_or(Refused::Mismatch)?;
            matched(secret::hmac_matches(key, body, hex), Passed::Signed)
        }
        Scheme::GitLab(token) => matched(secret::same(token.as_bytes(), key), Passed::Signed),
        Scheme::V2(given) => {
            let stamp = header(headers, "x-webhook-timestamp").ok_or(Refused::NoTimestamp)?;
            let at: i64 = stamp.parse().map_err(|_| Refused::Stale)?;
            if (now - at).abs() > WINDOW_SECS {
                return Err(Refused::Stale);
            }
            let signed = v2_signed(stamp, body);
            matched(secret::hmac_matches(key, &signed, given), Passed::Signed)
        }
        Scheme::Legacy(given) => matched(secret::hmac_matches(key, body, given), Passed::Legacy),
    }
}

/// The SHA-256 digest of what a request's signature covers — the body, and for the generic V2
/// scheme its timestamp with it (`<timestamp>.<body>`) — by which a signed request that was
/// accepted is recognised when it comes again under another delivery id (a replay: whoever
/// captured it cannot sign another). A V2 sender that signs the same body again, with a new
/// timestamp, sends a new request. Call it on a request [`check`] passed.
pub fn signed_digest(headers: &HeaderMap, body: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    match (scheme(headers), header(headers, "x-webhook-timestamp")) {
        (Some(Scheme::V2(_)), Some(stamp)) => Sha256::digest(v2_signed(stamp, body)).into(),
        _ => Sha256::digest(body).into(),
    }
}

fn matched(ok: bool, passed: Passed) -> Result<Passed, Refused> {
    if ok {
        Ok(passed)
    } else {
        Err(Refused::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_digest_is_of_what_the_signature_covers() {
        use sha2::{Digest, Sha256};
        let body_only: [u8; 32] = Sha256::digest(BODY).into();
        let github = headers(&[("x-hub-signature-256", "sha256=ab".into())]);
        assert_eq!(signed_digest(&github, BODY), body_only);
        let legacy = headers(&[("x-webhook-signature", "ab".into())]);
        assert_eq!(signed_digest(&legacy, BODY), body_only);
        let v2 = |at: &str| {
            headers(&[
                ("x-webhook-signature-v2", "ab".into()),
                ("x-webhook-timestamp", at.into()),
            ])
        };
        assert_eq!(
            signed_digest(&v2("1800000000"), BODY),
            <[u8; 32]>::from(Sha256::digest(b"1800000000.{\"action\":\"opened\"}"))
        );
        assert_ne!(
            signed_digest(&v2("1800000000"), BODY),
            signed_digest(&v2("1800000001"), BODY)
        );
    }

    use super::*;
    use crate::gateway::secret::hmac_hex;

    fn headers(pairs: &[(&'static str, String)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap_or_else(|_| panic!("{v}")));
        }
        h
    }

    const BODY: &[u8] = br#"{"action":"opened"}"#;
    const NOW: i64 = 1_800_000_000;

    #[test]
    fn github_gitlab_and_generic_signatures() {
        let good = format!("sha256={}", hmac_hex(b"s3cret", BODY));
        assert_eq!(
            check(
                &headers(&[("x-hub-signature-256", good)]),
                BODY,
                "s3cret",
                NOW
            ),
            Ok(Passed::Signed)
        );
        let bad = format!("sha256={}", hmac_hex(b"other", BODY));
        assert_eq!(
            check(
                &headers(&[("x-hub-signature-256", bad)]),
                BODY,
                "s3cret",
                NOW
            ),
            Err(Refused::Mismatch)
        );
        assert_eq!(
            check(
                &headers(&[("x-gitlab-token", "s3cret".into())]),
                BODY,
                "s3cret",
                NOW
            ),
            Ok(Passed::Signed)
        );
        let stamp = NOW.to_string();
        let v2 = hmac_hex(
            b"s3cret",
            format!("{stamp}.{}", String::from_utf8_lossy(BODY)).as_bytes(),
        );
        let fresh = headers(&[
            ("x-webhook-signature-v2", v2.clone()),
            ("x-webhook-timestamp", stamp),
        ]);
        assert_eq!(check(&fresh, BODY, "s3cret", NOW + 300), Ok(Passed::Signed));
        assert_eq!(
            check(&fresh, BODY, "s3cret", NOW + 301),
            Err(Refused::Stale)
        );
        // V2 without its timestamp never falls back to V1.
        let v1 = hmac_hex(b"s3cret", BODY);
        let downgrade = headers(&[
            ("x-webhook-signature-v2", v2),
            ("x-webhook-signature", v1.clone()),
        ]);
        assert_eq!(
            check(&downgrade, BODY, "s3cret", NOW),
            Err(Refused::NoTimestamp)
        );
        assert_eq!(
            check(
                &headers(&[("x-webhook-signature", v1)]),
                BODY,
                "s3cret",
                NOW
            ),
            Ok(Passed::Legacy)
        );
        assert_eq!(
            check(&HeaderMap::new(), BODY, "s3cret", NOW),
            Err(Refused::Missing)
        );
    }
}
