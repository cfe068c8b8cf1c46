//! The Events API over HTTP, for a Slack app without Socket Mode: a listener Slack POSTs to.
//! Every request must be signed with the signing secret (`X-Slack-Signature` =
//! `v0=<hex HMAC-SHA256 of "v0:<X-Slack-Request-Timestamp>:<body>">`, compared in constant
//! time) and stamped within five minutes of now, else 401. `url_verification` is answered with
//! its challenge; an event callback (JSON), an interaction (a form's `payload`) or a slash
//! command (a form) is queued and answered 200 only once stored, so Slack retries what the
//! daemon did not keep (`X-Slack-Retry-Num`: the retry's update is the same, which the store
//! takes once); a full queue or a failed store answers 503 for the same reason.

use std::sync::Arc;

use axum::{
    Router,
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::post,
};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::gateway::{adapter::PlatformError, secret};

/// Deliveries waiting to be taken.
const QUEUE: usize = 256;
/// Largest request accepted.
const MAX_BODY: usize = 1 << 20;
/// How far a request's timestamp may be from now.
pub const WINDOW_SECS: i64 = 300;

/// One delivery: its kind (as Socket Mode names them), payload, and the store's word.
pub type Delivery = (String, Value, oneshot::Sender<()>);

/// The running listener's queue.
pub struct Receiver {
    pub rx: mpsc::Receiver<Delivery>,
}

struct Shared {
    tx: mpsc::Sender<Delivery>,
    secret: String,
}

impl Receiver {
    /// Listen on `listen` (`host:port`) for requests signed with `secret`.
    pub async fn start(listen: &str, secret: &str) -> Result<Self, PlatformError> {
        if secret.is_empty() {
            return Err(PlatformError::Fatal(
                "Slack needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (the Events API)"
                    .into(),
            ));
        }
        let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| {
            PlatformError::Unavailable(format!("cannot listen for Slack's events on {listen}: {e}"))
        })?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let shared = Arc::new(Shared {
            tx,
            secret: secret.to_string(),
        });
        let app = Router::new()
            .fallback(post(deliver))
            .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
            .with_state(shared);
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "slack: the Events API listener stopped");
            }
        });
        tracing::info!(%listen, "slack: Events API listener started");
        Ok(Self { rx })
    }
}

/// Whether `headers` sign `body` with `secret` at a time within the window of `now`.
pub fn signed(headers: &HeaderMap, body: &[u8], secret: &str, now: i64) -> bool {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .unwrap_or_default()
    };
    let stamp = header("x-slack-request-timestamp");
    let Ok(at) = stamp.parse::<i64>() else {
        return false;
    };
    if (now - at).abs() > WINDOW_SECS {
        return false;
    }
    let Some(given) = header("x-slack-signature").strip_prefix("v0=") else {
        return false;
    };
    let mut base = format!("v0:{stamp}:").into_bytes();
    base.extend_from_slice(body);
    secret::hmac_matches(secret.as_bytes(), &base, given)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

async fn deliver(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if !signed(&headers, &body, &shared.secret, now()) {
        return (StatusCode::UNAUTHORIZED, "invalid signature").into_response();
    }
    let form = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    let (kind, payload) = if form {
        let fields = form_fields(&body);
        match fields.get("payload").and_then(Value::as_str) {
            Some(raw) => match serde_json::from_str::<Value>(raw) {
                Ok(payload) => ("interactive", payload),
                Err(_) => return StatusCode::BAD_REQUEST.into_response(),
            },
            None if fields.contains_key("command") => ("slash_commands", Value::Object(fields)),
            None => return StatusCode::BAD_REQUEST.into_response(),
        }
    } else {
        let Ok(payload) = serde_json::from_slice::<Value>(&body) else {
            return StatusCode::BAD_REQUEST.into_response();
        };
        if payload["type"] == "url_verification" {
            let challenge = payload["challenge"].as_str().unwrap_or_default();
            return axum::Json(json!({"challenge": challenge})).into_response();
        }
        ("events_api", payload)
    };
    let (ack, stored) = oneshot::channel();
    if shared
        .tx
        .try_send((kind.to_string(), payload, ack))
        .is_err()
    {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    match stored.await {
        Ok(()) => StatusCode::OK.into_response(),
        // Not stored (the daemon is stopping, the store failed): Slack retries.
        Err(_) => StatusCode::SERVICE_UNAVAILABLE.into_response(),
    }
}

/// A form body's fields, as strings.
fn form_fields(body: &[u8]) -> Map<String, Value> {
    let mut fields = Map::new();
    for pair in body.split(|b| *b == b'&').filter(|p| !p.is_empty()) {
        let mut halves = pair.splitn(2, |b| *b == b'=');
        let key = decode(halves.next().unwrap_or_default());
        let value = decode(halves.next().unwrap_or_default());
        fields.insert(key, Value::String(value));
    }
    fields
}

fn decode(raw: &[u8]) -> String {
    let spaced: Vec<u8> = raw
        .iter()
        .map(|b| if *b == b'+' { b' ' } else { *b })
        .collect();
    percent_encoding::percent_decode(&spaced)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(stamp: i64, signature: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            "x-slack-request-timestamp",
            stamp.to_string().parse().unwrap(),
        );
        h.insert("x-slack-signature", signature.parse().unwrap());
        h
    }

    #[test]
    fn a_signature_must_match_and_be_recent() {
        let body = br#"{"type":"event_callback"}"#;
        let at = 1_700_000_000;
        let mut base = format!("v0:{at}:").into_bytes();
        base.extend_from_slice(body);
        let good = format!("v0={}", secret::hmac_hex(b"shh", &base));
        assert!(signed(&headers(at, &good), body, "shh", at + 10));
        assert!(!signed(&headers(at, &good), body, "other", at));
        assert!(!signed(&headers(at, &good), b"{}", "shh", at));
        assert!(!signed(&headers(at, &good), body, "shh", at + 301), "stale");
        assert!(
            !signed(&headers(at, &good), body, "shh", at - 301),
            "from the future"
        );
        assert!(!signed(&headers(at, &good[3..]), body, "shh", at), "no v0=");
        assert!(!signed(&HeaderMap::new(), body, "shh", at));
    }

    #[test]
    fn forms_are_read() {
        let fields = form_fields(b"command=%2Fhermes&text=new+chat&payload=");
        assert_eq!(fields["command"], "/hermes");
        assert_eq!(fields["text"], "new chat");
    }
}
