//! `POST /v1/chat/completions`: the request's last user message runs as one turn — the agent's
//! whole tool loop — in the conversation Hermes would pick: `X-Hermes-Session-Id` when given,
//! else `api-` and 16 hex digits of sha256(system prompt, "\n", first user message), so a front
//! end that resends the whole history stays in one conversation. A conversation made here keeps
//! the history the request brought (its user and assistant messages) and the client's system
//! prompt, as the first turn's instructions. Streaming answers OpenAI's chunks (role first, text
//! deltas, the finish, usage when `stream_options.include_usage`, `[DONE]`) with tool progress as
//! Hermes' `hermes.tool.progress` events and a keep-alive comment every 15 s.

use std::{sync::Arc, time::Duration};

use axum::{
    Json,
    body::Body,
    extract::{Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use super::{
    ApiError, ApiServer, error, request,
    turn::{self, Ending, How, Step},
};
use crate::store::NewMessage;

/// A quiet stream gets a comment this often, so proxies keep it open.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// What a chat request asks for.
struct Asked {
    system: String,
    first_user: String,
    text: String,
    history: Vec<NewMessage>,
}

/// The text of a message's `content`: a string, or the text parts of an array.
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => o.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn asked(body: &Map<String, Value>) -> Result<Asked, ApiError> {
    let Some(messages) = body.get("messages") else {
        return Err(ApiError::field("messages", "Missing 'messages' field"));
    };
    let Some(messages) = messages.as_array().filter(|m| !m.is_empty()) else {
        return Err(ApiError::field(
            "messages",
            "'messages' must be a non-empty array",
        ));
    };
    let mut system = Vec::new();
    let mut turns = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).ok_or_else(|| {
            ApiError::field(
                &format!("messages[{i}].role"),
                format!("messages[{i}] has no 'role'"),
            )
        })?;
        let text = content_text(message.get("content"));
        match role {
            "system" | "developer" => system.push(text),
            "user" | "assistant" => turns.push((role, text)),
            // Tool messages of a client's own loop are not the agent's: its tools run here.
            _ => {}
        }
    }
    let Some(last_user) = turns.iter().rposition(|(role, _)| *role == "user") else {
        return Err(ApiError::field(
            "messages",
            "No user message found in messages",
        ));
    };
    let text = turns[last_user].1.clone();
    if text.trim().is_empty() {
        return Err(ApiError::field(
            "messages",
            "No user message found in messages",
        ));
    }
    let first_user = turns
        .iter()
        .find(|(role, _)| *role == "user")
        .map(|(_, t)| t.clone())
        .unwrap_or_default();
    let history = turns[..last_user]
        .iter()
        .filter(|(_, text)| !text.trim().is_empty())
        .map(|(role, text)| NewMessage {
            role: role.to_string(),
            content: text.clone(),
            ..NewMessage::default()
        })
        .collect();
    Ok(Asked {
        system: system.join("\n\n"),
        first_user,
        text,
        history,
    })
}

/// Hermes' session id for a conversation that carries no header.
pub fn derived_session_id(system: &str, first_user: &str) -> String {
    let digest = Sha256::digest(format!("{system}\n{first_user}").as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("api-{hex}")
}

pub async fn completions(
    State(api): State<Arc<ApiServer>>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let body = error::json_object(&parts.headers, body).await?;
    let asked = asked(&body)?;
    let stream = match body.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(ApiError::field("stream", "'stream' must be a boolean")),
    };
    let include_usage = body
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let model = request::model_name(&api, &body);
    let session_id = match request::session_id(&parts.headers)? {
        Some(id) => id,
        None => derived_session_id(&asked.system, &asked.first_user),
    };
    let session_key = request::session_key(&parts.headers)?;
    let permit = api.permit()?;
    let session = turn::conversation(&api, &session_id, asked.history).await?;
    // A conversation's first turn carries the client's system prompt as its instructions.
    let first_turn = session.message_count == 0;
    let text = request::with_instructions(
        "Instructions from the API client's system prompt",
        first_turn.then_some(asked.system.as_str()),
        asked.text,
    );
    let started = turn::start(&api, session, text, permit, false, None).await?;
    let id = format!("chatcmpl-{}", &crate::ids::random_hex(15)[..29]);
    let created = chrono::Utc::now().timestamp();
    let mut headers = HeaderMap::new();
    request::echo_session(&mut headers, &session_id, session_key.as_deref());
    let chunk = Chunk { id, created, model };
    if stream {
        let (tx, rx) = mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(64);
        tokio::spawn(sse(chunk, started.steps, include_usage, tx));
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
        let body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        }));
        return Ok((StatusCode::OK, headers, body).into_response());
    }
    let ending = last_step(started.steps).await;
    if let How::Failed(why) = &ending.how
        && ending.text.trim().is_empty()
    {
        let mut e = ApiError::new(StatusCode::BAD_GATEWAY, why.clone());
        e.kind = "server_error";
        e.code = Some("agent_incomplete");
        return Ok((headers, e).into_response());
    }
    let answer = json!({
        "id": chunk.id,
        "object": "chat.completion",
        "created": chunk.created,
        "model": chunk.model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": ending.text},
            "finish_reason": finish_reason(&ending),
        }],
        "usage": usage(&ending),
    });
    Ok((headers, Json(answer)).into_response())
}

/// Wait for the turn's end.
pub(super) async fn last_step(mut steps: mpsc::Receiver<Step>) -> Ending {
    while let Some(step) = steps.recv().await {
        if let Step::Ended(ending) = step {
            return ending;
        }
    }
    Ending {
        text: String::new(),
        input_tokens: 0,
        output_tokens: 0,
        how: How::Failed("the turn ended without an answer".into()),
    }
}

fn finish_reason(ending: &Ending) -> &'static str {
    match ending.how {
        How::Completed | How::Stopped => "stop",
        How::Failed(_) => "error",
    }
}

fn usage(ending: &Ending) -> Value {
    json!({
        "prompt_tokens": ending.input_tokens,
        "completion_tokens": ending.output_tokens,
        "total_tokens": ending.input_tokens + ending.output_tokens,
    })
}

/// The fields every chunk repeats.
struct Chunk {
    id: String,
    created: i64,
    model: String,
}

impl Chunk {
    fn data(&self, delta: Value, finish: Option<&str>) -> bytes::Bytes {
        frame(&json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }))
    }
}

fn frame(value: &Value) -> bytes::Bytes {
    bytes::Bytes::from(format!("data: {value}\n\n"))
}

/// Write the turn's steps as OpenAI chunks until the turn ends or the client goes.
async fn sse(
    chunk: Chunk,
    mut steps: mpsc::Receiver<Step>,
    include_usage: bool,
    tx: mpsc::Sender<Result<bytes::Bytes, std::io::Error>>,
) {
    let send = |bytes: bytes::Bytes| {
        let tx = tx.clone();
        async move { tx.send(Ok(bytes)).await.is_ok() }
    };
    if !send(chunk.data(json!({"role": "assistant"}), None)).await {
        return;
    }
    loop {
        let step = tokio::select! {
            step = steps.recv() => step,
            () = tokio::time::sleep(KEEPALIVE) => {
                if !send(bytes::Bytes::from_static(b": keepalive\n\n")).await {
                    return;
                }
                continue;
            }
        };
        let Some(step) = step else { return };
        let bytes = match step {
            Step::Text(text) => chunk.data(json!({"content": text}), None),
            Step::ToolStarted {
                call_id,
                name,
                arguments,
            } => progress(&json!({
                "tool": name,
                "label": super::runs::preview(&name, &arguments),
                "toolCallId": call_id,
                "status": "running",
            })),
            Step::ToolFinished { call_id, name, .. } => progress(&json!({
                "tool": name,
                "toolCallId": call_id,
                "status": "completed",
            })),
            Step::Approval(_) | Step::ApprovalResolved { .. } => continue,
            Step::Ended(ending) => {
                let mut last = json!({
                    "id": chunk.id,
                    "object": "chat.completion.chunk",
                    "created": chunk.created,
                    "model": chunk.model,
                    "choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason(&ending)}],
                });
                if let How::Failed(why) = &ending.how {
                    last["error"] = json!({"message": why, "type": "agent_error"});
                }
                if !send(frame(&last)).await {
                    return;
                }
                if include_usage {
                    let usage = json!({
                        "id": chunk.id,
                        "object": "chat.completion.chunk",
                        "created": chunk.created,
                        "model": chunk.model,
                        "choices": [],
                        "usage": usage(&ending),
                    });
                    if !send(frame(&usage)).await {
                        return;
                    }
                }
                let _ = send(bytes::Bytes::from_static(b"data: [DONE]\n\n")).await;
                return;
            }
        };
        if !send(bytes).await {
            return;
        }
    }
}

fn progress(payload: &Value) -> bytes::Bytes {
    bytes::Bytes::from(format!("event: hermes.tool.progress\ndata: {payload}\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_derived_id_is_hermes_own() {
        // sha256("sys\nhello")[:16], as Python Hermes computes it.
        let id = derived_session_id("sys", "hello");
        assert!(id.starts_with("api-") && id.len() == 20, "{id}");
        let digest = Sha256::digest(b"sys\nhello");
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(&id[4..], &hex[..16]);
    }

    #[test]
    fn the_last_user_message_runs_and_the_rest_is_history() {
        let body = json!({"messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": "1"},
            {"role": "user", "content": [{"type": "text", "text": "two"}]},
        ]});
        let Value::Object(body) = body else { panic!() };
        let Ok(parsed) = asked(&body) else { panic!() };
        assert_eq!(parsed.system, "be brief");
        assert_eq!(parsed.first_user, "one");
        assert_eq!(parsed.text, "two");
        assert_eq!(parsed.history.len(), 2);
        let Value::Object(empty) = json!({"messages": [{"role": "assistant", "content": "x"}]})
        else {
            panic!()
        };
        assert!(asked(&empty).is_err_and(|e| e.message.contains("No user message")));
    }
}
