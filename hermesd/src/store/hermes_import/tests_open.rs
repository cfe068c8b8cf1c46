//! Opening the source: clear errors for a missing or foreign file, and reading a WAL database
//! while another connection (Python Hermes) is writing it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rusqlite::Connection;

use super::test_support::{FIXTURE, fixture_copy, hermesd_db};
use super::tests::run;
use super::*;

fn open_error(path: &std::path::Path) -> String {
    match open_source(path) {
        Err(e @ StoreError::ImportSource { .. }) => e.to_string(),
        Err(other) => panic!("wrong error kind: {other:?}"),
        Ok(_) => panic!("{} opened", path.display()),
    }
}

#[test]
fn missing_file_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let message = open_error(&dir.path().join("nope/state.db"));
    assert!(message.contains("nope/state.db"), "{message}");
    assert!(message.contains("no such file"), "{message}");
    // A home directory without a state.db names the file it looked for.
    let message = open_error(dir.path());
    assert!(
        message.contains(&format!("{}/state.db", dir.path().display())),
        "{message}"
    );
}

#[test]
fn sqlite_file_that_is_not_hermes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        .unwrap();
    let message = open_error(&path);
    assert!(message.contains("other.db"), "{message}");
    assert!(message.contains("not a Hermes state.db"), "{message}");

    let half = dir.path().join("half.db");
    Connection::open(&half)
        .unwrap()
        .execute_batch("CREATE TABLE sessions (id TEXT); CREATE TABLE messages (id INTEGER)")
        .unwrap();
    let message = open_error(&half);
    assert!(message.contains("sessions.started_at"), "{message}");
    assert!(message.contains("messages.session_id"), "{message}");
}

#[test]
fn file_that_is_not_sqlite_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    std::fs::write(
        &path,
        "this is a text file, long enough to look like a header ....... ",
    )
    .unwrap();
    let message = open_error(&path);
    assert!(
        message.contains("not a readable SQLite database"),
        "{message}"
    );
    assert!(message.contains(&path.display().to_string()), "{message}");
}

#[test]
fn source_is_never_written() {
    let (_dir, path) = fixture_copy();
    let source = open_source(&path).unwrap();
    let err = source.execute("DELETE FROM messages", []).unwrap_err();
    assert!(
        err.to_string().contains("readonly") || err.to_string().contains("read-only"),
        "{err}"
    );
    let mut target = hermesd_db();
    run(&source, &mut target);
    drop(source);
    assert_eq!(std::fs::read(&path).unwrap(), FIXTURE);
}

#[test]
fn reads_a_wal_database_while_python_holds_a_write_transaction() {
    let (_dir, path) = fixture_copy();
    let python = Connection::open(&path).unwrap();
    let mode: String = python
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    python
        .execute_batch(
            "BEGIN IMMEDIATE;
             INSERT INTO messages (session_id, role, content, timestamp, active, compacted)
                 VALUES ('20250915_013000_777777', 'user', 'uncommitted', 1.0, 1, 0);",
        )
        .unwrap();

    let source = open_source(&path).unwrap();
    let mut target = hermesd_db();
    let report = run(&source, &mut target);
    assert_eq!(report.sessions, 5);
    let uncommitted: i64 = target
        .query_row(
            "SELECT count(*) FROM messages WHERE content = 'uncommitted'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(uncommitted, 0, "only committed rows are read");
    python.execute_batch("COMMIT").unwrap();

    // Once Python commits, the next import (same read-only connection) picks the row up.
    let report = run(&source, &mut target);
    assert_eq!((report.messages, report.updated_sessions), (1, 1));
}
