//! Errors in OpenAI's shape (`{"error": {"message", "type", "param", "code"}}`) with their
//! status, and the one way a request body is read: at most [`MAX_BODY`] bytes (Hermes' limit),
//! then parsed as a JSON object, each failure a 4xx naming what is wrong.

use axum::{
    Json,
    body::Body,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::{Map, Value, json};

/// Largest request body accepted (Hermes' `MAX_REQUEST_BYTES`).
pub const MAX_BODY: usize = 10_000_000;

/// A request that cannot be served.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub kind: &'static str,
    pub param: Option<String>,
    pub code: Option<&'static str>,
    pub retry_after: bool,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            kind: "invalid_request_error",
            param: None,
            code: None,
            retry_after: false,
        }
    }

    pub fn bad(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// A 400 about one field of the body.
    pub fn field(param: &str, message: impl Into<String>) -> Self {
        Self {
            param: Some(param.to_string()),
            ..Self::bad(message)
        }
    }

    pub fn not_found(message: impl Into<String>, code: &'static str) -> Self {
        Self {
            code: Some(code),
            ..Self::new(StatusCode::NOT_FOUND, message)
        }
    }

    pub fn unauthorized() -> Self {
        Self {
            kind: "invalid_request_error",
            code: Some("invalid_api_key"),
            ..Self::new(StatusCode::UNAUTHORIZED, "Invalid API key")
        }
    }

    /// A client that is one of the agent's own processes: the API is the owner's.
    pub fn agent_process() -> Self {
        Self {
            kind: "permission_error",
            code: Some("agent_process"),
            ..Self::new(
                StatusCode::FORBIDDEN,
                "this connection comes from a process hermesd started for the agent; the API \
                 server is the owner's",
            )
        }
    }

    pub fn busy(limit: usize) -> Self {
        Self {
            kind: "rate_limit_error",
            code: Some("too_many_concurrent_runs"),
            retry_after: true,
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!("Too many concurrent runs (limit {limit}); retry shortly."),
            )
        }
    }

    pub fn draining() -> Self {
        Self {
            kind: "server_error",
            code: Some("gateway_draining"),
            retry_after: true,
            ..Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "Gateway is draining existing work; retry shortly.",
            )
        }
    }

    pub fn server(message: impl Into<String>) -> Self {
        Self {
            kind: "server_error",
            ..Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
        }
    }

    pub fn body(&self) -> Value {
        json!({"error": {
            "message": self.message,
            "type": self.kind,
            "param": self.param,
            "code": self.code,
        }})
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body())).into_response();
        if self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

/// The request's body as a JSON object: 413 past [`MAX_BODY`] (by `Content-Length` before
/// reading, and while reading), 400 for anything that is not a JSON object.
pub async fn json_object(headers: &HeaderMap, body: Body) -> Result<Map<String, Value>, ApiError> {
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Request body too large (limit {MAX_BODY} bytes)"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| too_large())?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::bad("Request body must be a JSON object")),
        Err(e) => Err(ApiError::bad(format!("Invalid JSON in request body: {e}"))),
    }
}
