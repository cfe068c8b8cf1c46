//! A v6 (hermes-agent v0.8.0) shaped state.db, built by SQL with only that version's columns,
//! imports too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rusqlite::{Connection, OptionalExtension};

use super::test_support::hermesd_db;
use super::tests::{links, run};
use super::*;

/// hermes-agent v0.8.0 (schema v6): 26 session columns, 13 message columns, legacy FTS.
const V6_SCHEMA: &str = r#"
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (6);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
    end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0, billing_provider TEXT, billing_base_url TEXT,
    billing_mode TEXT, estimated_cost_usd REAL, actual_cost_usd REAL, cost_status TEXT,
    cost_source TEXT, pricing_version TEXT, title TEXT,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
    reasoning_details TEXT, codex_reasoning_items TEXT
);
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content=messages, content_rowid=id);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
"#;

const V6_DATA: &str = r#"
INSERT INTO sessions (id, source, model, started_at, ended_at, end_reason, title, input_tokens,
                      estimated_cost_usd)
    VALUES ('20260401_090000_aaaaaa', 'telegram', 'm', 1775034000.5, 1775034100.0, 'compression',
            'Old chat', 10, 0.25);
INSERT INTO sessions (id, source, model, parent_session_id, started_at, title)
    VALUES ('20260401_090140_bbbbbb', 'telegram', 'm', '20260401_090000_aaaaaa', 1775034100.0,
            'Old chat #2');
INSERT INTO sessions (id, source, parent_session_id, started_at)
    VALUES ('20260401_100000_cccccc', 'cron', 'gone_parent', 1775037600.0);
INSERT INTO messages (session_id, role, content, timestamp) VALUES
    ('20260401_090000_aaaaaa', 'user', 'hello', 1775034001.0),
    ('20260401_090000_aaaaaa', 'session_meta', '{}', 1775034001.5);
INSERT INTO messages (session_id, role, content, tool_calls, timestamp, finish_reason, reasoning)
    VALUES ('20260401_090000_aaaaaa', 'assistant', NULL,
            '[{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]',
            1775034002.0, 'tool_calls', 'think');
INSERT INTO messages (session_id, role, content, tool_call_id, tool_name, timestamp) VALUES
    ('20260401_090000_aaaaaa', 'tool', 'file body', 'c1', 'read_file', 1775034003.0);
INSERT INTO messages (session_id, role, content, timestamp) VALUES
    ('20260401_090140_bbbbbb', 'user', 'summary and more', 1775034101.0),
    ('20260401_100000_cccccc', 'user', 'cron prompt', 1775037601.0);
"#;

#[test]
fn v6_database_built_by_sql_imports() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let python = Connection::open(&path).unwrap();
    // Python's sqlite3 leaves foreign keys off, so a dangling parent id can exist.
    python.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    python.execute_batch(V6_SCHEMA).unwrap();
    python.execute_batch(V6_DATA).unwrap();
    drop(python);

    let source = open_source(dir.path()).unwrap();
    let mut target = hermesd_db();
    let report = run(&source, &mut target);
    assert_eq!(
        report,
        ImportReport {
            sessions: 3,
            messages: 5,
            skipped_messages: 1,
            source_schema_version: Some(6),
            ..ImportReport::default()
        }
    );
    let (a, b, c) = (
        "20260401_090000_aaaaaa",
        "20260401_090140_bbbbbb",
        "20260401_100000_cccccc",
    );
    assert_eq!(
        links(&target, a),
        (
            None,
            "root".into(),
            Some(b.into()),
            Some("Old chat".into()),
            3
        )
    );
    assert_eq!(
        links(&target, b),
        (
            Some(a.into()),
            "compression".into(),
            None,
            Some("Old chat #2".into()),
            1
        )
    );
    assert_eq!(
        links(&target, c),
        (None, "root".into(), None, None, 1),
        "missing parent -> root"
    );
    let row: (String, Option<String>, Option<String>, i64) = target
        .query_row(
            "SELECT content, reasoning, finish_reason, created_at FROM messages WHERE tool_calls IS NOT NULL",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        row,
        (
            String::new(),
            Some("think".into()),
            Some("tool_calls".into()),
            1_775_034_002_000
        )
    );
    let session: (String, i64, i64, Option<i64>, Option<String>, Option<f64>) = target
        .query_row(
            "SELECT source, created_at, updated_at, ended_at, end_reason, cost_usd FROM sessions WHERE id = ?1",
            [a],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
        )
        .unwrap();
    assert_eq!(
        session,
        (
            "telegram".into(),
            1_775_034_000_500,
            1_775_034_003_000,
            Some(1_775_034_100_000),
            Some("compression".into()),
            Some(0.25)
        )
    );
    let cron_model: Option<String> = target
        .query_row("SELECT model FROM sessions WHERE id = ?1", [c], |r| {
            r.get(0)
        })
        .optional()
        .unwrap()
        .flatten();
    assert_eq!(cron_model.as_deref(), Some(""), "NULL model -> ''");
}
