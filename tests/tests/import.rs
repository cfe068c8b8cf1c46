//! `hermesctl import hermes` through the real daemon, on a state.db written by the real Python
//! Hermes 0.19 (the fixture beside the importer): message counts and titles round-trip, the
//! source is never written, and a second import adds nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::path::PathBuf;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../hermesd/src/store/hermes_import/fixtures/hermes-0.19-state.db")
}

/// A Python Hermes home holding a copy of the fixture.
fn python_home() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(), dir.path().join("state.db")).unwrap();
    dir
}

/// Rows the importer brings: the four roles, minus turns the user took back (inactive and not
/// compacted).
const IMPORTABLE: &str = "role IN ('user', 'assistant', 'tool', 'system')
     AND NOT (coalesce(active, 1) = 0 AND coalesce(compacted, 0) = 0)";

#[tokio::test(flavor = "multi_thread")]
async fn a_python_hermes_history_is_imported_once() {
    let server = FakeLlm::start(vec![Reply::text("continued")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    let python = python_home();
    let source = python.path().join("state.db");
    let before = std::fs::read(&source).unwrap();
    let (sessions, messages, titles) = {
        let db = rusqlite::Connection::open(&source).unwrap();
        let sessions: u64 = db
            .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .unwrap();
        let messages: u64 = db
            .query_row(
                &format!("SELECT count(*) FROM messages WHERE {IMPORTABLE}"),
                [],
                |r| r.get(0),
            )
            .unwrap();
        let mut stmt = db
            .prepare("SELECT id, title FROM sessions WHERE title IS NOT NULL")
            .unwrap();
        let titles: Vec<(String, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        (sessions, messages, titles)
    };
    drop(std::fs::remove_file(python.path().join("state.db-shm")));

    let home_arg = python.path().to_str().unwrap();
    let first = home
        .ctl_async(&["import", "hermes", "--home", home_arg, "--json"])
        .await
        .json();
    assert_eq!(
        first["sessions"], sessions,
        "every session, of every source"
    );
    assert_eq!(first["messages"], messages);
    // Every segment keeps its title (`show` of an old segment shows the conversation's newest).
    let segments = home
        .ctl_async(&["sessions", "list", "--all", "--source", "cli", "--json"])
        .await
        .json();
    let telegram = home
        .ctl_async(&["sessions", "list", "--source", "telegram", "--json"])
        .await
        .json();
    let listed: Vec<&serde_json::Value> = segments
        .as_array()
        .unwrap()
        .iter()
        .chain(telegram.as_array().unwrap())
        .collect();
    for (id, title) in &titles {
        let row = listed.iter().find(|s| s["id"] == id.as_str());
        assert_eq!(
            row.map(|s| &s["title"]),
            Some(&title.as_str().into()),
            "{id}"
        );
    }
    // Each conversation's messages across its segments add up to what Python had.
    let exported = home
        .ctl_async(&[
            "sessions",
            "export",
            "20250915_011500_a1b2c3",
            "--format",
            "jsonl",
        ])
        .await
        .ok();
    let line: serde_json::Value = serde_json::from_str(exported.trim()).unwrap();
    let lineage = line["lineage_session_ids"].as_array().unwrap();
    assert!(
        lineage.len() >= 2,
        "the compression chain comes along: {lineage:?}"
    );
    assert_eq!(lineage[0], "20250915_010227_215762");

    let again = home
        .ctl_async(&["import", "hermes", "--home", home_arg, "--json"])
        .await
        .json();
    assert_eq!(again["sessions"], 0);
    assert_eq!(again["messages"], 0);
    assert_eq!(
        std::fs::read(&source).unwrap(),
        before,
        "state.db is never written"
    );

    // Attaching shows an imported conversation's last messages, as for any other.
    let backlog = hermes_tests::events::stored(&home.socket(), "20250915_013000_777777").await;
    let shown: Vec<String> = backlog
        .iter()
        .filter_map(|e| match &e.kind {
            Some(hermes_proto::pb::session_event::Kind::AssistantMessage(m)) => {
                Some(m.text.clone())
            }
            Some(hermes_proto::pb::session_event::Kind::UserMessage(m)) => Some(m.text.clone()),
            _ => None,
        })
        .collect();
    assert!(shown.iter().any(|t| t == "明天会下雨。"), "{shown:?}");
    let again = hermes_tests::events::stored(&home.socket(), "20250915_013000_777777").await;
    assert_eq!(again.len(), backlog.len(), "announced once");

    // An imported conversation goes on in hermesd.
    let out = home
        .ctl_async(&[
            "send",
            "--json",
            "--session",
            "20250915_013000_777777",
            "and tomorrow?",
        ])
        .await
        .json();
    assert_eq!(out["answer"], "continued");
    let sent = server.requests().last().unwrap().body["messages"].to_string();
    assert!(
        sent.contains("明天会下雨"),
        "the imported history reaches the model: {sent}"
    );

    let missing = home
        .ctl_async(&["import", "hermes", "--home", "/nonexistent/hermes"])
        .await;
    assert_eq!(missing.code(), Some(1));
    assert!(
        missing.err().contains("/nonexistent/hermes"),
        "{}",
        missing.err()
    );
}
