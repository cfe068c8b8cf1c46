//! Discord's REST API through the daemon's HTTP client: `Authorization: Bot <token>` on calls to
//! `api_base` (never on a download from the CDN), each call waiting for its rate-limit bucket
//! (`limits.rs`) and a 429 waited out and retried a few times before it is reported as
//! [`PlatformError::RateLimited`]. Answers are classified: 401 fatal, 5xx unavailable, other 4xx
//! refused with Discord's message; a call sent but not answered is `NoAnswer`. The token and
//! interaction tokens are never part of an error or a log line.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::Mutex;

use super::limits::{self, Headers, Limits};
use crate::{
    gateway::adapter::PlatformError,
    llm::{HttpClient, HttpRequest, TransportKind},
};

/// Longest wait for a plain call's answer.
const CALL_TIMEOUT: Duration = Duration::from_secs(20);
/// An upload or a download gets longer.
const FILE_TIMEOUT: Duration = Duration::from_secs(120);
/// How many 429s a call waits out before giving up.
const MAX_RETRIES: u32 = 3;
/// A 429 asking for longer than this is reported, not waited out.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// An HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    Post,
    Patch,
    Put,
}

impl Verb {
    fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Patch => "PATCH",
            Self::Put => "PUT",
        }
    }
}

/// A request's body.
#[derive(Debug, Clone)]
pub enum Body {
    None,
    Json(Value),
    /// A multipart form and its content type.
    Form(bytes::Bytes, String),
}

/// The REST API of one bot.
pub struct Rest {
    client: HttpClient,
    base: String,
    token: String,
    limits: Mutex<Limits>,
}

impl std::fmt::Debug for Rest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rest")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl Rest {
    pub fn new(client: HttpClient, base: &str, token: &str) -> Self {
        Self {
            client,
            base: base.trim_end_matches('/').to_string(),
            token: token.to_string(),
            limits: Mutex::new(Limits::default()),
        }
    }

    /// Call `path` (from `/`), waiting for its bucket; the answer's JSON (`Null` for 204).
    pub async fn call(&self, verb: Verb, path: &str, body: Body) -> Result<Value, PlatformError> {
        let (route, major) = limits::route(verb.as_str(), path);
        let timeout = match body {
            Body::Form(..) => FILE_TIMEOUT,
            _ => CALL_TIMEOUT,
        };
        let mut attempt = 0;
        loop {
            self.wait_turn(&route, &major).await;
            let request = self.request(verb, path, &body);
            let sent = tokio::time::timeout(timeout, async {
                let response = request.send().await.map_err(|e| {
                    if e.kind == TransportKind::Connect {
                        PlatformError::Unavailable(format!("{route}: {e}"))
                    } else {
                        tracing::debug!(%route, error = %e, "discord: no answer");
                        PlatformError::NoAnswer
                    }
                })?;
                let status = response.status().as_u16();
                let headers = Headers::parse(response.headers());
                let retry_header = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(limits::seconds);
                let text = response.text().await.map_err(|_| PlatformError::NoAnswer)?;
                Ok::<_, PlatformError>((status, headers, retry_header, text))
            })
            .await
            .map_err(|_| PlatformError::NoAnswer)??;
            let (status, headers, retry_header, text) = sent;
            let now = tokio::time::Instant::now();
            self.limits
                .lock()
                .await
                .learn(&route, &major, &headers, now);
            if status == 429 {
                let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let wait = json["retry_after"]
                    .as_f64()
                    .and_then(|s| limits::seconds(&s.to_string()))
                    .or(retry_header)
                    .unwrap_or(Duration::from_secs(1));
                let global = headers.global || json["global"].as_bool() == Some(true);
                self.limits
                    .lock()
                    .await
                    .limited(&route, &major, wait, global, now);
                tracing::info!(%route, wait_ms = wait.as_millis() as u64, global, "discord: rate limited");
                attempt += 1;
                if attempt > MAX_RETRIES || wait > MAX_WAIT {
                    return Err(PlatformError::RateLimited(wait));
                }
                continue;
            }
            return answer(&route, status, &text);
        }
    }

    /// Wait until the bucket of `route` lets a request go.
    async fn wait_turn(&self, route: &str, major: &str) {
        loop {
            let now = tokio::time::Instant::now();
            let until = self.limits.lock().await.acquire(route, major, now);
            match until {
                None => return,
                Some(until) => tokio::time::sleep_until(until).await,
            }
        }
    }

    fn request(&self, verb: Verb, path: &str, body: &Body) -> HttpRequest {
        let url = format!("{}{path}", self.base);
        let request = match verb {
            Verb::Get => self.client.get(url),
            Verb::Post => self.client.post(url),
            Verb::Patch => self.client.patch(url),
            Verb::Put => self.client.put(url),
        };
        let request = request.header("authorization", &format!("Bot {}", self.token));
        match body {
            Body::None => request,
            Body::Json(json) => request.json(json),
            Body::Form(bytes, content_type) => request.body(bytes.clone(), content_type),
        }
    }

    /// Download `url` (an attachment on Discord's CDN: no credentials), at most `max_bytes`.
    pub async fn download(&self, url: &str, max_bytes: u64) -> Result<Vec<u8>, PlatformError> {
        let call = async {
            let response = self.client.get(url).send().await.map_err(|e| {
                PlatformError::Unavailable(format!("the attachment download failed: {e}"))
            })?;
            if !response.status().is_success() {
                return Err(PlatformError::Rejected(format!(
                    "the attachment download answered HTTP {}",
                    response.status()
                )));
            }
            let mut body = response.into_stream();
            let mut bytes = Vec::new();
            use futures_util::StreamExt;
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(|e| {
                    PlatformError::Unavailable(format!("the attachment download broke: {e}"))
                })?;
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

/// The result of an answer with `status` and body `text`, classified.
fn answer(route: &str, status: u16, text: &str) -> Result<Value, PlatformError> {
    if (200..300).contains(&status) {
        if text.trim().is_empty() {
            return Ok(Value::Null);
        }
        return serde_json::from_str(text).map_err(|e| {
            PlatformError::Unavailable(format!("{route}: the answer is not JSON ({e})"))
        });
    }
    let json: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let message = json["message"].as_str().unwrap_or_default();
    let code = json["code"].as_i64().unwrap_or(0);
    let what = if message.is_empty() {
        format!("{route}: HTTP {status}")
    } else {
        format!("{route}: HTTP {status}: {message} ({code})")
    };
    Err(match status {
        401 => PlatformError::Fatal(what),
        s if s >= 500 => PlatformError::Unavailable(what),
        _ => PlatformError::Rejected(what),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_classified() {
        assert_eq!(answer("r", 204, "").unwrap(), Value::Null);
        assert_eq!(answer("r", 200, r#"{"id":"1"}"#).unwrap()["id"], "1");
        assert!(matches!(
            answer("r", 401, r#"{"message": "401: Unauthorized", "code": 0}"#),
            Err(PlatformError::Fatal(_))
        ));
        let refused = answer(
            "POST /channels/1/messages",
            403,
            r#"{"message": "Missing Permissions", "code": 50013}"#,
        );
        match refused {
            Err(PlatformError::Rejected(why)) => {
                assert!(
                    why.contains("Missing Permissions") && why.contains("50013"),
                    "{why}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            answer("r", 502, "<html>"),
            Err(PlatformError::Unavailable(_))
        ));
    }
}
