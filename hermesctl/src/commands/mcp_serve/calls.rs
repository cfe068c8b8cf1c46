//! What each tool of `hermesctl mcp serve` does: one or a few calls of the daemon's Sessions
//! service, shaped as JSON like Hermes' `mcp serve` answers. Nothing here reads the database.

use std::collections::VecDeque;

use hermes_proto::{client::describe_status, pb};
use serde_json::{Value, json};

use super::{args::Args, catalog};
use crate::{commands::sessions::state_word, connection::Daemon, output};

/// Conversations looked through when `conversations_list` filters by `search`.
const SEARCH_SCAN: u32 = 1000;
/// Messages per `History` page while `messages_read` walks a conversation.
const HISTORY_PAGE: u32 = 100;
/// The largest reply taken from the daemon: a page of messages may hold large tool outputs.
const MAX_REPLY_BYTES: usize = 64 << 20;
/// What sessions started from here are recorded as (their platform, as `cli` or `telegram`).
const SOURCE: &str = "mcp";
const CLIENT_NAME: &str = "hermesctl mcp serve";

/// Why a call failed: text for the MCP client, and whether the daemon went away.
#[derive(Debug)]
pub struct Failure {
    pub text: String,
    pub disconnected: bool,
}

impl From<String> for Failure {
    fn from(text: String) -> Self {
        Self {
            text,
            disconnected: false,
        }
    }
}

/// A daemon error; `key` names the conversation the call was about, for "not found".
fn failed(status: tonic::Status, key: Option<&str>) -> Failure {
    let text = match (status.code(), key) {
        (tonic::Code::NotFound, Some(key)) => format!("Conversation not found: {key}"),
        _ => describe_status(&status),
    };
    Failure {
        text,
        disconnected: status.code() == tonic::Code::Unavailable,
    }
}

fn text_or_null(text: &str) -> Value {
    if text.is_empty() {
        Value::Null
    } else {
        json!(text)
    }
}

fn conversation(s: &pb::Session) -> Value {
    json!({
        "session_key": s.id,
        "session_id": s.id,
        "platform": s.source,
        "display_name": s.title,
        "state": state_word(s.state),
        "message_count": s.message_count,
        "created_at": output::timestamp(s.created_at.as_ref()),
        "updated_at": output::timestamp(s.updated_at.as_ref()),
    })
}

/// Run tool `name`.
pub async fn call(daemon: &Daemon, name: &str, args: &Args<'_>) -> Result<Value, Failure> {
    match name {
        catalog::CONVERSATIONS_LIST => conversations_list(daemon, args).await,
        catalog::CONVERSATION_GET => conversation_get(daemon, args).await,
        catalog::MESSAGES_READ => messages_read(daemon, args).await,
        catalog::CONVERSATION_SEND => conversation_send(daemon, args).await,
        catalog::MESSAGES_SEARCH => messages_search(daemon, args).await,
        _ => Err(format!("unknown tool {name:?}").into()),
    }
}

async fn conversations_list(daemon: &Daemon, args: &Args<'_>) -> Result<Value, Failure> {
    let (default, max) = catalog::LIST_LIMIT;
    let limit = args.int("limit", default, 1, max) as usize;
    let search = args.optional("search").map(|s| s.to_lowercase());
    let request = pb::ListSessionsRequest {
        limit: if search.is_some() {
            SEARCH_SCAN
        } else {
            limit as u32
        },
        source: args.optional("platform").unwrap_or_default(),
        all_segments: false,
    };
    let sessions = daemon
        .sessions()
        .list(request)
        .await
        .map_err(|e| failed(e, None))?
        .into_inner()
        .sessions;
    let conversations: Vec<Value> = sessions
        .iter()
        .filter(|s| {
            search.as_deref().is_none_or(|needle| {
                s.title.to_lowercase().contains(needle) || s.id.to_lowercase().contains(needle)
            })
        })
        .take(limit)
        .map(conversation)
        .collect();
    Ok(json!({"count": conversations.len(), "conversations": conversations}))
}

async fn conversation_get(daemon: &Daemon, args: &Args<'_>) -> Result<Value, Failure> {
    let key = args.required("session_key")?;
    let session = daemon
        .sessions()
        .get(pb::GetSessionRequest {
            id: key.clone(),
            include_messages: false,
        })
        .await
        .map_err(|e| failed(e, Some(&key)))?
        .into_inner()
        .session
        .ok_or_else(|| format!("hermesd returned no session for {key}"))?;
    let usage = session.usage.unwrap_or_default();
    let mut value = conversation(&session);
    if let Value::Object(map) = &mut value {
        for (field, v) in [
            ("model", json!(session.model)),
            ("cwd", json!(session.cwd)),
            (
                "parent_session_id",
                text_or_null(&session.parent_session_id),
            ),
            ("clients", json!(session.clients)),
            ("input_tokens", json!(usage.input_tokens)),
            ("output_tokens", json!(usage.output_tokens)),
            (
                "total_tokens",
                json!(usage.input_tokens + usage.output_tokens),
            ),
            ("cost_usd", json!(usage.cost_usd)),
        ] {
            map.insert(field.into(), v);
        }
    }
    Ok(value)
}

/// The first `max` characters of `text`.
fn cut(text: &str, max: usize) -> &str {
    text.char_indices()
        .nth(max)
        .map_or(text, |(at, _)| &text[..at])
}

async fn messages_read(daemon: &Daemon, args: &Args<'_>) -> Result<Value, Failure> {
    let key = args.required("session_key")?;
    let (default, max) = catalog::READ_LIMIT;
    let limit = args.int("limit", default, 1, max) as usize;
    let mut sessions = daemon.sessions().max_decoding_message_size(MAX_REPLY_BYTES);
    // The daemon pages oldest first: walk the pages, keeping the newest `limit` messages.
    let mut kept = VecDeque::with_capacity(limit);
    let mut total = 0usize;
    let mut after = 0;
    loop {
        let page = sessions
            .history(pb::SessionHistoryRequest {
                id: key.clone(),
                after_message_id: after,
                limit: HISTORY_PAGE,
            })
            .await
            .map_err(|e| failed(e, Some(&key)))?
            .into_inner()
            .messages;
        let full = page.len() as u32 == HISTORY_PAGE;
        for m in page {
            after = after.max(m.id);
            if !matches!(m.role.as_str(), "user" | "assistant") || m.content.is_empty() {
                continue;
            }
            total += 1;
            if kept.len() == limit {
                kept.pop_front();
            }
            kept.push_back(json!({
                "id": m.id.to_string(),
                "role": m.role,
                "content": cut(&m.content, catalog::CONTENT_CHARS),
                "timestamp": output::timestamp(m.created_at.as_ref()),
            }));
        }
        if !full {
            break;
        }
    }
    Ok(json!({
        "session_key": key,
        "count": kept.len(),
        "total_in_session": total,
        "messages": kept,
    }))
}

async fn conversation_send(daemon: &Daemon, args: &Args<'_>) -> Result<Value, Failure> {
    let text = args.text("message")?;
    let key = args.optional("session_key");
    let cwd = std::env::current_dir()
        .map(|dir| dir.display().to_string())
        .unwrap_or_else(|_| "/".into());
    let reply = daemon
        .sessions()
        .send(pb::SendRequest {
            session_id: key.clone().unwrap_or_default(),
            text,
            cwd,
            busy_policy: pb::BusyPolicy::Unspecified as i32,
            source: SOURCE.into(),
            // Never: the bridge cannot ask anyone, so the daemon's approval rules deny.
            yolo: false,
            client_name: CLIENT_NAME.into(),
            images: Vec::new(),
        })
        .await
        .map_err(|e| failed(e, key.as_deref()))?
        .into_inner();
    let usage = reply.usage.unwrap_or_default();
    Ok(json!({
        "session_key": reply.session_id,
        "answer": reply.answer,
        "iterations": reply.iterations,
        "tool_calls": reply.tool_calls,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cost_usd": usage.cost_usd,
        },
    }))
}

async fn messages_search(daemon: &Daemon, args: &Args<'_>) -> Result<Value, Failure> {
    let query = args.required("query")?;
    let (default, max) = catalog::SEARCH_LIMIT;
    let request = pb::SearchSessionsRequest {
        query: query.clone(),
        limit: args.int("limit", default, 1, max),
        source: args.optional("platform").unwrap_or_default(),
        role: args.optional("role").unwrap_or_default(),
        since: None,
        until: None,
        all_matches: false,
    };
    let hits = daemon
        .sessions()
        .search(request)
        .await
        .map_err(|e| failed(e, None))?
        .into_inner()
        .hits;
    let results: Vec<Value> = hits
        .iter()
        .map(|h| {
            json!({
                "session_key": h.session_id,
                "title": text_or_null(&h.title),
                "source": h.source,
                "matched_role": h.role,
                "match_message_id": h.message_id,
                "snippet": h.snippet,
                "when": output::timestamp(h.created_at.as_ref()),
                "segment_id": h.segment_id,
            })
        })
        .collect();
    Ok(json!({"query": query, "count": results.len(), "results": results}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_cut_on_a_character_boundary() {
        assert_eq!(cut("héllo", 2), "hé");
        assert_eq!(cut("hi", 5), "hi");
        assert_eq!(cut("", 5), "");
    }

    #[test]
    fn not_found_names_the_conversation() {
        let f = failed(tonic::Status::not_found("no session x"), Some("x"));
        assert_eq!(f.text, "Conversation not found: x");
        assert!(!f.disconnected);
        let f = failed(tonic::Status::unavailable("gone"), None);
        assert!(f.disconnected);
        assert!(f.text.contains("gone"), "{}", f.text);
    }
}
