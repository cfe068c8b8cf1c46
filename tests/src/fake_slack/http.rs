//! The Events API's side: POSTing a payload to the app's request URL as Slack does, signed with
//! the signing secret (`X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<timestamp>:<body>">`,
//! `X-Slack-Request-Timestamp`), with `X-Slack-Retry-Num` / `X-Slack-Retry-Reason` on a retry.
//! Event callbacks go as JSON; a slash command as a form, an interaction as a form field
//! `payload`, as Slack sends them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::{Request, header};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::TokioExecutor,
};
use serde_json::Value;

use super::FakeSlack;

/// How long a delivery may take before the test fails.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// How a delivery is signed.
#[derive(Debug, Clone)]
pub struct Signing<'a> {
    pub secret: &'a str,
    /// Seconds added to now for the timestamp (negative: an old request).
    pub skew: i64,
    /// `X-Slack-Retry-Num`, when a retry.
    pub retry: Option<u32>,
}

impl<'a> Signing<'a> {
    pub fn new(secret: &'a str) -> Self {
        Self {
            secret,
            skew: 0,
            retry: None,
        }
    }
}

/// What the app answered.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub took: Duration,
}

impl FakeSlack {
    /// POSTs `payload` (an `event_callback` or `url_verification`) as JSON to `url`.
    pub async fn post_event(&self, url: &str, payload: &Value, signing: &Signing<'_>) -> Answer {
        deliver(
            url,
            payload.to_string().into_bytes(),
            "application/json",
            signing,
        )
        .await
    }

    /// POSTs an interaction `payload` as the form field `payload` to `url`.
    pub async fn post_interaction(
        &self,
        url: &str,
        payload: &Value,
        signing: &Signing<'_>,
    ) -> Answer {
        let body = format!("payload={}", encode(&payload.to_string()));
        deliver(
            url,
            body.into_bytes(),
            "application/x-www-form-urlencoded",
            signing,
        )
        .await
    }

    /// POSTs a slash command's fields (`fields`, an object of strings) as a form to `url`.
    pub async fn post_command(&self, url: &str, fields: &Value, signing: &Signing<'_>) -> Answer {
        let body = fields
            .as_object()
            .map(|map| {
                map.iter()
                    .map(|(k, v)| {
                        format!("{}={}", encode(k), encode(v.as_str().unwrap_or_default()))
                    })
                    .collect::<Vec<_>>()
                    .join("&")
            })
            .unwrap_or_default();
        deliver(
            url,
            body.into_bytes(),
            "application/x-www-form-urlencoded",
            signing,
        )
        .await
    }
}

async fn deliver(url: &str, body: Vec<u8>, content_type: &str, signing: &Signing<'_>) -> Answer {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let stamp = (now + signing.skew).to_string();
    let mut base = format!("v0:{stamp}:").into_bytes();
    base.extend_from_slice(&body);
    let signature = format!(
        "v0={}",
        hermesd::gateway::secret::hmac_hex(signing.secret.as_bytes(), &base)
    );
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let mut request = Request::post(url)
        .header(header::CONTENT_TYPE, content_type)
        .header("X-Slack-Request-Timestamp", &stamp)
        .header("X-Slack-Signature", &signature);
    if let Some(retry) = signing.retry {
        request = request
            .header("X-Slack-Retry-Num", retry.to_string())
            .header("X-Slack-Retry-Reason", "http_timeout");
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|e| panic!("fake-slack: request: {e}"));
    let started = std::time::Instant::now();
    let call = async {
        let response = client.request(request).await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok::<_, String>((status, String::from_utf8_lossy(&body).into_owned()))
    };
    match tokio::time::timeout(DELIVERY_TIMEOUT, call).await {
        Ok(Ok((status, body))) => Answer {
            status,
            body,
            took: started.elapsed(),
        },
        Ok(Err(error)) => panic!("fake-slack: POST {url}: {error}"),
        Err(_) => panic!("fake-slack: POST {url}: no answer in {DELIVERY_TIMEOUT:?}"),
    }
}

/// Percent-encoding for a form value.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}
