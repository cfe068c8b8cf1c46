//! Timing on a large state.db (ignored by default): `HERMES_IMPORT_BENCH_DB=/path/state.db
//! cargo test --release bench_import -- --ignored --nocapture`. Fails if the import of the
//! whole file in one transaction takes longer than `HERMES_IMPORT_BENCH_MAX_S` (default 10 s).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use rusqlite::Connection;

use super::test_support::{FIXTURE, HERMESD_MIGRATION_1};
use super::*;

#[test]
#[ignore = "needs HERMES_IMPORT_BENCH_DB; run with --release"]
fn bench_import() {
    let path = std::env::var("HERMES_IMPORT_BENCH_DB").expect("set HERMES_IMPORT_BENCH_DB");
    let limit: f64 = std::env::var("HERMES_IMPORT_BENCH_MAX_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    assert!(!FIXTURE.is_empty());
    let dir = tempfile::tempdir().unwrap();
    // A file database configured as hermesd's writer is.
    let mut target = Connection::open(dir.path().join("hermesd.db")).unwrap();
    target
        .execute_batch(
            "PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;",
        )
        .unwrap();
    target.execute_batch(HERMESD_MIGRATION_1).unwrap();
    target.execute_batch(IMPORT_MIGRATION).unwrap();

    let source = open_source(std::path::Path::new(&path)).unwrap();
    let started = Instant::now();
    let tx = target.transaction().unwrap();
    let report = import(&source, &tx).unwrap();
    tx.commit().unwrap();
    let first = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let tx = target.transaction().unwrap();
    let again = import(&source, &tx).unwrap();
    tx.commit().unwrap();
    let second = started.elapsed().as_secs_f64();
    println!("first import: {report:?} in {first:.2} s; second: {again:?} in {second:.2} s");
    assert_eq!(again.messages, 0);
    assert!(first < limit, "import took {first:.2} s (limit {limit} s)");
}
