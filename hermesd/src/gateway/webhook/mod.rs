//! The webhook platform (Hermes' `webhook`): `POST /webhooks/<route>` wakes the agent with a
//! prompt rendered from the payload (`template.rs`), after the signature is checked
//! (`signature.rs`). Checks come in Hermes' order: unknown route 404, disabled 403, body over
//! `max_body_bytes` 413 (by `Content-Length`, then while reading), bad or missing signature 401,
//! over `rate_limit` per minute 429 (a sliding minute per route), an event the route does not
//! take 200 `ignored`. The delivery id (`X-GitHub-Delivery`, else `X-Request-ID`) is claimed in
//! the store (`webhook_deliveries`, one hour, across restarts), so a sender's retry answers
//! `duplicate` and never starts a second run; so is the SHA-256 digest of what a passed signature
//! covers (`webhook_bodies`, per route, the same hour, at most 10,000 a route), so a captured
//! signed request replayed under a new delivery id, or none, answers `duplicate` too. Accepted deliveries answer 202 and run as a turn
//! of a new session (source `webhook`, one per delivery); the answer goes to the route's
//! `deliver` target — `log`, or a chat platform through the `Messenger` — and `deliver_only`
//! sends the rendered prompt itself, with no model call. A route's `skills` make the prompt a
//! request to use the first of them that is offered, as a skill's slash command does in a chat.

mod signature;
mod template;

use std::{
    collections::{HashMap, VecDeque},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    Json, Router,
    body::Body,
    extract::{Path, Request, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use serde_json::{Value, json};

use super::{Gateway, GatewayMessenger, StatusCell};
use crate::{
    agent::{self, Submitted, Target, TurnInput},
    config::settings::{INSECURE_NO_AUTH, WebhookRoute, WebhookSettings},
    store,
    tools::messenger::{Destination, Messenger},
};

pub const SOURCE: &str = "webhook";
/// How long a delivery id, and a signed request's digest, is remembered.
const DEDUP_TTL: Duration = Duration::from_secs(3_600);
const LOOPBACK: &[&str] = &[
    "127.0.0.1",
    "localhost",
    "::1",
    "ip6-localhost",
    "ip6-loopback",
];

struct Hooks {
    gateway: Arc<Gateway>,
    settings: WebhookSettings,
    /// Each route's requests of the last minute.
    recent: Mutex<HashMap<String, VecDeque<Instant>>>,
    status: StatusCell,
}

/// Why the routes cannot be served (Hermes' sentences), if they cannot.
fn refusal(settings: &WebhookSettings) -> Option<String> {
    let loopback = LOOPBACK.contains(&settings.host.trim().to_lowercase().as_str());
    for route in &settings.routes {
        let name = &route.name;
        let secret = route.secret.as_deref().unwrap_or(&settings.secret);
        if secret.is_empty() {
            return Some(format!(
                "[webhook] Route '{name}' has no HMAC secret. Set 'secret' on the route or \
                 globally. For testing without auth, set secret to '{INSECURE_NO_AUTH}'."
            ));
        }
        if secret == INSECURE_NO_AUTH && !loopback {
            return Some(format!(
                "[webhook] Route '{name}' uses {INSECURE_NO_AUTH} secret but is bound to \
                 non-loopback host '{}'. {INSECURE_NO_AUTH} is for local testing only. Refusing \
                 to start to prevent accidental exposure.",
                settings.host
            ));
        }
        if route.deliver_only && route.deliver == "log" {
            return Some(format!(
                "[webhook] Route '{name}' has deliver_only=true but deliver is 'log'. Direct \
                 delivery requires a real target (telegram, discord, slack, github_comment, etc.)."
            ));
        }
    }
    None
}

/// Serve the routes until the daemon stops; the status cell says whether it listens.
pub async fn start(gateway: Arc<Gateway>, settings: WebhookSettings, status: StatusCell) {
    if let Some(why) = refusal(&settings) {
        tracing::error!("{why}");
        status.fatal(&why);
        return;
    }
    let listener = match tokio::net::TcpListener::bind(&settings.listen).await {
        Ok(listener) => listener,
        Err(e) => {
            let why = format!(
                "[webhook] Could not bind {}: {e}. Set a different host or port in config.yaml \
                 under platforms.webhook.extra.",
                settings.listen
            );
            tracing::error!("{why}");
            status.fatal(&why);
            return;
        }
    };
    let shutdown = gateway.shutdown.clone();
    let names: Vec<&str> = settings.routes.iter().map(|r| r.name.as_str()).collect();
    tracing::info!(listen = %settings.listen, routes = %names.join(", "), "webhook: listening");
    let hooks = Arc::new(Hooks {
        gateway,
        settings,
        recent: Mutex::new(HashMap::new()),
        status: status.clone(),
    });
    let app = Router::new()
        .route(
            "/health",
            get(|| async { Json(json!({"status": "ok", "platform": "webhook"})) }),
        )
        .route("/webhooks/{route}", post(deliver))
        .with_state(hooks);
    status.connected();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await;
    if let Err(e) = served {
        status.fatal(&format!("the listener stopped: {e}"));
    }
}

fn answer(status: StatusCode, body: Value) -> Response {
    (status, Json(body)).into_response()
}

fn error(status: StatusCode, message: &str) -> Response {
    answer(status, json!({"error": message}))
}

impl Hooks {
    /// Whether `route` may take one more request this minute (Hermes' sliding minute).
    fn admit(&self, route: &WebhookRoute) -> bool {
        let mut recent = match self.recent.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        let log = recent.entry(route.name.clone()).or_default();
        let now = Instant::now();
        while log
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60))
        {
            log.pop_front();
        }
        if log.len() as u64 >= route.rate_limit {
            return false;
        }
        log.push_back(now);
        true
    }
}

fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// The event's type: the GitHub or GitLab header, else the payload's `event_type` or `type`.
fn event_type(headers: &HeaderMap, payload: &Value) -> String {
    ["x-github-event", "x-gitlab-event"]
        .iter()
        .find_map(|h| header_text(headers, h).filter(|v| !v.is_empty()))
        .map(str::to_string)
        .or_else(|| {
            ["event_type", "type"]
                .iter()
                .find_map(|k| {
                    payload
                        .get(*k)
                        .and_then(Value::as_str)
                        .filter(|v| !v.is_empty())
                })
                .map(str::to_string)
        })
        .unwrap_or_else(|| "unknown".into())
}

async fn deliver(
    State(hooks): State<Arc<Hooks>>,
    Path(name): Path<String>,
    request: Request,
) -> Response {
    let Some(route) = hooks
        .settings
        .routes
        .iter()
        .find(|r| r.name == name)
        .cloned()
    else {
        return error(StatusCode::NOT_FOUND, &format!("Unknown route: {name}"));
    };
    if !route.enabled {
        return error(StatusCode::FORBIDDEN, &format!("Route disabled: {name}"));
    }
    let (parts, body) = request.into_parts();
    let limit = usize::try_from(route.max_body_bytes).unwrap_or(usize::MAX);
    let declared = header_text(&parts.headers, header::CONTENT_LENGTH.as_str())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > route.max_body_bytes) {
        return error(StatusCode::PAYLOAD_TOO_LARGE, "Payload too large");
    }
    let Ok(body) = axum::body::to_bytes(Body::new(body), limit).await else {
        return error(StatusCode::PAYLOAD_TOO_LARGE, "Payload too large");
    };
    let secret = route
        .secret
        .clone()
        .unwrap_or_else(|| hooks.settings.secret.clone());
    let mut digest = None;
    if secret != INSECURE_NO_AUTH {
        let now = chrono::Utc::now().timestamp();
        match signature::check(&parts.headers, &body, &secret, now) {
            Ok(signature::Passed::Signed) => {}
            Ok(signature::Passed::Legacy) => tracing::warn!(
                route = %name,
                "webhook: legacy body-only HMAC (no timestamp), which a captured request can replay; \
                 send X-Webhook-Timestamp and X-Webhook-Signature-V2 instead"
            ),
            Err(why) => {
                tracing::warn!(route = %name, ?why, "webhook: invalid signature");
                return error(StatusCode::UNAUTHORIZED, "Invalid signature");
            }
        }
        digest = Some(signature::signed_digest(&parts.headers, &body));
    }
    if !hooks.admit(&route) {
        return error(StatusCode::TOO_MANY_REQUESTS, "Rate limit exceeded");
    }
    hooks.status.received();
    let payload = match serde_json::from_slice::<Value>(&body) {
        Ok(value) => value,
        Err(_) if body.iter().all(u8::is_ascii_whitespace) => json!({}),
        Err(_) => return error(StatusCode::BAD_REQUEST, "Cannot parse body"),
    };
    let event = event_type(&parts.headers, &payload);
    if !route.events.is_empty() && !route.events.contains(&event) {
        return answer(StatusCode::OK, json!({"status": "ignored", "event": event}));
    }
    let mut prompt = template::render(&route.prompt, &payload, &event, &name);
    if !route.skills.is_empty() {
        prompt = with_skill(&hooks, &route, prompt).await;
    }
    let delivery_id = ["x-github-delivery", "x-request-id"]
        .iter()
        .find_map(|h| header_text(&parts.headers, h).filter(|v| !v.is_empty()))
        .map(str::to_string)
        .unwrap_or_else(|| format!("{}", chrono::Utc::now().timestamp_millis()));
    let claimed = {
        let (route_name, id) = (name.clone(), delivery_id.clone());
        let now = chrono::Utc::now().timestamp_millis();
        let window = store::WebhookWindow {
            ttl_ms: DEDUP_TTL.as_millis() as i64,
            max_bodies: store::MAX_WEBHOOK_BODIES_PER_ROUTE,
        };
        hooks
            .gateway
            .runner
            .store
            .write(move |tx| {
                store::claim_webhook(
                    tx,
                    &route_name,
                    &id,
                    digest.as_ref().map(|d| &d[..]),
                    now,
                    window,
                )
            })
            .await
    };
    match claimed {
        Ok(store::WebhookClaim::Fresh) => {}
        Ok(seen) => {
            let why = match seen {
                store::WebhookClaim::SeenBody => "its signed request was accepted already",
                _ => "its delivery id was seen already",
            };
            tracing::info!(route = %name, delivery = %delivery_id, "webhook: skipping a duplicate delivery: {why}");
            return answer(
                StatusCode::OK,
                json!({"status": "duplicate", "delivery_id": delivery_id}),
            );
        }
        Err(e) => {
            tracing::error!(error = %e, "webhook: the delivery could not be recorded");
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "Delivery could not be recorded",
            );
        }
    }
    if route.deliver_only {
        return match send(&hooks, &route, &payload, &prompt).await {
            Ok(()) => answer(
                StatusCode::OK,
                json!({"status": "delivered", "route": name, "target": route.deliver, "delivery_id": delivery_id}),
            ),
            Err(e) => {
                tracing::warn!(route = %name, error = %e, "webhook: direct delivery failed");
                answer(
                    StatusCode::BAD_GATEWAY,
                    json!({"status": "error", "error": "Delivery failed", "delivery_id": delivery_id}),
                )
            }
        };
    }
    tracing::info!(route = %name, event = %event, delivery = %delivery_id, prompt_len = prompt.len(), "webhook: accepted");
    tokio::spawn(run(Arc::clone(&hooks), route, payload, prompt));
    answer(
        StatusCode::ACCEPTED,
        json!({"status": "accepted", "route": name, "event": event, "delivery_id": delivery_id}),
    )
}

/// The prompt as a request to use the first of the route's skills that is offered (trusted and
/// available), as a skill's slash command asks in a chat; unchanged when none is.
async fn with_skill(hooks: &Hooks, route: &WebhookRoute, prompt: String) -> String {
    let offered = super::commands_offered(&hooks.gateway.runner).await;
    for wanted in &route.skills {
        let wanted = wanted.replace('-', "_");
        match offered.iter().find(|o| o.skill && o.name == wanted) {
            Some(skill) => return hermes_proto::commands::skill_request(&skill.name, &prompt),
            None => {
                tracing::warn!(route = %route.name, skill = %wanted, "webhook: skill not found")
            }
        }
    }
    prompt
}

/// Send `text` to the route's target: the log, or a chat through the gateway's `Messenger`
/// (`deliver_extra.chat_id`, else the platform's home channel).
async fn send(
    hooks: &Hooks,
    route: &WebhookRoute,
    payload: &Value,
    text: &str,
) -> Result<(), String> {
    if route.deliver == "log" {
        let shown: String = text.chars().take(200).collect();
        tracing::info!(route = %route.name, "webhook: response: {shown}");
        return Ok(());
    }
    let extra = |key: &str| {
        route
            .deliver_extra
            .get(key)
            .map(|v| match v {
                Value::String(s) => template::render(s, payload, "", ""),
                other => other.to_string(),
            })
            .unwrap_or_default()
    };
    let thread = Some(extra("message_thread_id"))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| extra("thread_id"));
    let to = Destination {
        platform: route.deliver.clone(),
        chat: extra("chat_id"),
        thread_id: thread,
    };
    let messenger = GatewayMessenger(Arc::downgrade(&hooks.gateway));
    messenger
        .send(&to, text, None)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Run the prompt as a turn of a new session and deliver its answer.
async fn run(hooks: Arc<Hooks>, route: WebhookRoute, payload: Value, prompt: String) {
    let runner = &hooks.gateway.runner;
    let target = Target {
        session_id: None,
        cwd: String::new(),
        source: SOURCE.into(),
    };
    let answer = match agent::prepare(runner, target, &prompt).await {
        Err(e) => format!("⚠️ {e}"),
        Ok((session, chain)) => {
            let input = TurnInput {
                text: prompt,
                source_client: SOURCE.into(),
                yolo: false,
                busy: None,
                toolsets: Vec::new(),
                context_from: None,
                turn_id: None,
                stop: None,
                delegated: None,
            };
            match agent::submit(runner, session, chain, input) {
                Submitted::Turn(turn) => match turn.await {
                    Ok(Ok(outcome)) => outcome.answer,
                    Ok(Err(e)) => format!("⚠️ {e}"),
                    Err(e) => format!("⚠️ the turn stopped: {e}"),
                },
                Submitted::Steered => return,
            }
        }
    };
    if let Err(e) = send(&hooks, &route, &payload, &answer).await {
        tracing::warn!(route = %route.name, error = %e, "webhook: the answer was not delivered");
    } else {
        hooks.status.sent();
    }
}
