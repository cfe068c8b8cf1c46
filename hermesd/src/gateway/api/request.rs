//! What a request asks, read the same way on every route: the session it names (by header or
//! by a body's `session_id`), Hermes' session key, the model name it answers under, and a
//! client's instructions put in front of its input.

use axum::http::{HeaderMap, HeaderValue};
use serde_json::{Map, Value};

use super::{ApiError, ApiServer};

/// Longest session id or key a request may carry (Hermes' limit).
const MAX_SESSION_HEADER: usize = 256;

/// `X-Hermes-Session-Id`: absent, or a checked session id.
pub fn session_id(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("x-hermes-session-id") else {
        return Ok(None);
    };
    let value = value
        .to_str()
        .map_err(|_| ApiError::bad("Invalid x-hermes-session-id"))?;
    checked_session_id(value, "x-hermes-session-id")
}

/// A session id a client chose (`what` names where it came from, for the error): blank is none;
/// otherwise no control characters, nothing shaped like a path, at most 256 bytes.
pub fn checked_session_id(value: &str, what: &str) -> Result<Option<String>, ApiError> {
    let value = value.trim();
    if value.is_empty() {
        return Ok(None);
    }
    let unsafe_shape = value.chars().any(char::is_control)
        || value.contains('/')
        || value.contains('\\')
        || value.starts_with('.');
    if unsafe_shape {
        return Err(ApiError::bad(format!("Invalid {what}")));
    }
    if value.len() > MAX_SESSION_HEADER {
        return Err(ApiError::bad(format!("{what} too long")));
    }
    Ok(Some(value.to_string()))
}

/// `X-Hermes-Session-Key`: absent, or checked as Hermes checks it (no control characters, at most
/// 256 bytes). Hermes hands the key to an external long-term memory provider (Honcho) as the
/// channel's scope; hermesd's only provider is the built-in one, whose MEMORY.md and USER.md are
/// one per home in Hermes too, so the key is validated and echoed and scopes nothing else.
pub fn session_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("x-hermes-session-key") else {
        return Ok(None);
    };
    let value = value
        .to_str()
        .map_err(|_| ApiError::bad("Invalid session key"))?
        .trim();
    if value.is_empty() {
        return Ok(None);
    }
    if value.chars().any(char::is_control) {
        return Err(ApiError::bad("Invalid session key"));
    }
    if value.len() > MAX_SESSION_HEADER {
        return Err(ApiError::bad("Session key too long"));
    }
    Ok(Some(value.to_string()))
}

/// Put the session id and key on an answer, as Hermes does on every one.
pub fn echo_session(headers: &mut HeaderMap, session_id: &str, key: Option<&str>) {
    if let Ok(value) = HeaderValue::from_str(session_id) {
        headers.insert("x-hermes-session-id", value);
    }
    if let Some(value) = key.and_then(|k| HeaderValue::from_str(k).ok()) {
        headers.insert("x-hermes-session-key", value);
    }
}

/// The model name an answer carries: the request's, else the configured `API_SERVER_MODEL_NAME`.
pub fn model_name(api: &ApiServer, body: &Map<String, Value>) -> String {
    body.get("model")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .unwrap_or(&api.settings.model_name)
        .to_string()
}

/// `text` with the client's instructions in front of it, marked as theirs; `text` alone when
/// there are none.
pub fn with_instructions(label: &str, instructions: Option<&str>, text: String) -> String {
    match instructions.map(str::trim) {
        Some(instructions) if !instructions.is_empty() => {
            format!("[{label}]\n{instructions}\n\n{text}")
        }
        _ => text,
    }
}
