//! The API server's stored Responses (`api_responses`): each answer of `POST /v1/responses`,
//! kept so `previous_response_id` can continue its conversation and `GET`/`DELETE
//! /v1/responses/{id}` can find it. At most [`KEEP`] are kept (the oldest go first), and a
//! response goes with its conversation.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::StoreError;

/// Responses kept.
pub const KEEP: i64 = 1_000;

pub const RESPONSES_MIGRATION: &str = r#"
CREATE TABLE api_responses (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    created_at      INTEGER NOT NULL,
    body            TEXT NOT NULL
);
CREATE INDEX api_responses_created ON api_responses (created_at);
CREATE INDEX api_responses_conversation ON api_responses (conversation_id);
"#;

/// Keep response `id` (its JSON `body`) of `conversation_id`, dropping the oldest past [`KEEP`].
pub fn put_api_response(
    tx: &Transaction<'_>,
    id: &str,
    conversation_id: &str,
    created_at: i64,
    body: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT OR REPLACE INTO api_responses (id, conversation_id, created_at, body)
         VALUES (?1, ?2, ?3, ?4)",
        params![id, conversation_id, created_at, body],
    )
    .map_err(StoreError::sql("store an API response"))?;
    tx.execute(
        "DELETE FROM api_responses WHERE id IN (
           SELECT id FROM api_responses ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?1)",
        params![KEEP],
    )
    .map_err(StoreError::sql("trim the API responses"))?;
    Ok(())
}

/// Response `id`: its conversation and JSON body.
pub fn api_response(conn: &Connection, id: &str) -> Result<Option<(String, String)>, StoreError> {
    conn.query_row(
        "SELECT conversation_id, body FROM api_responses WHERE id = ?1",
        params![id],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
    .optional()
    .map_err(StoreError::sql("read an API response"))
}

/// Forget response `id`; false when there was none.
pub fn delete_api_response(tx: &Transaction<'_>, id: &str) -> Result<bool, StoreError> {
    tx.execute("DELETE FROM api_responses WHERE id = ?1", params![id])
        .map(|n| n > 0)
        .map_err(StoreError::sql("delete an API response"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_newest_are_kept_and_go_with_their_conversation() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::store::migrations::apply(&conn).unwrap();
        conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
        let tx = conn.transaction().unwrap();
        tx.execute(
            "INSERT INTO sessions (id, lineage, source, model, cwd, created_at, updated_at)
             VALUES ('s1', 'root', 'api_server', '', '', 0, 0)",
            [],
        )
        .unwrap();
        for i in 0..KEEP + 5 {
            put_api_response(&tx, &format!("resp_{i}"), "s1", i, "{}").unwrap();
        }
        let kept: i64 = tx
            .query_row("SELECT count(*) FROM api_responses", [], |r| r.get(0))
            .unwrap();
        assert_eq!(kept, KEEP);
        assert!(api_response(&tx, "resp_0").unwrap().is_none());
        assert!(
            api_response(&tx, &format!("resp_{}", KEEP + 4))
                .unwrap()
                .is_some()
        );
        assert!(delete_api_response(&tx, "resp_10").unwrap());
        assert!(!delete_api_response(&tx, "resp_10").unwrap());
        tx.execute("DELETE FROM sessions WHERE id = 's1'", [])
            .unwrap();
        let left: i64 = tx
            .query_row("SELECT count(*) FROM api_responses", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 0);
    }
}
