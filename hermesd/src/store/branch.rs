//! Branching: a new conversation that starts as a copy of another up to one of its messages.

use rusqlite::{OptionalExtension, Transaction, params};

use super::{
    Lineage, NewSession, SessionRow, StoreError, chain::conversation_segments, get_session,
    insert_session, now_ms, resolve_conversation,
};

/// Start a branch of `id`'s conversation holding its messages up to and including
/// `up_to_message` (`None`: the whole newest segment). The message must belong to the
/// conversation; its segment's messages up to it are copied, with the system prompt.
pub fn branch_conversation(
    tx: &Transaction<'_>,
    id: &str,
    up_to_message: Option<i64>,
    title: Option<&str>,
) -> Result<SessionRow, StoreError> {
    let newest = resolve_conversation(tx, id)?;
    let (segment_id, last_id) = match up_to_message {
        None => (newest.id.clone(), i64::MAX),
        Some(message_id) => {
            let owner: Option<String> = tx
                .query_row(
                    "SELECT session_id FROM messages WHERE id = ?1",
                    [message_id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(StoreError::sql("find the branch point"))?;
            let segments = conversation_segments(tx, &newest.id)?;
            match owner.filter(|owner| segments.contains(owner)) {
                Some(owner) => (owner, message_id),
                None => {
                    return Err(StoreError::Refused(format!(
                        "message {message_id} is not part of session `{}`",
                        newest.id
                    )));
                }
            }
        }
    };
    let segment = get_session(tx, &segment_id)?.ok_or(StoreError::SessionNotFound(segment_id))?;
    let title = title
        .map(str::to_string)
        .or_else(|| newest.title.as_ref().map(|t| format!("{t} (branch)")));
    let branch = insert_session(
        tx,
        &NewSession {
            source: segment.source.clone(),
            title,
            model: segment.model.clone(),
            cwd: segment.cwd.clone(),
            parent_session_id: Some(newest.id.clone()),
            lineage: Lineage::Branch,
        },
    )?;
    let copied = tx
        .execute(
            "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, tool_name,
                                   reasoning, finish_reason, created_at, provider_items)
             SELECT ?2, role, content, tool_calls, tool_call_id, tool_name, reasoning,
                    finish_reason, created_at, provider_items
             FROM messages WHERE session_id = ?1 AND id <= ?3 ORDER BY id",
            params![segment.id, branch.id, last_id],
        )
        .map_err(StoreError::sql("copy messages into the branch"))?;
    tx.execute(
        "UPDATE sessions SET message_count = ?2, updated_at = ?3,
             system_prompt = (SELECT system_prompt FROM sessions WHERE id = ?4)
         WHERE id = ?1",
        params![branch.id, copied as i64, now_ms(), segment.id],
    )
    .map_err(StoreError::sql("finish the branch"))?;
    get_session(tx, &branch.id)?.ok_or(StoreError::SessionNotFound(branch.id))
}
