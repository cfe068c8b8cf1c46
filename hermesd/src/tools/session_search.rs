//! `session_search`: recall past conversations. With a `query`, the store's full-text search
//! (lenient syntax, CJK by substring, one hit per conversation, the current one left out); with
//! `session_id` + `around_message_id`, a window of messages around that one in its segment; with
//! nothing, the most recent sessions.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Concurrency, Tool, ToolContext, ToolError};
use crate::store::{
    self, ListFilter, StoreError,
    search::{self, SearchQuery},
};

const DEFAULT_LIMIT: u64 = 3;
const MAX_LIMIT: u64 = 10;
const EXCERPT_CHARS: usize = 600;

pub struct SessionSearchTool;

#[async_trait]
impl Tool for SessionSearchTool {
    fn name(&self) -> &'static str {
        "session_search"
    }
    fn has_effects(&self, _args: &Value) -> bool {
        false
    }

    fn toolset(&self) -> &'static str {
        "session_search"
    }

    fn schema(&self) -> Value {
        json!({
            "name": "session_search",
            "description": "Recall past conversations. `query`: full-text search (words, \"phrases\", \
                AND/OR/NOT), one hit per session with match_message_id. `session_id` + \
                `around_message_id`: read messages around that one. No arguments: recent sessions.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "description": "Sessions to return (default 3, max 10).", "default": 3},
                    "sort": {"type": "string", "enum": ["newest", "oldest"]},
                    "session_id": {"type": "string"},
                    "around_message_id": {"type": "integer"},
                    "window": {"type": "integer", "description": "Messages each side (default 5).", "default": 5},
                    "role_filter": {"type": "string", "enum": ["user", "assistant"]}
                },
                "required": []
            }
        })
    }

    fn concurrency(&self, _args: &Value) -> Concurrency {
        Concurrency::Safe
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_LIMIT)
            .clamp(1, MAX_LIMIT) as u32;
        let query = args
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        let session = args.get("session_id").and_then(Value::as_str);
        let anchor = args.get("around_message_id").and_then(Value::as_i64);
        let store = ctx.services.store.clone();
        let result = match (session, anchor) {
            (Some(session), Some(anchor)) => {
                let window = args
                    .get("window")
                    .and_then(Value::as_u64)
                    .unwrap_or(5)
                    .min(50) as i64;
                let session = session.to_string();
                store
                    .read(move |conn| scroll(conn, &session, anchor, window))
                    .await
            }
            _ if query.is_empty() => store.read(move |conn| browse(conn, limit)).await,
            _ => {
                if search::fts_query(query).is_none() {
                    return Err(ToolError::Arguments(
                        "the query has no words to search for".into(),
                    ));
                }
                let request = SearchQuery {
                    text: query.to_string(),
                    limit,
                    role: args
                        .get("role_filter")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    exclude_conversation: Some(ctx.session_id.clone()),
                    lenient: true,
                    ..SearchQuery::default()
                };
                let sort = args.get("sort").and_then(Value::as_str).map(str::to_string);
                store
                    .read(move |conn| discover(conn, &request, sort.as_deref()))
                    .await
            }
        };
        result.map_err(|e| ToolError::Failed(format!("session search failed: {e}")))
    }
}

fn excerpt(text: &str) -> String {
    let mut out: String = text.chars().take(EXCERPT_CHARS).collect();
    if text.chars().count() > EXCERPT_CHARS {
        out.push('…');
    }
    out
}

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

fn discover(
    conn: &rusqlite::Connection,
    request: &SearchQuery,
    sort: Option<&str>,
) -> Result<Value, StoreError> {
    let mut hits = search::search(conn, request)?;
    match sort {
        Some("newest") => hits.sort_by_key(|h| std::cmp::Reverse(h.created_at)),
        Some("oldest") => hits.sort_by_key(|h| h.created_at),
        _ => {}
    }
    let results: Vec<Value> = hits
        .iter()
        .map(|h| {
            json!({
                "session_id": h.segment_id,
                "title": h.title,
                "source": h.source,
                "when": rfc3339(h.created_at),
                "match_message_id": h.message_id,
                "role": h.role,
                "excerpt": excerpt(&h.snippet),
            })
        })
        .collect();
    let mut out = json!({
        "success": true, "mode": "discover", "query": request.text,
        "count": results.len(), "results": results,
    });
    if hits.is_empty() {
        out["message"] = json!("No matching sessions found.");
    }
    Ok(out)
}

fn scroll(
    conn: &rusqlite::Connection,
    session: &str,
    anchor: i64,
    window: i64,
) -> Result<Value, StoreError> {
    let row = store::resolve_conversation(conn, session)?;
    // The anchor may sit in an older segment of the conversation (before a compression).
    let segments = store::conversation_segments(conn, &row.id)?;
    let anchor_segment: Option<String> = conn
        .query_row(
            "SELECT session_id FROM messages WHERE id = ?1",
            [anchor],
            |r| r.get(0),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })
        .map_err(StoreError::sql("find the anchor message"))?;
    let segment = anchor_segment
        .filter(|s| segments.contains(s))
        .unwrap_or_else(|| row.id.clone());
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, role, content, created_at FROM messages
             WHERE session_id = ?1 AND id BETWEEN ?2 - ?3 AND ?2 + ?3
               AND role IN ('user', 'assistant') ORDER BY id",
        )
        .map_err(StoreError::sql("read window"))?;
    let messages: Vec<Value> = stmt
        .query_map(rusqlite::params![segment, anchor, window * 4], |r| {
            Ok(json!({
                "id": r.get::<_, i64>(0)?,
                "role": r.get::<_, String>(1)?,
                "content": excerpt(&r.get::<_, String>(2)?),
                "when": rfc3339(r.get::<_, i64>(3)?),
            }))
        })
        .map_err(StoreError::sql("read window"))?
        .collect::<Result<_, _>>()
        .map_err(StoreError::sql("read window"))?;
    Ok(json!({
        "success": true, "mode": "scroll", "session_id": segment, "title": row.title,
        "messages": messages,
    }))
}

fn browse(conn: &rusqlite::Connection, limit: u32) -> Result<Value, StoreError> {
    let rows = store::list_sessions(
        conn,
        &ListFilter {
            limit,
            source: None,
            all_segments: false,
        },
    )?;
    let results: Vec<Value> = rows
        .iter()
        .map(|s| {
            json!({
                "session_id": s.id, "title": s.title, "source": s.source,
                "when": rfc3339(s.updated_at), "message_count": s.message_count,
            })
        })
        .collect();
    Ok(json!({
        "success": true, "mode": "browse", "count": results.len(), "results": results,
        "message": "Most recent sessions. Pass query= to search.",
    }))
}
