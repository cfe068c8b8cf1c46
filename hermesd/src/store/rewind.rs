//! Taking back the last exchange of a conversation (`/undo`, and `/retry` before it runs the
//! message again): its messages and the events that showed them go; the seq counter never goes
//! back, so a client that saw them learns of the change through later events.

use hermes_proto::pb::{self, session_event::Kind};
use prost::Message as _;
use rusqlite::{Transaction, params};

use super::{StoreError, now_ms, resolve_conversation};

/// What an undo removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    /// The segment it was removed from (the conversation's newest).
    pub segment_id: String,
    /// The text of the user message that opened the exchange.
    pub user_text: String,
    pub removed_messages: usize,
}

/// Remove the conversation's last user message and everything after it. Refused when the
/// newest segment has no user message (nothing to undo, or only a compression summary).
pub fn undo_last_exchange(tx: &Transaction<'_>, id: &str) -> Result<Undone, StoreError> {
    let segment = resolve_conversation(tx, id)?;
    let last_user: Option<(i64, String)> = tx
        .query_row(
            "SELECT id, content FROM messages WHERE session_id = ?1 AND role = 'user'
             ORDER BY id DESC LIMIT 1",
            [&segment.id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })
        .map_err(StoreError::sql("find the last user message"))?;
    let Some((message_id, user_text)) = last_user else {
        return Err(StoreError::Refused(format!(
            "session `{}` has no exchange to undo",
            segment.id
        )));
    };
    let removed = tx
        .execute(
            "DELETE FROM messages WHERE session_id = ?1 AND id >= ?2",
            params![segment.id, message_id],
        )
        .map_err(StoreError::sql("remove the last exchange"))?;
    tx.execute(
        "UPDATE sessions SET message_count = max(0, message_count - ?2), updated_at = ?3
         WHERE id = ?1",
        params![segment.id, removed as i64, now_ms()],
    )
    .map_err(StoreError::sql("count removed messages"))?;
    remove_events_from(tx, &segment.id, message_id as u64)?;
    Ok(Undone {
        segment_id: segment.id,
        user_text,
        removed_messages: removed,
    })
}

/// Remove the stored events from the one announcing user message `message_id` on, and the
/// turn start it opened, so a replay no longer shows the exchange.
fn remove_events_from(
    tx: &Transaction<'_>,
    segment_id: &str,
    message_id: u64,
) -> Result<(), StoreError> {
    let announced: Option<(i64, Option<String>)> = {
        let mut stmt = tx
            .prepare_cached(
                "SELECT seq, turn_id, payload FROM events
                 WHERE session_id = ?1 AND kind = 'user_message' ORDER BY seq DESC",
            )
            .map_err(StoreError::sql("find the exchange's events"))?;
        let mut rows = stmt
            .query([segment_id])
            .map_err(StoreError::sql("find the exchange's events"))?;
        let mut found = None;
        while let Some(row) = rows
            .next()
            .map_err(StoreError::sql("find the exchange's events"))?
        {
            let payload: Vec<u8> = row
                .get(2)
                .map_err(StoreError::sql("find the exchange's events"))?;
            let announces = pb::SessionEvent::decode(payload.as_slice()).is_ok_and(|event| {
                matches!(event.kind, Some(Kind::UserMessage(m)) if m.message_id == message_id)
            });
            if announces {
                found = Some((
                    row.get(0)
                        .map_err(StoreError::sql("find the exchange's events"))?,
                    row.get(1)
                        .map_err(StoreError::sql("find the exchange's events"))?,
                ));
                break;
            }
        }
        found
    };
    let Some((seq, turn_id)) = announced else {
        return Ok(());
    };
    tx.execute(
        "DELETE FROM events WHERE session_id = ?1
           AND (seq >= ?2 OR (kind = 'turn_started' AND turn_id IS ?3))",
        params![segment_id, seq, turn_id],
    )
    .map_err(StoreError::sql("remove the exchange's events"))?;
    Ok(())
}
