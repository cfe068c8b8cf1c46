//! Tests for message search, and the database fixture they share (the daemon's schema
//! migration 1, copied, followed by [`CJK_MIGRATION`]).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bench;
mod cjk_tests;
mod query_tests;
mod search_tests;

use rusqlite::{Connection, params};

use super::{CJK_MIGRATION, SearchHit, SearchQuery, register_functions, search};

/// The daemon's migration 1 (sessions, messages, events, `messages_fts`), as shipped.
pub const SCHEMA_V1: &str = r#"
    CREATE TABLE sessions (
        id                 TEXT PRIMARY KEY,
        parent_session_id  TEXT REFERENCES sessions(id) ON DELETE SET NULL,
        lineage            TEXT NOT NULL DEFAULT 'root'
                           CHECK (lineage IN ('root', 'compression', 'branch', 'subagent')),
        continued_by       TEXT,
        source             TEXT NOT NULL,
        title              TEXT,
        model              TEXT NOT NULL DEFAULT '',
        cwd                TEXT NOT NULL DEFAULT '',
        system_prompt      TEXT,
        busy_policy        TEXT NOT NULL DEFAULT 'queue',
        created_at         INTEGER NOT NULL,
        updated_at         INTEGER NOT NULL,
        ended_at           INTEGER,
        end_reason         TEXT,
        message_count      INTEGER NOT NULL DEFAULT 0,
        input_tokens       INTEGER NOT NULL DEFAULT 0,
        output_tokens      INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
        cost_usd           REAL,
        last_seq           INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX sessions_by_update ON sessions (updated_at DESC);
    CREATE INDEX sessions_by_parent ON sessions (parent_session_id);
    CREATE INDEX sessions_heads ON sessions (updated_at DESC) WHERE continued_by IS NULL;

    CREATE TABLE messages (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        role          TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
        content       TEXT NOT NULL DEFAULT '',
        tool_calls    TEXT,
        tool_call_id  TEXT,
        tool_name     TEXT,
        reasoning     TEXT,
        finish_reason TEXT,
        input_tokens  INTEGER,
        output_tokens INTEGER,
        created_at    INTEGER NOT NULL
    );
    CREATE INDEX messages_by_session ON messages (session_id, id);

    CREATE TABLE events (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        turn_id    TEXT,
        kind       TEXT NOT NULL,
        payload    BLOB NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;

    CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, content = 'messages', content_rowid = 'id', tokenize = 'unicode61'
    );
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END;
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
        INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
    END;
"#;

/// Apply schema 1 then the CJK migration, as the daemon's writer would.
pub fn migrate(conn: &Connection) {
    register_functions(conn).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = ON;").unwrap();
    conn.execute_batch(SCHEMA_V1).unwrap();
    conn.execute_batch(CJK_MIGRATION).unwrap();
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
