//! Import tests on the real Python Hermes 0.19 fixture: counts, titles, lineage and content
//! conversions round-trip.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rusqlite::Connection;

use super::test_support::{fixture_copy, hermesd_db};
use super::*;

const S1: &str = "20250915_010227_215762";
const S2: &str = "20250915_011500_a1b2c3";
const S3: &str = "20250915_012000_d4e5f6";
const S4: &str = "20250915_012100_0a0b0c";
const S5: &str = "20250915_013000_777777";

pub(super) fn run(source: &Connection, target: &mut Connection) -> ImportReport {
    let tx = target.transaction().unwrap();
    let report = import(source, &tx).unwrap();
    tx.commit().unwrap();
    report
}

pub(super) fn count(conn: &Connection, sql: &str, id: &str) -> i64 {
    conn.query_row(sql, [id], |r| r.get(0)).unwrap()
}

/// (parent, lineage, continued_by, title, message_count) of a hermesd session.
type SessionLinks = (Option<String>, String, Option<String>, Option<String>, i64);

pub(super) fn links(conn: &Connection, id: &str) -> SessionLinks {
    conn.query_row(
        "SELECT parent_session_id, lineage, continued_by, title, message_count
         FROM sessions WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )
    .unwrap()
}

fn message(
    conn: &Connection,
    session: &str,
    needle: &str,
) -> (String, Option<String>, Option<String>) {
    conn.query_row(
        "SELECT content, tool_calls, reasoning FROM messages
         WHERE session_id = ?1 AND instr(content, ?2) > 0",
        [session, needle],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .unwrap()
}

const KEPT: &str = "role IN ('system', 'user', 'assistant', 'tool')";

#[test]
fn python_fixture_round_trips_counts_titles_and_lineage() {
    let (_dir, path) = fixture_copy();
    let source = open_source(&path).unwrap();
    let mut target = hermesd_db();
    let report = run(&source, &mut target);

    let python: Vec<(String, Option<String>)> = source
        .prepare("SELECT id, title FROM sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(python.len(), 5);
    for (id, title) in &python {
        let live = count(
            &source,
            &format!(
                "SELECT count(*) FROM messages WHERE session_id = ?1 AND {KEPT} AND active = 1"
            ),
            id,
        );
        let archived = count(
            &source,
            &format!(
                "SELECT count(*) FROM messages WHERE session_id = ?1 AND {KEPT} AND compacted = 1"
            ),
            id,
        );
        let (_, _, _, stored_title, message_count) = links(&target, id);
        assert_eq!(&stored_title, title, "title of {id}");
        assert_eq!(message_count, live, "live messages of {id}");
        assert_eq!(
            count(
                &target,
                "SELECT count(*) FROM messages WHERE session_id = ?1",
                id
            ),
            live
        );
        if archived > 0 {
            let archive = format!("{id}{ARCHIVE_SUFFIX}");
            assert_eq!(
                links(&target, &archive).4,
                archived,
                "compacted messages of {id}"
            );
        }
    }
    let all_kept = count(
        &source,
        &format!(
            "SELECT count(*) FROM messages WHERE {KEPT} AND (active = 1 OR compacted = 1) AND ?1 = ?1"
        ),
        "",
    );
    let total = count(&source, "SELECT count(*) FROM messages WHERE ?1 = ?1", "");
    assert_eq!(report.sessions, 5);
    assert_eq!(report.messages as i64, all_kept);
    assert_eq!((report.messages + report.skipped_messages) as i64, total);
    assert_eq!(
        report.skipped_messages, 3,
        "session_meta + the two rewound rows"
    );
    assert_eq!((report.skipped_sessions, report.updated_sessions), (0, 0));
    assert_eq!(report.source_schema_version, Some(22));

    // S1 ended by compression -> S2, which was then compacted in place: S1 continues into the
    // archive of S2's first turns, which continues into S2's live rows.
    let archive = format!("{S2}{ARCHIVE_SUFFIX}");
    assert_eq!(links(&target, S1).2.as_deref(), Some(archive.as_str()));
    let (parent, lineage, next, _, _) = links(&target, &archive);
    assert_eq!(
        (parent.as_deref(), lineage.as_str(), next.as_deref()),
        (Some(S1), "compression", Some(S2))
    );
    let (parent, lineage, next, _, _) = links(&target, S2);
    assert_eq!(
        (parent.as_deref(), lineage.as_str(), next),
        (Some(archive.as_str()), "compression", None)
    );
    let (parent, lineage, ..) = links(&target, S3);
    assert_eq!((parent.as_deref(), lineage.as_str()), (Some(S2), "branch"));
    let (parent, lineage, ..) = links(&target, S4);
    assert_eq!(
        (parent.as_deref(), lineage.as_str()),
        (Some(S2), "subagent")
    );
    let (parent, lineage, ..) = links(&target, S5);
    assert_eq!((parent, lineage.as_str()), (None, "root"));
}

#[test]
fn python_fixture_content_tool_calls_reasoning_and_times() {
    let (_dir, path) = fixture_copy();
    let source = open_source(&path).unwrap();
    let mut target = hermesd_db();
    run(&source, &mut target);

    // OpenAI-shaped tool calls are kept byte for byte; reasoning comes along.
    let python_calls: String = source
        .query_row(
            "SELECT tool_calls FROM messages WHERE tool_calls LIKE '%call_ls_1%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let (_, calls, reasoning) = message(&target, S1, "Looking.");
    assert_eq!(calls.as_deref(), Some(python_calls.as_str()));
    assert_eq!(
        reasoning.as_deref(),
        Some("The user wants a listing first.")
    );
    // reasoning_content is the fallback.
    let (_, _, reasoning) = message(&target, S2, "It builds an AST");
    assert_eq!(
        reasoning.as_deref(),
        Some("Recursive descent, explain briefly.")
    );
    // CJK survives, and is found by hermesd's full-text index (its triggers ran).
    assert!(
        message(&target, S2, "语法分析器")
            .0
            .starts_with("And the parser?")
    );
    let hits: i64 = target
        .query_row(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'Pratt'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(hits, 2);
    // Multimodal JSON content becomes text; NULL content becomes ''.
    assert_eq!(
        message(&target, S5, "picture").0,
        "What is in this picture?\n[screenshot]"
    );
    let empty = count(
        &target,
        "SELECT count(*) FROM messages WHERE session_id = ?1 AND content = ''",
        S4,
    );
    assert_eq!(empty, 1, "the assistant row with only tool calls");
    // Flat {name, arguments} calls get the OpenAI shape and the id of the result that follows.
    let (_, calls, _) = message(&target, S5, "Checking the forecast.");
    let calls: serde_json::Value = serde_json::from_str(&calls.unwrap()).unwrap();
    assert_eq!(
        calls,
        serde_json::json!([{"id": "call_ws_9", "type": "function", "function": {
            "name": "web_search", "arguments": "{\"query\": \"weather tomorrow\"}"}}])
    );
    let tool_row: (String, String) = target
        .query_row(
            "SELECT tool_call_id, tool_name FROM messages WHERE session_id = ?1 AND role = 'tool'",
            [S5],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(tool_row, ("call_ws_9".into(), "web_search".into()));
    // Times: seconds -> ms; updated_at is the last message; order follows Python ids.
    let (last_ts, started): (f64, f64) = source
        .query_row(
            "SELECT max(m.timestamp), s.started_at FROM messages m JOIN sessions s ON s.id = m.session_id
             WHERE s.id = ?1",
            [S5],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let (created, updated): (i64, i64) = target
        .query_row(
            "SELECT created_at, updated_at FROM sessions WHERE id = ?1",
            [S5],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (created, updated),
        (convert::millis(started), convert::millis(last_ts))
    );
    let roles: Vec<String> = target
        .prepare("SELECT role FROM messages WHERE session_id = ?1 ORDER BY id")
        .unwrap()
        .query_map([S4], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant"]);
    // Token counters of the Python session are kept.
    let tokens: (i64, i64, i64) = target
        .query_row(
            "SELECT input_tokens, output_tokens, cache_read_tokens FROM sessions WHERE id = ?1",
            [S1],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(tokens, (1200, 340, 800));
}

#[test]
fn import_puts_the_page_cache_size_back() {
    let (_dir, path) = fixture_copy();
    let mut target = hermesd_db();
    target.execute_batch("PRAGMA cache_size = -1234").unwrap();
    run(&open_source(&path).unwrap(), &mut target);
    let size: i64 = target
        .query_row("PRAGMA cache_size", [], |r| r.get(0))
        .unwrap();
    assert_eq!(size, -1234);
}
