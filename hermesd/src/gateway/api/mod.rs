//! The OpenAI-compatible API server (Hermes' `api_server` platform): chat completions and runs
//! over HTTP on the daemon's runtime, served with axum, on the same sessions, events and
//! approvals as every other client. Every route but `/health` needs the bearer key (compared in
//! constant time); a stopping daemon answers 503; at most `max_concurrent_runs` turns run at
//! once (429 beyond); bodies are read through `error::json_object` (413 past 10,000,000 bytes).
//! Requests are logged with their method, path, status and time, never their headers.

mod chat;
mod error;
mod info;
mod request;
mod responses;
mod runs;
mod turn;

use std::{sync::Arc, time::Instant};

use axum::{
    Router,
    extract::{Request, State},
    http::{HeaderMap, HeaderValue, Method, StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub use error::ApiError;
pub use turn::SOURCE;

use super::{Gateway, StatusCell};
use crate::config::settings::ApiServerSettings;

/// The running server's shared state.
pub struct ApiServer {
    /// The address the server listens on (its side of every connection).
    local: Option<std::net::SocketAddr>,
    gateway: Arc<Gateway>,
    settings: ApiServerSettings,
    /// `None`: no limit (`max_concurrent_runs: 0`).
    permits: Option<Arc<Semaphore>>,
    runs: runs::Runs,
    status: StatusCell,
}

impl ApiServer {
    /// A permit for one more run, or 429.
    fn permit(&self) -> Result<Option<OwnedSemaphorePermit>, ApiError> {
        match &self.permits {
            None => Ok(None),
            Some(permits) => Arc::clone(permits)
                .try_acquire_owned()
                .map(Some)
                .map_err(|_| ApiError::busy(self.settings.max_concurrent_runs)),
        }
    }

    fn draining(&self) -> bool {
        self.gateway.shutdown.is_cancelled() || self.gateway.runner.hub.is_stopping()
    }
}

/// Start the server; the status cell says whether it listens, and why not.
pub async fn start(gateway: Arc<Gateway>, settings: ApiServerSettings, status: StatusCell) {
    if let Some(refusal) = settings.refusal() {
        tracing::error!("api_server: {refusal}");
        status.fatal(&refusal);
        return;
    }
    let listen = settings.listen();
    let listener = match tokio::net::TcpListener::bind(&listen).await {
        Ok(listener) => listener,
        Err(e) => {
            let why = format!("cannot listen on {listen}: {e}");
            tracing::error!("api_server: {why}");
            status.fatal(&why);
            return;
        }
    };
    let permits = (settings.max_concurrent_runs > 0)
        .then(|| Arc::new(Semaphore::new(settings.max_concurrent_runs)));
    let shutdown = gateway.shutdown.clone();
    let local = listener.local_addr().ok();
    let api = Arc::new(ApiServer {
        local,
        gateway,
        settings,
        permits,
        runs: runs::Runs::default(),
        status: status.clone(),
    });
    let app = router(Arc::clone(&api));
    status.connected();
    tracing::info!(%listen, "api_server: listening");
    let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await;
    if let Err(e) = served {
        tracing::warn!(error = %e, "api_server: the listener stopped");
        status.fatal(&format!("the listener stopped: {e}"));
    }
}

fn router(api: Arc<ApiServer>) -> Router {
    let authed = Router::new()
        .route("/v1/models", get(info::models))
        .route("/v1/capabilities", get(info::capabilities))
        .route("/v1/chat/completions", post(chat::completions))
        .route("/v1/responses", post(responses::create))
        .route(
            "/v1/responses/{id}",
            get(responses::get).delete(responses::delete),
        )
        .route("/v1/runs", post(runs::create))
        .route("/v1/runs/{id}", get(runs::status))
        .route("/v1/runs/{id}/events", get(runs::events))
        .route("/v1/runs/{id}/approval", post(runs::approval))
        .route("/v1/runs/{id}/stop", post(runs::stop))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(Arc::clone(&api), guard));
    Router::new()
        .route("/health", get(info::health))
        .route("/v1/health", get(info::health))
        .merge(authed)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&api),
            cors_and_log,
        ))
        .with_state(api)
}

async fn not_found(request: Request) -> ApiError {
    ApiError::not_found(
        format!(
            "Unknown endpoint: {} {}",
            request.method(),
            request.uri().path()
        ),
        "not_found",
    )
}

/// The caller, the key, then draining: what every route but `/health` passes first. A loopback
/// client that is one of the agent's processes (it carries the agent's mark, `confine`) is
/// refused whatever key it found: it may do no more than the agent's own tools.
async fn guard(State(api): State<Arc<ApiServer>>, request: Request, next: Next) -> Response {
    if request.method() == Method::OPTIONS {
        return next.run(request).await;
    }
    let client = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0);
    if let Some((client, server)) = client.filter(|c| c.ip().is_loopback()).zip(api.local) {
        let agent = tokio::task::spawn_blocking(move || {
            crate::confine::tcp_peer::loopback_client_is_agent(client, server)
        })
        .await
        .unwrap_or(true);
        if agent {
            tracing::warn!(%client, "api_server: refused a process of the agent's");
            return ApiError::agent_process().into_response();
        }
    }
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .unwrap_or_default();
    if !super::secret::same(given.as_bytes(), api.settings.key.as_bytes()) {
        return ApiError::unauthorized().into_response();
    }
    if api.draining() {
        return ApiError::draining().into_response();
    }
    next.run(request).await
}

/// CORS for the configured origins (a preflight is answered here), and one log line per request.
async fn cors_and_log(State(api): State<Arc<ApiServer>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let (method, path) = (request.method().clone(), request.uri().path().to_string());
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let allowed = origin
        .as_deref()
        .filter(|o| api.settings.cors_origins.iter().any(|a| a == "*" || a == o))
        .map(str::to_string);
    let mut response = if method == Method::OPTIONS && origin.is_some() {
        if allowed.is_some() {
            StatusCode::NO_CONTENT.into_response()
        } else {
            ApiError::new(StatusCode::FORBIDDEN, "Origin not allowed").into_response()
        }
    } else {
        api.status.received();
        next.run(request).await
    };
    if let Some(origin) = allowed {
        cors_headers(response.headers_mut(), &origin);
    }
    tracing::info!(
        method = %method,
        path = %path,
        status = response.status().as_u16(),
        ms = started.elapsed().as_millis() as u64,
        "api_server: request"
    );
    response
}

fn cors_headers(headers: &mut HeaderMap, origin: &str) {
    if let Ok(origin) = HeaderValue::from_str(origin) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    }
    headers.insert(header::VARY, HeaderValue::from_static("Origin"));
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(
            "Authorization, Content-Type, X-Hermes-Session-Id, X-Hermes-Session-Key",
        ),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("X-Hermes-Session-Id, X-Hermes-Session-Key"),
    );
}
