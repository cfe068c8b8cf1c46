//! The walk over windows: segments skipped without reading stay exact when sessions
//! interleave, and a small window is extended with older matches to fill the limit.

use super::super::{Ranking, SearchQuery};
use super::{conversations, db, message, q, session};

#[test]
fn interleaved_sessions_are_not_skipped_together() {
    let conn = db();
    for id in ["a", "b", "c"] {
        session(&conn, id, "cli", None, "root");
    }
    // c comes first, alone; then b's messages surround a's (two chats served at once).
    for i in 0..40 {
        message(&conn, "c", "user", &format!("walrus number {i}"), i);
    }
    for i in 0..60 {
        let id = if i % 3 == 1 && i < 58 { "a" } else { "b" };
        message(&conn, id, "user", &format!("walrus again {i}"), 100 + i);
    }
    assert_eq!(conversations(&conn, &q("walrus")), vec!["a", "b", "c"]);
    let all = SearchQuery {
        ranking: Ranking::All,
        ..q("walrus")
    };
    assert_eq!(conversations(&conn, &all), vec!["a", "b", "c"]);
}

#[test]
fn a_small_window_is_extended_to_fill_the_limit() {
    let conn = db();
    for s in 0..6 {
        let id = format!("s{s}");
        session(&conn, &id, "cli", None, "root");
        for m in 0..10 {
            message(&conn, &id, "assistant", "otter otter notes", s * 100 + m);
        }
    }
    let query = SearchQuery {
        ranking: Ranking::Recent(3),
        limit: 4,
        ..q("otter")
    };
    // The newest 3 matches are all in s5; older matches bring in the next conversations.
    assert_eq!(conversations(&conn, &query), vec!["s2", "s3", "s4", "s5"]);
}

#[test]
fn an_excluded_conversation_filling_the_window_does_not_hide_older_ones() {
    let conn = db();
    session(&conn, "old", "cli", None, "root");
    message(&conn, "old", "user", "badger sighting", 1);
    session(&conn, "current", "cli", None, "root");
    for m in 0..20 {
        message(&conn, "current", "user", "badger badger", 10 + m);
    }
    let query = SearchQuery {
        ranking: Ranking::Recent(5),
        exclude_conversation: Some("current".into()),
        ..q("badger")
    };
    assert_eq!(conversations(&conn, &query), vec!["old"]);
    let tool_role = SearchQuery {
        role: Some("user".into()),
        ..query
    };
    assert_eq!(conversations(&conn, &tool_role), vec!["old"]);
}
