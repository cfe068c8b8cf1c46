//! The per-session event log: every event a session emits, numbered by a per-session `seq`.

use rusqlite::{Connection, Transaction, params};

use super::{StoreError, chain::SEGMENTS_CTE, now_ms};

/// A stored event; `payload` is the encoded `hermes.v1.SessionEvent`.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    pub seq: i64,
    pub turn_id: Option<String>,
    pub kind: String,
    pub payload: Vec<u8>,
    pub created_at: i64,
}

/// Store an event whose seq the caller assigned (the live session numbers events, including
/// deltas that are never stored); the session's `last_seq` moves up to it.
pub fn put_event(
    tx: &Transaction<'_>,
    session_id: &str,
    seq: i64,
    turn_id: Option<&str>,
    kind: &str,
    payload: &[u8],
) -> Result<(), StoreError> {
    // The session first: a deleted one is "not found", not a foreign-key failure.
    let changed = tx
        .execute(
            "UPDATE sessions SET last_seq = max(last_seq, ?2) WHERE id = ?1",
            params![session_id, seq],
        )
        .map_err(StoreError::sql("advance event seq"))?;
    if changed == 0 {
        return Err(StoreError::SessionNotFound(session_id.to_string()));
    }
    tx.execute(
        "INSERT INTO events (session_id, seq, turn_id, kind, payload, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![session_id, seq, turn_id, kind, payload, now_ms()],
    )
    .map_err(StoreError::sql("store event"))?;
    Ok(())
}

/// Raise the seq high-water mark of `session_id` to `reserved` (never lowers it): seqs up to it
/// may be handed out, stored or not, and a restarted daemon numbers after it.
pub fn reserve_seqs(
    tx: &Transaction<'_>,
    session_id: &str,
    reserved: u64,
) -> Result<(), StoreError> {
    let changed = tx
        .execute(
            "UPDATE sessions SET seq_reserved = max(seq_reserved, ?2) WHERE id = ?1",
            params![session_id, reserved as i64],
        )
        .map_err(StoreError::sql("reserve event seqs"))?;
    if changed == 0 {
        return Err(StoreError::SessionNotFound(session_id.to_string()));
    }
    Ok(())
}

/// The seq to replay after so that the last `n` user and assistant messages of the conversation
/// (every segment of it) are included (0 when it has fewer).
pub fn seq_before_last_messages(
    conn: &Connection,
    session_id: &str,
    n: u32,
) -> Result<i64, StoreError> {
    let found: Option<i64> = conn
        .query_row(
            &format!(
                "{SEGMENTS_CTE} SELECT seq FROM events
                 WHERE session_id IN (SELECT id FROM segments)
                   AND kind IN ('user_message', 'assistant_message')
                 ORDER BY seq DESC LIMIT 1 OFFSET ?2"
            ),
            params![session_id, i64::from(n.max(1)) - 1],
            |row| row.get(0),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })
        .map_err(StoreError::sql("find the last messages"))?;
    // Start at the turn of the oldest message shown: everything after the event before it.
    Ok(found.map_or(0, |seq| (seq - 2).max(0)))
}

/// Events of a conversation (every segment of it: numbering goes on across compression) with
/// seq greater than `since_seq`, in order; `limit` 0 means all.
pub fn events_after(
    conn: &Connection,
    session_id: &str,
    since_seq: i64,
    limit: u32,
) -> Result<Vec<StoredEvent>, StoreError> {
    let limit = if limit == 0 { -1 } else { i64::from(limit) };
    let mut stmt = conn
        .prepare_cached(&format!(
            "{SEGMENTS_CTE} SELECT seq, turn_id, kind, payload, created_at FROM events
             WHERE session_id IN (SELECT id FROM segments) AND seq > ?2 ORDER BY seq LIMIT ?3"
        ))
        .map_err(StoreError::sql("read events"))?;
    let rows = stmt
        .query_map(params![session_id, since_seq, limit], |row| {
            Ok(StoredEvent {
                seq: row.get(0)?,
                turn_id: row.get(1)?,
                kind: row.get(2)?,
                payload: row.get(3)?,
                created_at: row.get(4)?,
            })
        })
        .map_err(StoreError::sql("read events"))?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("read events"))
}
