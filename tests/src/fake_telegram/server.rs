//! The HTTP side: `POST|GET /bot{token}/{method}` (parameters from the query, a form or a JSON
//! body) and `GET /file/bot{token}/{file_path}`; every request recorded on arrival and its status
//! when answered; the token checked (401), the method looked up (404), a queued fault applied,
//! then the method run.

use std::sync::Arc;

use axum::{
    Router,
    extract::{Request, State},
    http::header,
    response::Response,
};
use serde_json::Value;

use super::{
    Call, Fault, files,
    methods::{self, Method},
    params::{Params, decode_component},
    polling::{self, PollGuard},
    reply::{self, ApiError, Outcome},
    state::Shared,
};

/// The largest request body read.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// The fake's routes.
pub(super) fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path();
    if let Some(rest) = path.strip_prefix("/file/bot") {
        return files::download(&shared, rest);
    }
    let Some((token, method)) = path.strip_prefix("/bot").and_then(|r| r.split_once('/')) else {
        return reply::respond(Err(ApiError::not_found()));
    };
    let token = decode_component(token.as_bytes(), false);
    let method = decode_component(method.as_bytes(), false);
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let params = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(body) => Params::parse(parts.uri.query(), content_type, &body),
        Err(_) => Err(ApiError::new(413, "Request Entity Too Large")),
    };
    let call = Call {
        method: method.clone(),
        params: params.as_ref().map_or(Value::Null, Params::to_json),
        at: std::time::Instant::now(),
        token: token.clone(),
        status: None,
    };
    let index = shared.write(|world| {
        world.calls.push(call);
        world.calls.len() - 1
    });
    let outcome = answer(&shared, &token, &method, params).await;
    let status = reply::status_of(&outcome);
    shared.write(|world| {
        if let Some(call) = world.calls.get_mut(index) {
            call.status = Some(status);
        }
    });
    reply::respond(outcome)
}

/// Checks the token and the method, applies a queued fault, runs the method.
async fn answer(
    shared: &Arc<Shared>,
    token: &str,
    name: &str,
    params: Result<Params, ApiError>,
) -> Outcome {
    if !shared.read(|world| world.tokens.iter().any(|t| t == token)) {
        return Err(ApiError::unauthorized());
    }
    let Some(method) = Method::parse(name) else {
        return Err(ApiError::not_found());
    };
    let params = params?;
    // Held for the whole request, so an abandoned poll (the handler dropped) leaves at once.
    let poll = (method == Method::GetUpdates).then(|| PollGuard::enter(shared));
    let fault = shared.write(|world| world.take_fault(&name.to_ascii_lowercase()));
    match fault {
        None => run(shared, method, &params, poll.as_ref()).await,
        Some(Fault::Hang) => shared.hang().await,
        Some(Fault::DeliverThenHold) => {
            shared
                .hold(run(shared, method, &params, poll.as_ref()))
                .await
        }
        Some(Fault::DeliverThenHang) => {
            let _ = run(shared, method, &params, poll.as_ref()).await;
            shared.hang().await
        }
        Some(fault) => Err(ApiError::from_fault(&fault)),
    }
}

async fn run(
    shared: &Shared,
    method: Method,
    params: &Params,
    poll: Option<&PollGuard>,
) -> Outcome {
    match poll {
        Some(poll) => polling::get_updates(shared, params, poll).await,
        None => shared.write(|world| methods::call(world, method, params)),
    }
}
