//! The `messages` table: a session's transcript in the OpenAI message shape.

use rusqlite::{Connection, Row, Transaction, params};

use super::{StoreError, now_ms};

/// A message to append.
#[derive(Debug, Clone, Default)]
pub struct NewMessage {
    pub role: String,
    pub content: String,
    /// JSON array of tool calls.
    pub tool_calls: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub reasoning: Option<String>,
    pub finish_reason: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    /// The provider's own items to send back with this message (the Responses API's encrypted
    /// reasoning), as JSON.
    pub provider_items: Option<String>,
}

/// A stored message.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    pub id: i64,
    pub session_id: String,
    pub role: String,
    pub content: String,
    pub tool_calls: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub reasoning: Option<String>,
    pub finish_reason: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub created_at: i64,
    pub provider_items: Option<String>,
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<MessageRow> {
    Ok(MessageRow {
        id: row.get(0)?,
        session_id: row.get(1)?,
        role: row.get(2)?,
        content: row.get(3)?,
        tool_calls: row.get(4)?,
        tool_call_id: row.get(5)?,
        tool_name: row.get(6)?,
        reasoning: row.get(7)?,
        finish_reason: row.get(8)?,
        input_tokens: row.get(9)?,
        output_tokens: row.get(10)?,
        created_at: row.get(11)?,
        provider_items: row.get(12)?,
    })
}

/// Append a message and bump the session's counters; returns the message id.
pub fn append_message(
    tx: &Transaction<'_>,
    session_id: &str,
    message: &NewMessage,
) -> Result<i64, StoreError> {
    let now = now_ms();
    tx.execute(
        "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, tool_name,
                               reasoning, finish_reason, input_tokens, output_tokens, created_at,
                               provider_items)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            session_id,
            message.role,
            message.content,
            message.tool_calls,
            message.tool_call_id,
            message.tool_name,
            message.reasoning,
            message.finish_reason,
            message.input_tokens,
            message.output_tokens,
            now,
            message.provider_items
        ],
    )
    .map_err(|e| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::ConstraintViolation) => {
            StoreError::SessionNotFound(session_id.to_string())
        }
        _ => StoreError::Sql {
            context: "append message",
            source: e,
        },
    })?;
    let id = tx.last_insert_rowid();
    tx.execute(
        "UPDATE sessions SET message_count = message_count + 1, updated_at = ?2,
             input_tokens = input_tokens + coalesce(?3, 0),
             output_tokens = output_tokens + coalesce(?4, 0)
         WHERE id = ?1",
        params![session_id, now, message.input_tokens, message.output_tokens],
    )
    .map_err(StoreError::sql("count message"))?;
    Ok(id)
}

/// Messages of one session with id greater than `after_id`, oldest first; `limit` 0 means all.
pub fn list_messages(
    conn: &Connection,
    session_id: &str,
    after_id: i64,
    limit: u32,
) -> Result<Vec<MessageRow>, StoreError> {
    let limit = if limit == 0 { -1 } else { i64::from(limit) };
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, session_id, role, content, tool_calls, tool_call_id, tool_name, reasoning,
                    finish_reason, input_tokens, output_tokens, created_at, provider_items
             FROM messages WHERE session_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
        )
        .map_err(StoreError::sql("list messages"))?;
    let rows = stmt
        .query_map(params![session_id, after_id, limit], from_row)
        .map_err(StoreError::sql("list messages"))?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("list messages"))
}

/// The last `limit` user and assistant messages of one session, oldest first.
pub fn recent_exchange_messages(
    conn: &Connection,
    session_id: &str,
    limit: u32,
) -> Result<Vec<MessageRow>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, session_id, role, content, tool_calls, tool_call_id, tool_name, reasoning,
                    finish_reason, input_tokens, output_tokens, created_at, provider_items
             FROM messages WHERE session_id = ?1 AND role IN ('user', 'assistant')
             ORDER BY id DESC LIMIT ?2",
        )
        .map_err(StoreError::sql("read recent messages"))?;
    let rows = stmt
        .query_map(params![session_id, i64::from(limit)], from_row)
        .map_err(StoreError::sql("read recent messages"))?;
    let mut rows: Vec<MessageRow> = rows
        .collect::<Result<_, _>>()
        .map_err(StoreError::sql("read recent messages"))?;
    rows.reverse();
    Ok(rows)
}

/// The content of the tool result answering `call_id` in conversation `conversation` (any of its
/// segments), if stored.
pub fn tool_result_in_conversation(
    conn: &Connection,
    conversation: &str,
    call_id: &str,
) -> Result<Option<String>, StoreError> {
    use rusqlite::OptionalExtension;
    conn.query_row(
        "SELECT content FROM messages
         WHERE role = 'tool' AND tool_call_id = ?2 AND session_id IN
             (SELECT id FROM sessions WHERE id = ?1 OR conversation_id = ?1)
         ORDER BY id DESC LIMIT 1",
        params![conversation, call_id],
        |row| row.get(0),
    )
    .optional()
    .map_err(StoreError::sql("read a tool result"))
}
