//! Re-imports: idempotency, appending what Python added since, a later in-place compaction,
//! a later compression continuation, and sessions hermesd owns, continued or deleted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rusqlite::Connection;

use super::test_support::{fixture_copy, hermesd_db};
use super::tests::{count, links, run};
use super::*;

const S1: &str = "20250915_010227_215762";
const S5: &str = "20250915_013000_777777";

fn total(conn: &Connection) -> i64 {
    count(conn, "SELECT count(*) FROM messages WHERE ?1 = ?1", "")
}

/// Append a row the way Python's `append_message` does.
fn python_append(python: &Connection, session: &str, role: &str, content: &str) {
    python
        .execute(
            "INSERT INTO messages (session_id, role, content, timestamp, active, compacted)
             VALUES (?1, ?2, ?3, (SELECT max(timestamp) + 1 FROM messages), 1, 0)",
            [session, role, content],
        )
        .unwrap();
}

fn contents(conn: &Connection, session: &str) -> Vec<String> {
    conn.prepare("SELECT content FROM messages WHERE session_id = ?1 ORDER BY id")
        .unwrap()
        .query_map([session], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn second_import_adds_nothing() {
    let (_dir, path) = fixture_copy();
    let source = open_source(&path).unwrap();
    let mut target = hermesd_db();
    let first = run(&source, &mut target);
    let messages = total(&target);
    let second = run(&source, &mut target);
    assert_eq!(
        second,
        ImportReport {
            source_schema_version: first.source_schema_version,
            ..ImportReport::default()
        }
    );
    assert_eq!(total(&target), messages);
}

#[test]
fn new_python_messages_are_appended_in_order() {
    let (_dir, path) = fixture_copy();
    let mut target = hermesd_db();
    run(&open_source(&path).unwrap(), &mut target);
    let before = contents(&target, S5);

    let python = Connection::open(&path).unwrap();
    python_append(&python, S5, "user", "one more question");
    python_append(&python, S5, "session_meta", "{}");
    python_append(&python, S5, "assistant", "one more answer");
    let report = run(&open_source(&path).unwrap(), &mut target);
    assert_eq!(
        (
            report.sessions,
            report.messages,
            report.updated_sessions,
            report.skipped_messages
        ),
        (0, 2, 1, 1)
    );
    let after = contents(&target, S5);
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(
        after[before.len()..],
        ["one more question", "one more answer"]
    );
    assert_eq!(
        links(&target, S5).4,
        after.len() as i64,
        "message_count follows"
    );
    let third = run(&open_source(&path).unwrap(), &mut target);
    assert_eq!((third.messages, third.updated_sessions), (0, 0));
}

#[test]
fn later_in_place_compaction_moves_the_imported_rows_to_the_archive_segment() {
    let (_dir, path) = fixture_copy();
    let mut target = hermesd_db();
    run(&open_source(&path).unwrap(), &mut target);
    let imported = contents(&target, S5);

    // What SessionDB.archive_and_compact does.
    let python = Connection::open(&path).unwrap();
    python
        .execute(
            "UPDATE messages SET active = 0, compacted = 1 WHERE session_id = ?1 AND active = 1",
            [S5],
        )
        .unwrap();
    python_append(&python, S5, "user", "[CONTEXT COMPACTION] weather talk");
    python_append(&python, S5, "user", "and the day after?");
    let report = run(&open_source(&path).unwrap(), &mut target);
    assert_eq!((report.messages, report.updated_sessions), (2, 1));

    let archive = format!("{S5}{ARCHIVE_SUFFIX}");
    assert_eq!(contents(&target, &archive), imported);
    assert_eq!(
        contents(&target, S5),
        ["[CONTEXT COMPACTION] weather talk", "and the day after?"]
    );
    let (parent, lineage, next, title, _) = links(&target, &archive);
    assert_eq!(
        (parent, lineage.as_str(), next.as_deref()),
        (None, "root", Some(S5))
    );
    assert_eq!(title.as_deref(), Some("天气 question"));
    let (parent, lineage, ..) = links(&target, S5);
    assert_eq!(
        (parent.as_deref(), lineage.as_str()),
        (Some(archive.as_str()), "compression")
    );

    // A second compaction appends the then-live rows to the same archive.
    python
        .execute(
            "UPDATE messages SET active = 0, compacted = 1 WHERE session_id = ?1 AND active = 1",
            [S5],
        )
        .unwrap();
    python_append(
        &python,
        S5,
        "user",
        "[CONTEXT COMPACTION] two days of weather",
    );
    let report = run(&open_source(&path).unwrap(), &mut target);
    assert_eq!((report.messages, report.updated_sessions), (1, 1));
    assert_eq!(contents(&target, &archive).len(), imported.len() + 2);
    assert_eq!(
        contents(&target, S5),
        ["[CONTEXT COMPACTION] two days of weather"]
    );
    assert_eq!(run(&open_source(&path).unwrap(), &mut target).messages, 0);
}

#[test]
fn later_compression_continuation_links_the_imported_parent() {
    let (_dir, path) = fixture_copy();
    let mut target = hermesd_db();
    run(&open_source(&path).unwrap(), &mut target);

    let python = Connection::open(&path).unwrap();
    python
        .execute_batch(&format!(
            "UPDATE sessions SET ended_at = started_at + 60, end_reason = 'compression' WHERE id = '{S5}';
             INSERT INTO sessions (id, source, parent_session_id, started_at, title)
                 VALUES ('20250915_020000_ffffff', 'telegram', '{S5}', 1796049999.0, '天气 question #2');"
        ))
        .unwrap();
    python_append(&python, "20250915_020000_ffffff", "user", "continuing");
    let report = run(&open_source(&path).unwrap(), &mut target);
    assert_eq!(
        (report.sessions, report.messages, report.updated_sessions),
        (1, 1, 0)
    );
    assert_eq!(
        links(&target, S5).2.as_deref(),
        Some("20250915_020000_ffffff")
    );
    let (parent, lineage, ..) = links(&target, "20250915_020000_ffffff");
    assert_eq!(
        (parent.as_deref(), lineage.as_str()),
        (Some(S5), "compression")
    );
}

#[test]
fn sessions_hermesd_owns_continued_or_deleted_are_left_alone() {
    let (_dir, path) = fixture_copy();
    let mut target = hermesd_db();
    // hermesd already has its own session with S1's id.
    target
        .execute(
            "INSERT INTO sessions (id, source, created_at, updated_at) VALUES (?1, 'cli', 1, 1)",
            [S1],
        )
        .unwrap();
    let report = run(&open_source(&path).unwrap(), &mut target);
    assert_eq!((report.sessions, report.skipped_sessions), (4, 1));
    assert_eq!(
        report.skipped_messages,
        5 + 2,
        "all five rows of S1, and S3's two rewound rows"
    );
    assert_eq!(
        count(
            &target,
            "SELECT count(*) FROM messages WHERE session_id = ?1",
            S1
        ),
        0
    );
    let archive = format!("20250915_011500_a1b2c3{ARCHIVE_SUFFIX}");
    assert_eq!(
        links(&target, &archive).0,
        None,
        "no link into hermesd's own session"
    );

    // hermesd continued S5 itself; Python did too: S5 is skipped, not interleaved.
    target
        .execute(
            "INSERT INTO messages (session_id, role, content, created_at) VALUES (?1, 'user', 'hermesd turn', 2)",
            [S5],
        )
        .unwrap();
    let python = Connection::open(&path).unwrap();
    python_append(&python, S5, "user", "python turn");
    let report = run(&open_source(&path).unwrap(), &mut target);
    assert_eq!(
        (
            report.messages,
            report.skipped_sessions,
            report.updated_sessions
        ),
        (0, 2, 0)
    );
    assert!(!contents(&target, S5).contains(&"python turn".to_string()));

    // A deleted import stays deleted.
    target
        .execute("DELETE FROM sessions WHERE id = ?1", [S5])
        .unwrap();
    let report = run(&open_source(&path).unwrap(), &mut target);
    assert_eq!(
        (report.sessions, report.messages, report.skipped_sessions),
        (0, 0, 2)
    );
    assert_eq!(
        count(&target, "SELECT count(*) FROM sessions WHERE id = ?1", S5),
        0
    );
}
