//! Slack's Web API over the daemon's HTTP client: `POST {api_base}/{method}` with the token as
//! a bearer and the arguments as JSON or a form, paced by the method's tier (`limits.rs`), and
//! Slack's envelope read into a classified [`PlatformError`]: a refused token fatal, a 429 (or
//! `ratelimited`) rate limited for its `Retry-After` (and the tier held back that long), a 5xx
//! or Slack's own failures unavailable, a request that got no answer `NoAnswer`, the rest
//! refused. Also the two plain HTTP legs of files: the upload of bytes to the URL
//! `files.getUploadURLExternal` handed out, and a private file's download with the bot token.
//! No token is ever part of an error or a log line.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;

use super::limits::Limits;
use crate::{
    gateway::adapter::PlatformError,
    llm::{HttpClient, TransportKind},
};

/// Longest wait for a call's answer.
const CALL_TIMEOUT: Duration = Duration::from_secs(20);
/// Longest wait for a file's upload or download.
const FILE_TIMEOUT: Duration = Duration::from_secs(120);

/// A call's arguments.
pub enum Args<'a> {
    None,
    Json(&'a Value),
    Form(&'a [(&'a str, String)]),
}

/// The Web API of one Slack (all workspaces share it; each call names its token).
pub struct WebApi {
    client: HttpClient,
    base: String,
    limits: Limits,
}

impl std::fmt::Debug for WebApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebApi")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl WebApi {
    /// The Web API at `base`; `pace` paces calls by Slack's tiers before Slack asks to.
    pub fn new(client: HttpClient, base: &str, pace: bool) -> Self {
        Self {
            client,
            base: base.trim_end_matches('/').to_string(),
            limits: Limits::new(pace),
        }
    }

    /// Call `method` with `token`; `pace` names what its tier is counted per (the workspace,
    /// and for posts the channel). Returns the answer's fields.
    pub async fn call(
        &self,
        method: &str,
        token: &str,
        pace: &str,
        args: Args<'_>,
    ) -> Result<Value, PlatformError> {
        let key = format!("{pace}:{method}");
        self.limits.acquire(&key, method).await?;
        let url = format!("{}/{method}", self.base);
        let request = self.client.post(url).bearer_auth(token);
        let request = match args {
            Args::None => request,
            Args::Json(body) => request.json(body),
            Args::Form(fields) => request.body(form(fields), "application/x-www-form-urlencoded"),
        };
        let call = async {
            let response = request.send().await.map_err(|e| {
                if e.kind == TransportKind::Connect {
                    PlatformError::Unavailable(format!("{method}: {}", e.message))
                } else {
                    tracing::debug!(method, error = %e.message, "slack: no answer");
                    PlatformError::NoAnswer
                }
            })?;
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            let text = response.text().await.map_err(|_| PlatformError::NoAnswer)?;
            Ok::<_, PlatformError>((status, retry_after, text))
        };
        let (status, retry_after, text) = tokio::time::timeout(CALL_TIMEOUT, call)
            .await
            .map_err(|_| PlatformError::NoAnswer)??;
        let result = read_envelope(method, status, retry_after, &text);
        if let Err(PlatformError::RateLimited(wait)) = &result {
            tracing::info!(method, wait_s = wait.as_secs(), "slack: rate limited");
            self.limits.block(&key, *wait);
        }
        result
    }

    /// POST `bytes` to an upload URL from `files.getUploadURLExternal`.
    pub async fn upload(&self, url: &str, bytes: Vec<u8>) -> Result<(), PlatformError> {
        let call = async {
            let response = self
                .client
                .post(url)
                .body(bytes, "application/octet-stream")
                .send()
                .await
                .map_err(|e| PlatformError::Unavailable(format!("the upload: {}", e.message)))?;
            let status = response.status();
            if !status.is_success() {
                return Err(PlatformError::Rejected(format!(
                    "the upload: HTTP {status}"
                )));
            }
            Ok(())
        };
        tokio::time::timeout(FILE_TIMEOUT, call)
            .await
            .map_err(|_| PlatformError::NoAnswer)?
    }

    /// GET a private file with `token`, at most `max_bytes`. Slack answers a request it does
    /// not authorise with its sign-in page: HTML is refused, not taken for the file.
    pub async fn download(
        &self,
        url: &str,
        token: &str,
        max_bytes: u64,
    ) -> Result<Vec<u8>, PlatformError> {
        let call = async {
            let response = self
                .client
                .get(url)
                .bearer_auth(token)
                .send()
                .await
                .map_err(|e| PlatformError::Unavailable(format!("the download: {}", e.message)))?;
            if !response.status().is_success() {
                return Err(PlatformError::Rejected(format!(
                    "the download: HTTP {}",
                    response.status()
                )));
            }
            let html = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/html"));
            if html {
                return Err(PlatformError::Rejected(
                    "Slack answered with a web page instead of the file (check the bot's files:read scope)"
                        .into(),
                ));
            }
            let mut body = response.into_stream();
            let mut bytes = Vec::new();
            while let Some(chunk) = body.next().await {
                let chunk =
                    chunk.map_err(|e| PlatformError::Unavailable(format!("the download: {e}")))?;
                if (bytes.len() + chunk.len()) as u64 > max_bytes {
                    return Err(PlatformError::Rejected(format!(
                        "the file is larger than {max_bytes} bytes"
                    )));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(bytes)
        };
        tokio::time::timeout(FILE_TIMEOUT, call)
            .await
            .map_err(|_| PlatformError::NoAnswer)?
    }
}

/// `fields` as `application/x-www-form-urlencoded`.
fn form(fields: &[(&str, String)]) -> Vec<u8> {
    let mut out = String::new();
    for (i, (name, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(&encode(name));
        out.push('=');
        out.push_str(&encode(value));
    }
    out.into_bytes()
}

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

/// The fields of Slack's answer, or its classified error.
fn read_envelope(
    method: &str,
    status: u16,
    retry_after: Option<u64>,
    text: &str,
) -> Result<Value, PlatformError> {
    if status == 429 {
        return Err(PlatformError::RateLimited(Duration::from_secs(
            retry_after.unwrap_or(1).max(1),
        )));
    }
    if status >= 500 {
        return Err(PlatformError::Unavailable(format!(
            "{method}: HTTP {status}"
        )));
    }
    let body: Value = serde_json::from_str(text).map_err(|_| {
        if (200..300).contains(&status) {
            PlatformError::Unavailable(format!("{method}: the answer is not Slack's JSON"))
        } else {
            PlatformError::Rejected(format!("{method}: HTTP {status}"))
        }
    })?;
    if body["ok"].as_bool() == Some(true) {
        return Ok(body);
    }
    let error = body["error"]
        .as_str()
        .unwrap_or("unknown_error")
        .to_string();
    Err(classify(method, &error, retry_after))
}

/// The error Slack's `error` code stands for.
pub fn classify(method: &str, error: &str, retry_after: Option<u64>) -> PlatformError {
    let what = format!("{method}: {error}");
    match error {
        "invalid_auth"
        | "not_authed"
        | "account_inactive"
        | "token_revoked"
        | "token_expired"
        | "not_allowed_token_type"
        | "invalid_token"
        | "no_permission"
        | "ekm_access_denied" => PlatformError::Fatal(what),
        "ratelimited" | "rate_limited" => {
            PlatformError::RateLimited(Duration::from_secs(retry_after.unwrap_or(1).max(1)))
        }
        "invalid_blocks" | "invalid_blocks_format" => PlatformError::BadMarkup(what),
        "internal_error"
        | "fatal_error"
        | "service_unavailable"
        | "request_timeout"
        | "team_added_to_org" => PlatformError::Unavailable(what),
        _ => PlatformError::Rejected(what),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_classified() {
        let e = |status, retry, body: &str| read_envelope("m", status, retry, body).unwrap_err();
        assert!(matches!(
            e(200, None, r#"{"ok":false,"error":"invalid_auth"}"#),
            PlatformError::Fatal(_)
        ));
        assert_eq!(
            e(429, Some(7), r#"{"ok":false,"error":"ratelimited"}"#),
            PlatformError::RateLimited(Duration::from_secs(7))
        );
        assert!(matches!(
            e(503, None, "down"),
            PlatformError::Unavailable(_)
        ));
        assert!(matches!(
            e(200, None, r#"{"ok":false,"error":"channel_not_found"}"#),
            PlatformError::Rejected(_)
        ));
        assert!(matches!(
            e(200, None, r#"{"ok":false,"error":"invalid_blocks"}"#),
            PlatformError::BadMarkup(_)
        ));
        let ok = read_envelope("m", 200, None, r#"{"ok":true,"ts":"1.2"}"#).unwrap();
        assert_eq!(ok["ts"], "1.2");
        assert_eq!(
            form(&[("a", "x y&z".into()), ("b", "é".into())]),
            b"a=x%20y%26z&b=%C3%A9"
        );
    }
}
