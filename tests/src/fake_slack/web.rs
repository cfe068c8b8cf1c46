//! The Web API side: `POST /api/{method}` with Slack's envelope (`{"ok": true, …}` or
//! `{"ok": false, "error": "…"}`, HTTP 200), parameters from a JSON body, a form or the query,
//! the token from `Authorization: Bearer` or a `token` parameter; 429 with `Retry-After` for
//! queued faults and, when on, for calls past a method's tier; the upload endpoint
//! `files.getUploadURLExternal` hands out and the private file URLs, which answer an HTML
//! sign-in page to a request without the workspace's bot token, as Slack does.

use std::sync::Arc;

use axum::{
    Router,
    body::Body,
    extract::{Request, State},
    http::{StatusCode, header},
    response::Response,
};
use serde_json::{Map, Value, json};

use super::{
    methods,
    state::{Call, Fault, Shared},
};

/// The largest request body read.
const MAX_BODY: usize = 64 * 1024 * 1024;

pub fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let bearer = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY).await else {
        return plain(StatusCode::PAYLOAD_TOO_LARGE, "too large");
    };
    if let Some(file_id) = path.strip_prefix("/upload/") {
        return methods::upload(&shared, file_id, body);
    }
    if let Some(rest) = path.strip_prefix("/files-pri/") {
        return methods::download(&shared, rest, &bearer);
    }
    let Some(method) = path.strip_prefix("/api/") else {
        return plain(StatusCode::NOT_FOUND, "not found");
    };
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let params = parse_params(parts.uri.query(), content_type, &body);
    let token = if bearer.is_empty() {
        params["token"].as_str().unwrap_or_default().to_owned()
    } else {
        bearer
    };
    let index = shared.write(|world| {
        world.calls.push(Call {
            method: method.to_owned(),
            params: params.clone(),
            token: token.clone(),
            status: None,
            at: std::time::Instant::now(),
        });
        world.calls.len() - 1
    });
    let (status, response) = answer(&shared, method, &token, &params, index);
    shared.write(|world| {
        if let Some(call) = world.calls.get_mut(index) {
            call.status = Some(status);
        }
    });
    response
}

/// Applies a queued fault or a tier limit, then runs the method.
fn answer(
    shared: &Shared,
    method: &str,
    token: &str,
    params: &Value,
    index: usize,
) -> (u16, Response) {
    let fault = shared.write(|world| {
        world
            .take_fault(method)
            .or_else(|| methods::tier_exceeded(world, method, token, index))
    });
    match fault {
        Some(Fault::RateLimited(secs)) => {
            let response = Response::builder()
                .status(StatusCode::TOO_MANY_REQUESTS)
                .header("Retry-After", secs.to_string())
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(
                    json!({"ok": false, "error": "ratelimited"}).to_string(),
                ))
                .unwrap_or_default();
            (429, response)
        }
        Some(Fault::Error(code)) => (200, envelope(Err(code))),
        Some(Fault::Status(code)) => (
            code,
            plain(
                StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                "fault",
            ),
        ),
        None => (
            200,
            envelope(shared.write(|world| methods::call(world, method, token, params))),
        ),
    }
}

/// Slack's envelope around a method's outcome.
fn envelope(outcome: Result<Value, String>) -> Response {
    let body = match outcome {
        Ok(Value::Object(mut fields)) => {
            fields.insert("ok".into(), true.into());
            Value::Object(fields)
        }
        Ok(_) => json!({"ok": true}),
        Err(error) => json!({"ok": false, "error": error}),
    };
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json; charset=utf-8")
        .body(Body::from(body.to_string()))
        .unwrap_or_default()
}

pub fn plain(status: StatusCode, text: &str) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain")
        .body(Body::from(text.to_owned()))
        .unwrap_or_default()
}

/// The parameters of a request: the query, then a JSON object or form body over it.
fn parse_params(query: Option<&str>, content_type: &str, body: &[u8]) -> Value {
    let mut params = Map::new();
    for (key, value) in form_pairs(query.unwrap_or_default().as_bytes()) {
        params.insert(key, Value::String(value));
    }
    if content_type.starts_with("application/json") {
        if let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(body) {
            params.extend(fields);
        }
    } else {
        for (key, value) in form_pairs(body) {
            params.insert(key, Value::String(value));
        }
    }
    Value::Object(params)
}

/// `a=1&b=x+y` decoded.
fn form_pairs(raw: &[u8]) -> Vec<(String, String)> {
    raw.split(|b| *b == b'&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let mut halves = pair.splitn(2, |b| *b == b'=');
            let key = decode(halves.next().unwrap_or_default());
            let value = decode(halves.next().unwrap_or_default());
            (key, value)
        })
        .collect()
}

fn decode(raw: &[u8]) -> String {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < raw.len() => {
                match std::str::from_utf8(&raw[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_and_json_are_read() {
        let p = parse_params(
            Some("a=1"),
            "application/x-www-form-urlencoded",
            b"b=x+y%21&c=",
        );
        assert_eq!(p, json!({"a": "1", "b": "x y!", "c": ""}));
        let p = parse_params(None, "application/json", br#"{"channel":"C1","n":2}"#);
        assert_eq!(p, json!({"channel": "C1", "n": 2}));
        assert_eq!(decode(b"100%"), "100%");
    }
}
