//! The Bot API client: frankenstein's typed methods (`AsyncTelegramApi`) carried by the daemon's
//! own HTTP client. Requests go to `{base_url}{token}/{method}` as JSON; the envelope's
//! `ok: false` becomes a classified [`PlatformError`] (401 fatal, 409 conflict, 429 with its
//! `retry_after`, "can't parse entities" bad markup, "message is not modified" not an error).
//! The token is never part of an error or a log line.

use std::{path::PathBuf, time::Duration};

use frankenstein::response::ErrorResponse;
use serde::de::DeserializeOwned;

use crate::{gateway::adapter::PlatformError, llm::HttpClient};

/// Longest wait for a plain call's answer (a long poll adds its own timeout).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(20);

/// A bot's connection to the Bot API.
pub struct BotApi {
    client: HttpClient,
    base_url: String,
    file_base_url: String,
    token: String,
    /// How long the next call may take (a long poll sets it for itself).
    timeout: Duration,
}

impl std::fmt::Debug for BotApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotApi")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl BotApi {
    pub fn new(client: HttpClient, base_url: &str, file_base_url: &str, token: &str) -> Self {
        Self {
            client,
            base_url: base_url.to_string(),
            file_base_url: file_base_url.to_string(),
            token: token.to_string(),
            timeout: CALL_TIMEOUT,
        }
    }

    /// The same bot with calls allowed `timeout` (for the long poll).
    pub fn with_timeout(&self, timeout: Duration) -> Self {
        Self {
            client: self.client.clone(),
            base_url: self.base_url.clone(),
            file_base_url: self.file_base_url.clone(),
            token: self.token.clone(),
            timeout,
        }
    }

    /// `text` with the token replaced (an error message from below may quote the URL).
    fn masked(&self, text: &str) -> String {
        if self.token.is_empty() {
            text.to_string()
        } else {
            text.replace(&self.token, "<token>")
        }
    }

    fn unavailable(&self, method: &str, e: impl std::fmt::Display) -> PlatformError {
        PlatformError::Unavailable(self.masked(&format!("{method}: {e}")))
    }

    /// Download `file_path` (from `getFile`), at most `max_bytes`.
    pub async fn download(
        &self,
        file_path: &str,
        max_bytes: u64,
    ) -> Result<Vec<u8>, PlatformError> {
        let url = format!("{}{}/{}", self.file_base_url, self.token, file_path);
        let call = async {
            let response = self
                .client
                .get(url)
                .send()
                .await
                .map_err(|e| self.unavailable("download", e))?;
            if !response.status().is_success() {
                return Err(PlatformError::Rejected(format!(
                    "download: HTTP {}",
                    response.status()
                )));
            }
            let mut body = response.into_stream();
            let mut bytes = Vec::new();
            use futures_util::StreamExt;
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(|e| self.unavailable("download", e))?;
                if (bytes.len() + chunk.len()) as u64 > max_bytes {
                    return Err(PlatformError::Rejected(format!(
                        "the file is larger than {max_bytes} bytes"
                    )));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(bytes)
        };
        tokio::time::timeout(Duration::from_secs(120), call)
            .await
            .map_err(|_| PlatformError::NoAnswer)?
    }
}

impl BotApi {
    /// Upload a file with `method` (`sendVoice`, `sendAudio`, `sendDocument`) as the form field
    /// `field`, beside the text `fields`; returns the sent message's id.
    pub async fn upload(
        &self,
        method: &str,
        fields: &[(&str, String)],
        field: &str,
        file_name: &str,
        bytes: &[u8],
    ) -> Result<String, PlatformError> {
        let mut form = crate::voice::multipart::Form::new();
        for (name, value) in fields {
            form.text(name, value);
        }
        form.file(field, file_name, crate::voice::mime_of(file_name), bytes);
        let (body, content_type) = form.finish();
        let url = format!("{}{}/{}", self.base_url, self.token, method);
        let call = async {
            let response = self
                .client
                .post(url)
                .body(body, &content_type)
                .send()
                .await
                .map_err(|e| {
                    if e.kind == crate::llm::TransportKind::Connect {
                        self.unavailable(method, &e)
                    } else {
                        PlatformError::NoAnswer
                    }
                })?;
            let status = response.status();
            let text = response.text().await.map_err(|_| PlatformError::NoAnswer)?;
            let sent: frankenstein::response::MethodResponse<frankenstein::types::Message> =
                parse_envelope(method, status.as_u16(), &text)?;
            Ok(sent.result.message_id.to_string())
        };
        // An upload of up to 50 MB gets longer than a plain call.
        tokio::time::timeout(Duration::from_secs(120), call)
            .await
            .map_err(|_| PlatformError::NoAnswer)?
    }
}

/// The error an `ok: false` envelope stands for.
pub fn classify(method: &str, error: &ErrorResponse) -> PlatformError {
    let description = error.description.clone();
    let lower = description.to_lowercase();
    match error.error_code {
        401 => PlatformError::Fatal(format!("{method}: {description}")),
        409 => PlatformError::Conflict(format!("{method}: {description}")),
        429 => PlatformError::RateLimited(Duration::from_secs(
            error
                .parameters
                .and_then(|p| p.retry_after)
                .map_or(5, u64::from),
        )),
        400 if lower.contains("message is not modified") => PlatformError::NotModified,
        400 if lower.contains("can't parse entities") || lower.contains("can't find end") => {
            PlatformError::BadMarkup(description)
        }
        code if code >= 500 => PlatformError::Unavailable(format!("{method}: {description}")),
        _ => PlatformError::Rejected(format!("{method}: {description}")),
    }
}

#[async_trait::async_trait]
impl frankenstein::AsyncTelegramApi for BotApi {
    type Error = PlatformError;

    async fn request<Params, Output>(
        &self,
        method: &str,
        params: Option<Params>,
    ) -> Result<Output, Self::Error>
    where
        Params: serde::ser::Serialize + std::fmt::Debug + std::marker::Send,
        Output: DeserializeOwned,
    {
        let url = format!("{}{}/{}", self.base_url, self.token, method);
        let body = match &params {
            Some(params) => serde_json::to_value(params)
                .map_err(|e| PlatformError::Rejected(format!("{method}: {e}")))?,
            None => serde_json::Value::Object(serde_json::Map::new()),
        };
        let call = async {
            let response = self
                .client
                .post(url)
                .json(&body)
                .send()
                .await
                .map_err(|e| {
                    if e.kind == crate::llm::TransportKind::Connect {
                        self.unavailable(method, &e)
                    } else {
                        // The request may have reached the platform.
                        tracing::debug!(method, error = %self.masked(&e.to_string()), "no answer");
                        PlatformError::NoAnswer
                    }
                })?;
            let status = response.status();
            let text = response.text().await.map_err(|_| PlatformError::NoAnswer)?;
            parse_envelope(method, status.as_u16(), &text)
        };
        tokio::time::timeout(self.timeout, call)
            .await
            .map_err(|_| PlatformError::NoAnswer)?
    }

    async fn request_with_form_data<Params, Output>(
        &self,
        method: &str,
        _params: Params,
        _files: Vec<(&str, PathBuf)>,
    ) -> Result<Output, Self::Error>
    where
        Params: serde::ser::Serialize + std::fmt::Debug + std::marker::Send,
        Output: DeserializeOwned,
    {
        Err(PlatformError::Rejected(format!(
            "{method}: uploading files is not supported by hermesd's gateway yet"
        )))
    }
}

/// The result of a Bot API answer, or its classified error.
fn parse_envelope<Output: DeserializeOwned>(
    method: &str,
    status: u16,
    text: &str,
) -> Result<Output, PlatformError> {
    if let Ok(error) = serde_json::from_str::<ErrorResponse>(text)
        && !error.ok
    {
        return Err(classify(method, &error));
    }
    if !(200..300).contains(&status) {
        let what = format!("{method}: HTTP {status}");
        return Err(match status {
            401 => PlatformError::Fatal(what),
            409 => PlatformError::Conflict(what),
            s if s >= 500 => PlatformError::Unavailable(what),
            _ => PlatformError::Rejected(what),
        });
    }
    serde_json::from_str(text).map_err(|e| {
        PlatformError::Unavailable(format!(
            "{method}: the answer is not what the Bot API sends ({e})"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_are_classified() {
        let e = |code: u16, body: &str| {
            parse_envelope::<serde_json::Value>("m", code, body).unwrap_err()
        };
        assert!(matches!(
            e(
                401,
                r#"{"ok":false,"error_code":401,"description":"Unauthorized"}"#
            ),
            PlatformError::Fatal(_)
        ));
        assert!(matches!(
            e(
                409,
                r#"{"ok":false,"error_code":409,"description":"Conflict: terminated by other getUpdates request"}"#
            ),
            PlatformError::Conflict(_)
        ));
        assert_eq!(
            e(
                429,
                r#"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}"#
            ),
            PlatformError::RateLimited(Duration::from_secs(7))
        );
        assert_eq!(
            e(
                400,
                r#"{"ok":false,"error_code":400,"description":"Bad Request: message is not modified: specified new message content"}"#
            ),
            PlatformError::NotModified
        );
        assert!(matches!(
            e(
                400,
                r#"{"ok":false,"error_code":400,"description":"Bad Request: can't parse entities: Unsupported start tag"}"#
            ),
            PlatformError::BadMarkup(_)
        ));
        assert!(matches!(
            e(502, "<html>Bad Gateway</html>"),
            PlatformError::Unavailable(_)
        ));
        let ok: frankenstein::response::MethodResponse<bool> =
            parse_envelope("m", 200, r#"{"ok":true,"result":true}"#).unwrap();
        assert!(ok.result);
    }
}
