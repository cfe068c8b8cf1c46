//! Test support: a database with hermesd's whole schema (its migrations, so the FTS triggers
//! run), and the Python fixture on disk.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use rusqlite::Connection;

/// The state.db written by the real Python Hermes 0.19 (`fixtures/make_fixture.py`).
pub(super) const FIXTURE: &[u8] = include_bytes!("fixtures/hermes-0.19-state.db");

/// A fresh hermesd database in memory, foreign keys on as the daemon runs them.
pub(super) fn hermesd_db() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
    crate::store::search::register_functions(&conn).unwrap();
    crate::store::migrations::apply(&conn).unwrap();
    conn
}

/// The fixture copied into a temporary directory (writable, so tests can play Python).
pub(super) fn fixture_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    std::fs::write(&path, FIXTURE).unwrap();
    (dir, path)
}
