//! The routes that describe the server: `/health` (no key needed), `/v1/models` (the one model
//! it advertises) and `/v1/capabilities` (what this server implements, in Hermes' shape).

use std::sync::Arc;

use axum::{Json, extract::State};
use serde_json::{Value, json};

use super::ApiServer;

pub async fn health() -> Json<Value> {
    Json(json!({"status": "ok", "platform": "hermes-agent", "version": env!("CARGO_PKG_VERSION")}))
}

pub async fn models(State(api): State<Arc<ApiServer>>) -> Json<Value> {
    let name = &api.settings.model_name;
    Json(json!({"object": "list", "data": [{
        "id": name,
        "object": "model",
        "created": chrono::Utc::now().timestamp(),
        "owned_by": "hermes",
        "permission": [],
        "root": name,
        "parent": null,
    }]}))
}

pub async fn capabilities(State(api): State<Arc<ApiServer>>) -> Json<Value> {
    let route = |method: &str, path: &str| json!({"method": method, "path": path});
    Json(json!({
        "object": "hermes.api_server.capabilities",
        "platform": "hermes-agent",
        "model": api.settings.model_name,
        "auth": {"type": "bearer", "required": true},
        "runtime": {
            "mode": "server_agent",
            "tool_execution": "server",
            "split_runtime": false,
            "description": "hermesd runs the agent; tools execute on the daemon's host.",
        },
        "features": {
            "chat_completions": true,
            "chat_completions_streaming": true,
            "responses_api": true,
            "responses_streaming": false,
            "run_submission": true,
            "run_status": true,
            "run_events_sse": true,
            "run_stop": true,
            "run_approval_response": true,
            "tool_progress_events": true,
            "approval_events": true,
            "session_continuity_header": "X-Hermes-Session-Id",
            "session_key_header": "X-Hermes-Session-Key",
            "cors": !api.settings.cors_origins.is_empty(),
        },
        "endpoints": {
            "health": route("GET", "/health"),
            "models": route("GET", "/v1/models"),
            "chat_completions": route("POST", "/v1/chat/completions"),
            "responses": route("POST", "/v1/responses"),
            "response": route("GET", "/v1/responses/{response_id}"),
            "runs": route("POST", "/v1/runs"),
            "run_status": route("GET", "/v1/runs/{run_id}"),
            "run_events": route("GET", "/v1/runs/{run_id}/events"),
            "run_approval": route("POST", "/v1/runs/{run_id}/approval"),
            "run_stop": route("POST", "/v1/runs/{run_id}/stop"),
        },
    }))
}
