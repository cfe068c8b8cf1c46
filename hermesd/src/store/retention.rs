//! Retention and upkeep: removing conversations nobody touched for a while, giving the freed
//! pages back to the file system a few at a time (incremental vacuum, never one blocking
//! VACUUM), and merging the full-text indexes' segments a step at a time.

use rusqlite::{Connection, Transaction, params};

use super::{StoreError, delete_conversation};

/// Conversations (by their newest segment) last active before `cutoff_ms`, oldest first.
pub fn stale_conversations(conn: &Connection, cutoff_ms: i64) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id FROM sessions WHERE continued_by IS NULL AND updated_at < ?1
             ORDER BY updated_at",
        )
        .map_err(StoreError::sql("find stale sessions"))?;
    let rows = stmt
        .query_map(params![cutoff_ms], |row| row.get(0))
        .map_err(StoreError::sql("find stale sessions"))?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("find stale sessions"))
}

/// Delete these conversations (every segment, message and event, and the reviews and subagents
/// they own); returns the ids of the sessions removed. An id deleted already (as part of an
/// earlier one's chain) is skipped.
pub fn delete_conversations(
    tx: &Transaction<'_>,
    heads: &[String],
) -> Result<Vec<String>, StoreError> {
    let mut removed = Vec::new();
    for head in heads {
        match delete_conversation(tx, head) {
            Ok(ids) => removed.extend(ids),
            Err(StoreError::SessionNotFound(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(removed)
}

/// Return up to `pages` free pages to the file system; returns the free pages left.
pub fn vacuum_step(conn: &Connection, pages: u32) -> Result<i64, StoreError> {
    conn.execute_batch(&format!("PRAGMA incremental_vacuum({pages})"))
        .map_err(StoreError::sql("incremental vacuum"))?;
    conn.query_row("PRAGMA freelist_count", [], |row| row.get(0))
        .map_err(StoreError::sql("count free pages"))
}

/// Do up to `pages` pages of segment merging in each full-text index; true when more is left.
/// (FTS5 reports work done through the change counter: under 2 changes means nothing to merge.)
pub fn fts_merge_step(conn: &Connection, pages: u32) -> Result<bool, StoreError> {
    let mut more = false;
    for table in ["messages_fts", "messages_cjk"] {
        let before = conn.total_changes();
        conn.execute_batch(&format!(
            "INSERT INTO {table} ({table}, rank) VALUES ('merge', {pages})"
        ))
        .map_err(StoreError::sql("merge full-text index segments"))?;
        more |= conn.total_changes() - before >= 2;
    }
    Ok(more)
}
