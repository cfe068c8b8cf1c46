//! Test support: hermesd's schema (migration 1 copied verbatim from `store/migrations.rs`, so the
//! FTS triggers run) plus the import bookkeeping, and the Python fixture on disk.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use rusqlite::Connection;

use super::IMPORT_MIGRATION;

/// hermesd migration 1, verbatim.
pub(super) const HERMESD_MIGRATION_1: &str = r#"
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

/// The state.db written by the real Python Hermes 0.19 (`fixtures/make_fixture.py`).
pub(super) const FIXTURE: &[u8] = include_bytes!("fixtures/hermes-0.19-state.db");

/// A fresh hermesd database in memory, foreign keys on as the daemon runs them.
pub(super) fn hermesd_db() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
    conn.execute_batch(HERMESD_MIGRATION_1).unwrap();
    conn.execute_batch(IMPORT_MIGRATION).unwrap();
    conn
}

/// The fixture copied into a temporary directory (writable, so tests can play Python).
pub(super) fn fixture_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    std::fs::write(&path, FIXTURE).unwrap();
    (dir, path)
}
