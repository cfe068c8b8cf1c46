//! What a conversation owns ends with it, through the real daemon: deleting one that had a
//! background review, spilled tool results and a background process leaves nothing of it in
//! the database, on disk or in memory; another conversation cannot see its processes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_tests::{
    TestHome,
    events::{Attached, kind_name},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};
use serde_json::Value;

fn count(db: &rusqlite::Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |row| row.get(0)).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_conversation_removes_its_reviews_spilled_results_and_processes() {
    let work = tempfile::tempdir().unwrap();
    let line = format!("needle {}\n", "x".repeat(400));
    std::fs::write(work.path().join("big.txt"), line.repeat(1_000)).unwrap();
    let search = serde_json::json!({
        "pattern": "needle",
        "path": work.path().display().to_string(),
        "limit": 1000
    })
    .to_string();
    let server = FakeLlm::start(vec![
        Reply::tool_call(
            "terminal",
            r#"{"command": "sleep 1000", "background": true}"#,
        ),
        Reply::tool_call("search_files", &search),
        Reply::text("done"),
        // The background review (memory nudge every turn) saves one memory.
        Reply::tool_call(
            "memory",
            r#"{"action": "add", "target": "memory", "content": "the user keeps needles in big.txt"}"#,
        ),
        Reply::text("saved"),
        // The second conversation's turn.
        Reply::tool_call("process", r#"{"action": "list"}"#),
        Reply::text("listed"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &server,
        "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\napprovals:\n  mode: off\n",
    );
    let sent = home
        .ctl_async(&["send", "--json", "--yolo", "find the needles"])
        .await
        .json();
    let id = sent["session_id"].as_str().unwrap().to_string();
    assert_eq!(sent["answer"], "done");
    // The review announces what it saved on the conversation: wait for that.
    let mut attached = Attached::open(&home.socket(), &id, 0, true).await;
    loop {
        let event = attached.next().await;
        if kind_name(&event) == "notice"
            && matches!(&event.kind, Some(hermes_proto::pb::session_event::Kind::Notice(n)) if n.kind == "memory_saved")
        {
            break;
        }
    }
    drop(attached);

    let requests = server.requests();
    let started: Value = serde_json::from_str(&requests[1].tool_results()[0]).unwrap();
    let pid = started["pid"].as_u64().unwrap();
    let process = format!("/proc/{pid}");
    assert!(std::path::Path::new(&process).exists(), "{started}");
    let spill = home.path().join("cache/tool-results").join(&id);
    assert!(
        std::fs::read_dir(&spill).unwrap().count() > 0,
        "the search result was spilled"
    );
    let reviews = home
        .ctl_async(&["sessions", "list", "--source", "review", "--json"])
        .await
        .json();
    assert_eq!(reviews.as_array().unwrap().len(), 1, "{reviews}");
    let review = reviews[0]["id"].as_str().unwrap().to_string();
    let db = rusqlite::Connection::open_with_flags(
        home.path().join("hermesd.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let conversation_messages = count(
        &db,
        &format!("SELECT count(*) FROM messages WHERE session_id = '{id}'"),
    );
    let review_messages = count(
        &db,
        &format!("SELECT count(*) FROM messages WHERE session_id = '{review}'"),
    );
    assert!(
        review_messages < conversation_messages,
        "the review stores its own work, not a copy of the conversation \
         ({review_messages} messages against {conversation_messages})"
    );

    // A second conversation (without reviews) sees none of the first one's processes.
    home.ctl_async(&["config", "set", "memory.nudge_interval", "0"])
        .await
        .ok();
    let other = home
        .ctl_async(&["send", "--json", "what runs?"])
        .await
        .json();
    assert_eq!(other["answer"], "listed");
    let listed: Value = serde_json::from_str(&server.requests()[6].tool_results()[0]).unwrap();
    assert_eq!(listed["processes"], serde_json::json!([]), "{listed}");

    let loaded = home.ctl_async(&["status", "--json"]).await.json();
    assert_eq!(
        loaded["live_sessions"], 3,
        "two conversations and a review: {loaded}"
    );
    let mut watching = Attached::open(&home.socket(), &id, 0, true).await;
    watching.until("replay_done").await;
    home.ctl_async(&["sessions", "rm", &id]).await.ok();
    // A client attached to the deleted conversation sees its stream end.
    let ended = loop {
        match tokio::time::timeout(
            std::time::Duration::from_secs(20),
            watching.events.message(),
        )
        .await
        .expect("the stream ends within 20 s")
        {
            Ok(Some(_)) => continue,
            Ok(None) | Err(_) => break true,
        }
    };
    assert!(ended);

    assert!(
        !std::path::Path::new(&process).exists(),
        "the background process is stopped"
    );
    assert!(!spill.exists(), "the spilled results are removed");
    let sessions = count(
        &db,
        &format!(
            "SELECT count(*) FROM sessions WHERE id IN ('{id}', '{review}') OR parent_session_id = '{id}'"
        ),
    );
    assert_eq!(sessions, 0, "the conversation and its review are gone");
    let left = count(
        &db,
        &format!("SELECT count(*) FROM messages WHERE session_id = '{id}'"),
    );
    assert_eq!(left, 0);
    let status = home.ctl_async(&["status", "--json"]).await.json();
    assert_eq!(
        status["live_sessions"], 1,
        "the conversation and its review are unloaded: {status}"
    );
}
