//! A conversation as a chain of segments: compression continues a conversation in a new segment
//! (`continued_by` on the old one points at it). Finding every segment of a chain, starting the
//! next one, and reading the chain's event log as one.

use rusqlite::{Connection, Transaction, params};

use super::{
    NewMessage, SessionRow, StoreError, append_message, get_session, now_ms, resolve_conversation,
};

/// Every segment of the conversation `?1` belongs to, as a CTE named `segments(id, depth)`:
/// older segments have lower depth, the one given has 0.
pub(super) const SEGMENTS_CTE: &str = "WITH RECURSIVE
    back(id, parent, lineage, depth) AS (
        SELECT id, parent_session_id, lineage, 0 FROM sessions WHERE id = ?1
        UNION ALL
        SELECT s.id, s.parent_session_id, s.lineage, b.depth - 1 FROM sessions s
          JOIN back b ON s.id = b.parent AND b.lineage = 'compression'
    ),
    fwd(id, next, depth) AS (
        SELECT id, continued_by, 0 FROM sessions WHERE id = ?1
        UNION ALL
        SELECT s.id, s.continued_by, f.depth + 1 FROM sessions s JOIN fwd f ON s.id = f.next
    ),
    segments(id, depth) AS (SELECT id, depth FROM back UNION SELECT id, depth FROM fwd)";

/// The ids of every segment of `id`'s conversation, oldest first; empty when `id` is unknown.
pub fn conversation_segments(conn: &Connection, id: &str) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "{SEGMENTS_CTE} SELECT id FROM segments ORDER BY depth"
        ))
        .map_err(StoreError::sql("find conversation segments"))?;
    let rows = stmt
        .query_map([id], |row| row.get(0))
        .map_err(StoreError::sql("find conversation segments"))?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("find conversation segments"))
}

/// Continue the conversation whose newest segment is `from` in a new segment holding
/// `messages` (the compressed context): same source, title, model, cwd and busy policy; its
/// event numbering goes on from the old segment's. Its system prompt is built again by its first
/// turn (see `agent::session_prompt`). The old segment is ended.
pub fn start_compressed_segment(
    tx: &Transaction<'_>,
    from: &str,
    messages: &[NewMessage],
) -> Result<SessionRow, StoreError> {
    let old = resolve_conversation(tx, from)?;
    if old.id != from {
        return Err(StoreError::Refused(format!(
            "session `{from}` was already continued by `{}`",
            old.id
        )));
    }
    let now = now_ms();
    let mut attempt = 0;
    let id = loop {
        let id = crate::ids::session_id();
        let inserted = tx
            .execute(
                "INSERT OR IGNORE INTO sessions
                   (id, parent_session_id, lineage, source, title, model, cwd,
                    busy_policy, created_at, updated_at, last_seq, conversation_id,
                    seq_reserved)
                 SELECT ?1, id, 'compression', source, title, model, cwd,
                        busy_policy, ?2, ?2, last_seq, coalesce(conversation_id, id),
                        seq_reserved
                 FROM sessions WHERE id = ?3",
                params![id, now, old.id],
            )
            .map_err(StoreError::sql("start a compressed segment"))?;
        if inserted == 1 {
            break id;
        }
        attempt += 1;
        if attempt > 16 {
            return Err(StoreError::Task(
                "could not allocate a unique session id".into(),
            ));
        }
    };
    tx.execute(
        "UPDATE sessions SET continued_by = ?1, ended_at = ?2, end_reason = 'compression'
         WHERE id = ?3",
        params![id, now, old.id],
    )
    .map_err(StoreError::sql("end the compressed segment"))?;
    for message in messages {
        append_message(tx, &id, message)?;
    }
    get_session(tx, &id)?.ok_or(StoreError::SessionNotFound(id))
}
