//! Provider errors, classified so that each class has exactly one recovery (see `chain`).

use std::time::Duration;

use super::transport::{TransportError, TransportKind};

/// The kinds of failure a model call can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// 429 or 529: wait (Retry-After or backoff) and retry, then fall back.
    RateLimit,
    /// 401/403: the next credential of the pool, else the next fallback at once.
    Auth,
    /// 402, or a 429 that says the quota or credit is used up: the next credential of the pool,
    /// else the next fallback at once (waiting does not help).
    Billing,
    /// 413: the caller compresses and retries.
    PayloadTooLarge,
    /// The prompt is over the context window: the caller compresses and retries.
    ContextOverflow,
    /// 5xx or a connection failure: backoff, then fall back.
    Server,
    /// The stream broke after it started: retry once without streaming.
    StreamCut,
    /// 400 and other client errors: fail with the provider's message.
    BadRequest,
    /// Nothing arrived for the stale timeout: the next fallback at once.
    Timeout,
}

impl ErrorClass {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RateLimit => "rate_limit",
            Self::Auth => "auth",
            Self::Billing => "billing",
            Self::PayloadTooLarge => "payload_too_large",
            Self::ContextOverflow => "context_overflow",
            Self::Server => "server",
            Self::StreamCut => "stream_interrupted",
            Self::BadRequest => "bad_request",
            Self::Timeout => "timeout",
        }
    }

    /// True when compressing the conversation and retrying is the fix.
    pub fn needs_compression(self) -> bool {
        matches!(self, Self::PayloadTooLarge | Self::ContextOverflow)
    }
}

/// A failed model call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{provider}: {message}")]
pub struct LlmError {
    pub class: ErrorClass,
    /// `provider:model` that failed.
    pub provider: String,
    pub status: Option<u16>,
    pub message: String,
    pub retry_after: Option<Duration>,
}

impl LlmError {
    pub fn new(class: ErrorClass, provider: &str, message: impl Into<String>) -> Self {
        Self {
            class,
            provider: provider.to_string(),
            status: None,
            message: message.into(),
            retry_after: None,
        }
    }
}

const OVERFLOW_MARKERS: &[&str] = &[
    "context_length_exceeded",
    "maximum context length",
    "prompt is too long",
    "context window",
    "too many tokens",
];

/// What a 429 says when waiting will not help (Hermes' billing markers).
const QUOTA_MARKERS: &[&str] = &[
    "insufficient_quota",
    "exceeded your current quota",
    "quota exceeded",
    "billing",
    "insufficient credits",
    "insufficient_credits",
    "usage limit",
    "usage_limit",
    "credit balance",
];

/// Classify an HTTP error response. The message is the provider's own when the body has one.
pub fn classify_http(
    provider: &str,
    status: u16,
    retry_after: Option<&str>,
    body: &str,
) -> LlmError {
    let message = provider_message(body).unwrap_or_else(|| {
        let snippet: String = body.chars().take(300).collect();
        format!("HTTP {status}: {snippet}")
    });
    let lower = body.to_lowercase();
    let class = match status {
        402 => ErrorClass::Billing,
        429 if QUOTA_MARKERS.iter().any(|m| lower.contains(m)) => ErrorClass::Billing,
        429 | 529 => ErrorClass::RateLimit,
        401 | 403 => ErrorClass::Auth,
        413 => ErrorClass::PayloadTooLarge,
        400 | 422 if OVERFLOW_MARKERS.iter().any(|m| lower.contains(m)) => {
            ErrorClass::ContextOverflow
        }
        500..=599 => ErrorClass::Server,
        _ => ErrorClass::BadRequest,
    };
    LlmError {
        class,
        provider: provider.to_string(),
        status: Some(status),
        message,
        retry_after: retry_after.and_then(parse_retry_after),
    }
}

/// `error.message` (OpenAI and Anthropic) or a top-level `message`/`detail`.
fn provider_message(body: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let message = value
        .pointer("/error/message")
        .or_else(|| value.get("message"))
        .or_else(|| value.get("detail"))
        .or_else(|| value.get("error").filter(|e| e.is_string()))?;
    message.as_str().map(str::to_string)
}

/// Retry-After in seconds (HTTP dates are rare from model APIs and are ignored).
fn parse_retry_after(text: &str) -> Option<Duration> {
    let seconds: f64 = text.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(600.0)))
}

/// Classify a transport error: a timeout is a timeout (no retry on the same provider); anything
/// else counts as the server's side (backoff, then the next fallback).
pub fn classify_transport(provider: &str, e: &TransportError) -> LlmError {
    let class = if e.timed_out {
        ErrorClass::Timeout
    } else {
        ErrorClass::Server
    };
    let what = match e.kind {
        TransportKind::Invalid => "cannot make the request",
        TransportKind::Connect if e.timed_out => "cannot connect within model.connect_timeout",
        TransportKind::Connect => "cannot connect",
        TransportKind::Request | TransportKind::Body if e.timed_out => "timed out",
        TransportKind::Request | TransportKind::Body => "request failed",
        TransportKind::Refused => "refused by the URL rule",
    };
    LlmError::new(class, provider, format!("{what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_by_status_and_body() {
        let c = |status, body: &str| classify_http("p:m", status, None, body).class;
        assert_eq!(c(429, ""), ErrorClass::RateLimit);
        assert_eq!(c(529, ""), ErrorClass::RateLimit);
        assert_eq!(c(401, ""), ErrorClass::Auth);
        assert_eq!(c(402, ""), ErrorClass::Billing);
        assert_eq!(
            c(
                429,
                r#"{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}"#
            ),
            ErrorClass::Billing
        );
        assert_eq!(c(413, ""), ErrorClass::PayloadTooLarge);
        assert_eq!(c(503, ""), ErrorClass::Server);
        assert_eq!(
            c(
                400,
                r#"{"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 8192"}}"#
            ),
            ErrorClass::ContextOverflow
        );
        assert_eq!(
            c(
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}"#
            ),
            ErrorClass::ContextOverflow
        );
        assert_eq!(
            c(400, r#"{"error":{"message":"bad tool schema"}}"#),
            ErrorClass::BadRequest
        );
    }

    #[test]
    fn provider_message_and_retry_after() {
        let e = classify_http(
            "p:m",
            429,
            Some("7"),
            r#"{"error":{"message":"slow down"}}"#,
        );
        assert_eq!(e.message, "slow down");
        assert_eq!(e.retry_after, Some(Duration::from_secs(7)));
        let e = classify_http("p:m", 500, Some("soon"), "<html>oops</html>");
        assert_eq!(e.message, "HTTP 500: <html>oops</html>");
        assert_eq!(e.retry_after, None);
    }
}
