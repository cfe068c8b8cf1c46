//! Events for a conversation that has messages but no event log (one imported from Python
//! Hermes): its last user and assistant messages become `UserMessage` / `AssistantMessage`
//! events, so an attaching client sees the backlog as for any other conversation.

use hermes_proto::pb::{self, session_event::Kind};
use prost::Message as _;
use rusqlite::{Transaction, params};

use super::{StoreError, put_event, resolve_conversation};

/// A message to announce: id, role, content, reasoning, tool calls, created_at.
type Backfilled = (i64, String, String, Option<String>, Option<String>, i64);

/// Give the conversation `id` events for its last `limit` user and assistant messages when it
/// has none yet; returns how many were written (0 when it already has events).
pub fn backfill_events(tx: &Transaction<'_>, id: &str, limit: u32) -> Result<usize, StoreError> {
    let segment = resolve_conversation(tx, id)?;
    if segment.last_seq > 0 {
        return Ok(0);
    }
    let any_event: bool = tx
        .query_row(
            &format!(
                "{} SELECT EXISTS (SELECT 1 FROM events WHERE session_id IN (SELECT id FROM segments))",
                super::chain::SEGMENTS_CTE
            ),
            [&segment.id],
            |row| row.get(0),
        )
        .map_err(StoreError::sql("look for events"))?;
    if any_event {
        return Ok(0);
    }
    let mut rows: Vec<Backfilled> = {
        let mut stmt = tx
            .prepare_cached(
                "SELECT id, role, content, reasoning, tool_calls, created_at FROM messages
                 WHERE session_id = ?1 AND role IN ('user', 'assistant')
                 ORDER BY id DESC LIMIT ?2",
            )
            .map_err(StoreError::sql("read messages to backfill"))?;
        let found = stmt
            .query_map(params![segment.id, i64::from(limit)], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })
            .map_err(StoreError::sql("read messages to backfill"))?;
        found
            .collect::<Result<_, _>>()
            .map_err(StoreError::sql("read messages to backfill"))?
    };
    rows.reverse();
    for (seq, (message_id, role, content, reasoning, tool_calls, created_at)) in
        (1_i64..).zip(rows.iter())
    {
        let (kind, name) = if role == "user" {
            (
                Kind::UserMessage(pb::UserMessage {
                    message_id: *message_id as u64,
                    text: content.clone(),
                }),
                "user_message",
            )
        } else {
            (
                Kind::AssistantMessage(pb::AssistantMessage {
                    message_id: *message_id as u64,
                    text: content.clone(),
                    reasoning: reasoning.clone().unwrap_or_default(),
                    tool_calls: tool_calls.clone().unwrap_or_default(),
                }),
                "assistant_message",
            )
        };
        let event = pb::SessionEvent {
            session_id: segment.id.clone(),
            seq: seq as u64,
            turn_id: String::new(),
            at: Some(prost_types::Timestamp {
                seconds: created_at.div_euclid(1000),
                nanos: (created_at.rem_euclid(1000) * 1_000_000) as i32,
            }),
            kind: Some(kind),
        };
        put_event(tx, &segment.id, seq, None, name, &event.encode_to_vec())?;
    }
    Ok(rows.len())
}
