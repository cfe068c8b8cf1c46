//! Tests for message search, and the database fixture they share (the daemon's migrations).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cjk_tests;
mod query_tests;
mod search_tests;
mod walk_tests;

use rusqlite::{Connection, params};

use super::{SearchHit, SearchQuery, register_functions, search};

/// The daemon's whole schema (its migrations, CJK index included), as its writer has it.
pub fn migrate(conn: &Connection) {
    register_functions(conn).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = ON;").unwrap();
    crate::store::migrations::apply(conn).unwrap();
}

/// A fresh in-memory database with the full schema.
pub fn db() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    migrate(&conn);
    conn
}

/// Insert a session row.
pub fn session(conn: &Connection, id: &str, source: &str, title: Option<&str>, lineage: &str) {
    conn.execute(
        "INSERT INTO sessions (id, source, title, lineage, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, 0, 0)",
        params![id, source, title, lineage],
    )
    .unwrap();
}

/// Make `newer` the compression continuation of `older`.
pub fn continue_with(conn: &Connection, older: &str, newer: &str) {
    conn.execute(
        "UPDATE sessions SET continued_by = ?2 WHERE id = ?1",
        params![older, newer],
    )
    .unwrap();
    conn.execute(
        "UPDATE sessions SET parent_session_id = ?1, lineage = 'compression' WHERE id = ?2",
        params![older, newer],
    )
    .unwrap();
}

/// Insert a message; returns its id.
pub fn message(conn: &Connection, session: &str, role: &str, content: &str, at: i64) -> i64 {
    conn.execute(
        "INSERT INTO messages (session_id, role, content, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![session, role, content, at],
    )
    .unwrap();
    conn.last_insert_rowid()
}

/// A strict query with default filters.
pub fn q(text: &str) -> SearchQuery {
    SearchQuery {
        text: text.to_string(),
        limit: 20,
        ..SearchQuery::default()
    }
}

/// Conversation ids of the hits of `query`, sorted.
pub fn conversations(conn: &Connection, query: &SearchQuery) -> Vec<String> {
    let mut ids: Vec<String> = search(conn, query)
        .unwrap()
        .into_iter()
        .map(|h: SearchHit| h.conversation_id)
        .collect();
    ids.sort();
    ids
}
