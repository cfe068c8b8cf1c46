//! The REST side, under `/api/v10`: every request recorded on arrival and its status when
//! answered; rate limits first (a request on a bucket still blocked by a 429 counts as a
//! violation and gets another 429; each answer carries truthful `X-RateLimit-*` headers of a
//! 50-a-second bucket per route), then a queued fault, the bot's token (401), and the route
//! (`routes.rs`). `/attachments/{name}` serves files as Discord's CDN does, without credentials
//! (recorded as calls too, with their path).

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use axum::{
    Router,
    body::Body,
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    response::Response,
};
use serde_json::{Value, json};

use super::{Call, Fault, routes, state::Shared};

/// The API's path prefix.
pub(super) const API: &str = "/api/v10";
/// Requests a bucket takes per window.
const LIMIT: u32 = 50;
const WINDOW: Duration = Duration::from_secs(1);
const MAX_BODY: usize = 64 * 1024 * 1024;

/// An answer: status, JSON body (`Null`: none), extra headers.
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) body: Value,
    pub(super) headers: Vec<(&'static str, String)>,
}

impl Answer {
    pub(super) fn ok(body: Value) -> Self {
        Self {
            status: 200,
            body,
            headers: Vec::new(),
        }
    }

    pub(super) fn empty() -> Self {
        Self {
            status: 204,
            body: Value::Null,
            headers: Vec::new(),
        }
    }

    /// Discord's error body.
    pub(super) fn error(status: u16, code: u32, message: &str) -> Self {
        Self {
            status,
            body: json!({"message": message, "code": code}),
            headers: Vec::new(),
        }
    }
}

/// A request's body: its JSON (a multipart form's `payload_json`) and files.
pub(super) struct Parsed {
    pub(super) json: Value,
    pub(super) files: Vec<crate::fake_telegram::FilePart>,
}

pub(super) fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let full = parts.uri.path().to_string();
    let auth = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let authorized = shared.read(|w| w.tokens.iter().any(|t| auth == format!("Bot {t}")));
    if let Some(name) = full.strip_prefix("/attachments/") {
        shared.write(|world| {
            world.calls.push(Call {
                method: "GET".into(),
                path: full.clone(),
                body: Value::Null,
                status: None,
                at: Instant::now(),
                authorized,
            })
        });
        return attachment(&shared, name);
    }
    let Some(path) = full.strip_prefix(API).map(str::to_string) else {
        return respond(Answer::error(404, 0, "404: Not Found"), None);
    };
    let method = parts.method.as_str().to_string();
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .unwrap_or_default();
    let parsed = parse(&content_type, &bytes);
    let index = shared.write(|world| {
        world.calls.push(Call {
            method: method.clone(),
            path: path.clone(),
            body: parsed.json.clone(),
            status: None,
            at: Instant::now(),
            authorized,
        });
        world.calls.len() - 1
    });
    let (bucket, mut answer) = shared.write(|world| {
        let (bucket, limited) = limits(world, &method, &path);
        if let Some(limited) = limited {
            return (bucket, limited);
        }
        let answer = match world.take_fault(&method, &path) {
            Some(fault) => fault_answer(world, &bucket, &fault),
            None => routes::answer(world, &method, &path, authorized, &parsed),
        };
        (bucket, answer)
    });
    if answer.status != 429 {
        answer
            .headers
            .extend(shared.read(|w| window_headers(w, &bucket)));
    }
    shared.write(|world| {
        if let Some(call) = world.calls.get_mut(index) {
            call.status = Some(answer.status);
        }
    });
    respond(answer, Some(&bucket))
}

fn parse(content_type: &str, bytes: &[u8]) -> Parsed {
    if content_type.starts_with("multipart/form-data")
        && let Some((fields, files)) = crate::fake_telegram::form_data(content_type, bytes)
    {
        let json = fields
            .get("payload_json")
            .and_then(Value::as_str)
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or(Value::Null);
        return Parsed { json, files };
    }
    Parsed {
        json: serde_json::from_slice(bytes).unwrap_or(Value::Null),
        files: Vec::new(),
    }
}

/// The bucket of a request, and a 429 when it is blocked or used up.
fn limits(world: &mut super::state::World, method: &str, path: &str) -> (String, Option<Answer>) {
    let bucket = bucket_of(method, path);
    let now = Instant::now();
    let blocked = [world.global_block, world.blocked.get(&bucket).copied()]
        .into_iter()
        .flatten()
        .filter(|until| *until > now)
        .max();
    if let Some(until) = blocked {
        world.violations += 1;
        let global = world.global_block.is_some_and(|g| g > now);
        return (bucket, Some(too_many((until - now).as_secs_f64(), global)));
    }
    let (start, count) = world.windows.entry(bucket.clone()).or_insert((now, 0));
    if now.duration_since(*start) >= WINDOW {
        (*start, *count) = (now, 0);
    }
    *count += 1;
    if *count > LIMIT {
        world.violations += 1;
        let left = WINDOW.saturating_sub(now.duration_since(*start));
        return (bucket, Some(too_many(left.as_secs_f64(), false)));
    }
    (bucket, None)
}

fn window_headers(world: &super::state::World, bucket: &str) -> Vec<(&'static str, String)> {
    let (start, count) = world
        .windows
        .get(bucket)
        .copied()
        .unwrap_or((Instant::now(), 0));
    let left = WINDOW.saturating_sub(start.elapsed());
    vec![
        ("x-ratelimit-limit", LIMIT.to_string()),
        (
            "x-ratelimit-remaining",
            LIMIT.saturating_sub(count).to_string(),
        ),
        (
            "x-ratelimit-reset-after",
            format!("{:.3}", left.as_secs_f64()),
        ),
        ("x-ratelimit-bucket", format!("{:016x}", fxhash(bucket))),
    ]
}

fn fault_answer(world: &mut super::state::World, bucket: &str, fault: &Fault) -> Answer {
    match fault {
        Fault::RateLimited {
            retry_after,
            global,
        } => {
            let until = Instant::now() + Duration::from_secs_f64(*retry_after);
            if *global {
                world.global_block = Some(until);
            } else {
                world.blocked.insert(bucket.to_string(), until);
            }
            too_many(*retry_after, *global)
        }
        Fault::Status(status) => Answer::error(*status, 0, "a fault the test queued"),
    }
}

fn too_many(retry_after: f64, global: bool) -> Answer {
    let mut answer = Answer {
        status: 429,
        body: json!({"message": "You are being rate limited.", "retry_after": retry_after,
            "global": global}),
        headers: vec![
            ("retry-after", format!("{}", retry_after.ceil() as u64)),
            (
                "x-ratelimit-scope",
                if global { "global" } else { "user" }.to_string(),
            ),
        ],
    };
    if global {
        answer
            .headers
            .push(("x-ratelimit-global", "true".to_string()));
    } else {
        answer
            .headers
            .push(("x-ratelimit-remaining", "0".to_string()));
        answer
            .headers
            .push(("x-ratelimit-reset-after", format!("{retry_after:.3}")));
    }
    answer
}

/// The bucket key of a route: the method and path with every id but the major one (after
/// `channels`, `guilds`, `webhooks`) replaced, and tokens hidden.
pub(super) fn bucket_of(method: &str, path: &str) -> String {
    let segments: Vec<&str> = path.split('/').collect();
    let mut out = Vec::new();
    let mut major_seen = false;
    for (i, segment) in segments.iter().enumerate() {
        let previous = i.checked_sub(1).map(|p| segments[p]).unwrap_or("");
        let is_id = !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit());
        if i >= 2 && matches!(segments[i - 2], "interactions" | "webhooks") {
            out.push(":token".to_string());
        } else if is_id && !major_seen && matches!(previous, "channels" | "guilds" | "webhooks") {
            major_seen = true;
            out.push((*segment).to_string());
        } else if is_id {
            out.push(":id".to_string());
        } else {
            out.push((*segment).to_string());
        }
    }
    format!("{method} {}", out.join("/"))
}

fn fxhash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn respond(answer: Answer, _bucket: Option<&str>) -> Response {
    let body = if answer.body.is_null() {
        Body::empty()
    } else {
        Body::from(answer.body.to_string())
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK);
    let headers = response.headers_mut();
    if !answer.body.is_null() {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    for (name, value) in answer.headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
    response
}

fn attachment(shared: &Shared, name: &str) -> Response {
    match shared.read(|w| w.files.get(name).cloned()) {
        Some((bytes, content_type)) => {
            let mut response = Response::new(Body::from(bytes));
            if let Ok(value) = HeaderValue::from_str(&content_type) {
                response.headers_mut().insert(header::CONTENT_TYPE, value);
            }
            response
        }
        None => {
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::NOT_FOUND;
            response
        }
    }
}
