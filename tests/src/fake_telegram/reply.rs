//! Telegram's answer envelope: `{"ok":true,"result":…}` or
//! `{"ok":false,"error_code":N,"description":"…","parameters":{…}}` with the HTTP status equal to
//! `error_code`, a `Retry-After` header beside `retry_after`, and the faults' canned answers.

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

use super::Fault;

/// What a method answers.
pub(super) type Outcome = Result<Answer, ApiError>;

/// A successful answer; a few methods (the webhook ones) add a `description`.
#[derive(Debug)]
pub(super) struct Answer {
    pub(super) result: Value,
    pub(super) description: Option<&'static str>,
}

impl Answer {
    pub(super) fn new(result: Value) -> Self {
        Self {
            result,
            description: None,
        }
    }

    pub(super) fn described(result: Value, description: &'static str) -> Self {
        Self {
            result,
            description: Some(description),
        }
    }
}

/// A failed answer.
#[derive(Debug)]
pub(super) struct ApiError {
    pub(super) code: u16,
    pub(super) description: String,
    pub(super) parameters: Option<Value>,
    /// An HTML page instead of the JSON envelope (the front proxy's error pages).
    pub(super) html: bool,
}

impl ApiError {
    pub(super) fn new(code: u16, description: impl Into<String>) -> Self {
        Self {
            code,
            description: description.into(),
            parameters: None,
            html: false,
        }
    }

    /// 400 `Bad Request: <what>`.
    pub(super) fn bad(what: impl AsRef<str>) -> Self {
        Self::new(400, format!("Bad Request: {}", what.as_ref()))
    }

    pub(super) fn unauthorized() -> Self {
        Self::new(401, "Unauthorized")
    }

    pub(super) fn not_found() -> Self {
        Self::new(404, "Not Found")
    }

    pub(super) fn conflict(description: &str) -> Self {
        Self::new(409, description)
    }

    pub(super) fn too_many_requests(retry_after: u32) -> Self {
        let mut error = Self::new(429, format!("Too Many Requests: retry after {retry_after}"));
        error.parameters = Some(json!({"retry_after": retry_after}));
        error
    }

    /// What a request held open gets when the server shuts down (the real server's answer).
    pub(super) fn closing() -> Self {
        Self::new(500, "Internal Server Error: restart")
    }

    /// The canned answer of a fault that answers (not `Hang` or `DeliverThenHang`).
    pub(super) fn from_fault(fault: &Fault) -> Self {
        match fault {
            Fault::TooManyRequests { retry_after } => Self::too_many_requests(*retry_after),
            Fault::Server(code) => Self::new(*code, reason(*code)),
            Fault::Html(code) => Self {
                html: true,
                ..Self::new(*code, reason(*code))
            },
            Fault::Unauthorized => Self::unauthorized(),
            Fault::Forbidden(text) => Self::new(403, prefixed("Forbidden", text)),
            Fault::BadRequest(text) => Self::new(400, prefixed("Bad Request", text)),
            Fault::MigrateToChat(chat_id) => {
                let mut error = Self::bad("group chat was upgraded to a supergroup chat");
                error.parameters = Some(json!({"migrate_to_chat_id": chat_id}));
                error
            }
            Fault::Hang | Fault::DeliverThenHang | Fault::DeliverThenHold => {
                Self::new(500, "Internal Server Error")
            }
        }
    }

    /// The HTTP status of this error.
    pub(super) fn status(&self) -> u16 {
        self.code
    }
}

/// `prefix: text` unless `text` already starts with `prefix`.
fn prefixed(prefix: &str, text: &str) -> String {
    if text.starts_with(prefix) {
        text.to_owned()
    } else {
        format!("{prefix}: {text}")
    }
}

/// The reason phrase Telegram's errors use for a status.
fn reason(code: u16) -> String {
    match code {
        500 => "Internal Server Error".to_owned(),
        502 => "Bad Gateway".to_owned(),
        503 => "Service Unavailable".to_owned(),
        504 => "Gateway Timeout".to_owned(),
        other => StatusCode::from_u16(other)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("Error")
            .to_owned(),
    }
}

/// The HTTP status of an outcome.
pub(super) fn status_of(outcome: &Outcome) -> u16 {
    match outcome {
        Ok(_) => 200,
        Err(error) => error.status(),
    }
}

/// The HTTP response of an outcome.
pub(super) fn respond(outcome: Outcome) -> Response {
    match outcome {
        Ok(answer) => {
            let mut body = json!({"ok": true, "result": answer.result});
            if let Some(description) = answer.description {
                body["description"] = description.into();
            }
            json_response(StatusCode::OK, &body)
        }
        Err(error) => error_response(error),
    }
}

fn error_response(error: ApiError) -> Response {
    let status = StatusCode::from_u16(error.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if error.html {
        let title = format!("{} {}", error.code, error.description);
        let page = format!(
            "<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1>\
             </center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n</html>\r\n"
        );
        return (status, [(header::CONTENT_TYPE, "text/html")], page).into_response();
    }
    let mut body = json!({
        "ok": false,
        "error_code": error.code,
        "description": error.description,
    });
    let retry_after = error
        .parameters
        .as_ref()
        .and_then(|p| p["retry_after"].as_u64());
    if let Some(parameters) = error.parameters {
        body["parameters"] = parameters;
    }
    let mut response = json_response(status, &body);
    if let Some(seconds) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let headers = [(header::CONTENT_TYPE, "application/json")];
    (status, headers, body.to_string()).into_response()
}
