//! `/v1/responses` (OpenAI's Responses API, not streamed): `POST` runs the input as one turn and
//! answers a `response` object, stored (`store::api_responses`, the newest 1,000) so that a later
//! `previous_response_id` continues the same conversation and `GET`/`DELETE
//! /v1/responses/{id}` find it. Without `previous_response_id` the conversation is the one
//! `X-Hermes-Session-Id` names, else a new one.

use std::sync::Arc;

use axum::{
    Json,
    extract::{Path, Request, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

use super::{
    ApiError, ApiServer, error, request,
    turn::{self, How},
};
use crate::store;

pub async fn create(
    State(api): State<Arc<ApiServer>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let body = error::json_object(&parts.headers, body).await?;
    if body.get("stream").and_then(Value::as_bool) == Some(true) {
        return Err(ApiError::field(
            "stream",
            "Streaming /v1/responses is not supported by hermesd yet; use /v1/chat/completions or /v1/runs to stream",
        ));
    }
    let text = request::with_instructions(
        "Instructions from the API client",
        body.get("instructions").and_then(Value::as_str),
        super::runs::input_text(body.get("input"))?,
    );
    let model = request::model_name(&api, &body);
    let session_key = request::session_key(&parts.headers)?;
    let previous = body
        .get("previous_response_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    let session_id = match previous {
        Some(previous) => {
            stored(&api, &previous, "Previous response not found")
                .await?
                .0
        }
        None => match request::session_id(&parts.headers)? {
            Some(id) => id,
            None => crate::ids::session_id(),
        },
    };
    let permit = api.permit()?;
    let session = turn::conversation(&api, &session_id, Vec::new()).await?;
    let conversation = session.conversation_id.clone();
    let started = turn::start(&api, session, text, permit, false, None).await?;
    let ending = super::chat::last_step(started.steps).await;
    let id = format!("resp_{}", crate::ids::random_hex(24));
    let created = chrono::Utc::now().timestamp();
    let (status, error) = match &ending.how {
        How::Completed | How::Stopped => ("completed", Value::Null),
        How::Failed(why) => ("failed", json!({"code": "server_error", "message": why})),
    };
    let response = json!({
        "id": id,
        "object": "response",
        "created_at": created,
        "status": status,
        "error": error,
        "incomplete_details": null,
        "model": model,
        "output": [{
            "type": "message",
            "id": format!("msg_{}", crate::ids::random_hex(24)),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": ending.text, "annotations": []}],
        }],
        "parallel_tool_calls": true,
        "tool_choice": "auto",
        "tools": [],
        "previous_response_id": body.get("previous_response_id").cloned().unwrap_or(Value::Null),
        "usage": {
            "input_tokens": ending.input_tokens,
            "output_tokens": ending.output_tokens,
            "total_tokens": ending.input_tokens + ending.output_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    });
    let (kept_id, kept) = (id.clone(), response.to_string());
    api.gateway
        .runner
        .store
        .write(move |tx| store::put_api_response(tx, &kept_id, &conversation, created, &kept))
        .await
        .map_err(|e| ApiError::server(format!("the response could not be stored: {e}")))?;
    let mut answer = Json(response).into_response();
    request::echo_session(
        answer.headers_mut(),
        &started.session_id,
        session_key.as_deref(),
    );
    Ok(answer)
}

/// The stored response `id` as (its conversation, its JSON), or 404 saying `missing`.
async fn stored(api: &ApiServer, id: &str, missing: &str) -> Result<(String, String), ApiError> {
    let wanted = id.to_string();
    let found = api
        .gateway
        .runner
        .store
        .read(move |conn| store::api_response(conn, &wanted))
        .await
        .map_err(|e| ApiError::server(e.to_string()))?;
    found.ok_or_else(|| ApiError::not_found(format!("{missing}: {id}"), "response_not_found"))
}

pub async fn get(
    State(api): State<Arc<ApiServer>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let (_, body) = stored(&api, &id, "Response not found").await?;
    Ok((StatusCode::OK, [("content-type", "application/json")], body).into_response())
}

pub async fn delete(
    State(api): State<Arc<ApiServer>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let wanted = id.clone();
    let deleted = api
        .gateway
        .runner
        .store
        .write(move |tx| store::delete_api_response(tx, &wanted))
        .await
        .map_err(|e| ApiError::server(e.to_string()))?;
    if !deleted {
        return Err(ApiError::not_found(
            format!("Response not found: {id}"),
            "response_not_found",
        ));
    }
    Ok(Json(
        json!({"id": id, "object": "response", "deleted": true}),
    ))
}
