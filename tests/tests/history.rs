//! A conversation's history through hermesctl and the real daemon: export, titles (set by hand
//! and generated), branch, undo, retry, resume by title, and pruning old conversations.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};
use serde_json::Value;

async fn send(home: &TestHome, session: Option<&str>, text: &str) -> Value {
    let mut args = vec!["send", "--json"];
    if let Some(id) = session {
        args.extend(["--session", id]);
    }
    args.push(text);
    home.ctl_async(&args).await.json()
}

fn contents(shown: &Value) -> Vec<String> {
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn undo_retry_branch_and_export() {
    let server = FakeLlm::start(vec![
        Reply::tool_call(
            "todo",
            r#"{"todos": [{"id": "1", "content": "plan", "status": "pending"}]}"#,
        ),
        Reply::text("first answer"),
        Reply::text("second answer"),
        Reply::text("second answer, resent"),
        Reply::text("second answer, again"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    let id = send(&home, None, "make a plan").await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    send(&home, Some(&id), "and then?").await;

    // Undo drops the last user message and everything after it.
    let undone = home
        .ctl_async(&["sessions", "undo", &id, "--json"])
        .await
        .json();
    assert_eq!(undone["removed_messages"], 2);
    let shown = home
        .ctl_async(&["sessions", "show", &id, "--json"])
        .await
        .json();
    assert_eq!(
        contents(&shown).last().map(String::as_str),
        Some("first answer")
    );

    // Retry: undo, then the same user message runs again.
    send(&home, Some(&id), "and then?").await;
    let retried = home
        .ctl_async(&["sessions", "retry", &id, "--json"])
        .await
        .json();
    assert_eq!(retried["answer"], "second answer, again");
    let shown = home
        .ctl_async(&["sessions", "show", &id, "--json"])
        .await
        .json();
    let texts = contents(&shown);
    assert_eq!(texts.iter().filter(|t| *t == "and then?").count(), 1);
    assert_eq!(
        texts.last().map(String::as_str),
        Some("second answer, again")
    );
    let last_request = server.requests().last().unwrap().body["messages"].to_string();
    assert!(
        !last_request.contains("second answer, resent"),
        "the undone answer is gone"
    );

    // Branch at the first answer: a new conversation with the messages up to there.
    let first_answer_id = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["content"] == "first answer")
        .unwrap()["id"]
        .as_u64()
        .unwrap()
        .to_string();
    let branch = home
        .ctl_async(&[
            "sessions",
            "branch",
            &id,
            "--at",
            &first_answer_id,
            "--title",
            "Other plan",
            "--json",
        ])
        .await
        .json();
    let branch_id = branch["id"].as_str().unwrap();
    assert_eq!(branch["parent_session_id"], id.as_str());
    let branched = home
        .ctl_async(&["sessions", "show", "Other plan", "--json"])
        .await
        .json();
    assert_eq!(branched["id"], branch_id, "found by its title");
    assert_eq!(
        contents(&branched).last().map(String::as_str),
        Some("first answer")
    );
    assert_eq!(branched["message_count"], 4);
    let outsider = home
        .ctl_async(&["sessions", "branch", &id, "--at", "999999"])
        .await;
    assert_eq!(outsider.code(), Some(1));
    assert!(outsider.err().contains("not part of"), "{}", outsider.err());

    // Export: Markdown for people, JSONL in the Hermes shape.
    let md = home.ctl_async(&["sessions", "export", &id]).await.ok();
    assert!(md.contains("## User\n\nmake a plan"), "{md}");
    assert!(md.contains("**Tool call** `todo`"), "{md}");
    assert!(md.contains("### Tool result: todo"), "{md}");
    let jsonl = home
        .ctl_async(&["sessions", "export", &id, "--format", "jsonl"])
        .await
        .ok();
    assert_eq!(jsonl.lines().count(), 1);
    let line: Value = serde_json::from_str(jsonl.trim()).unwrap();
    assert_eq!(line["id"], id.as_str());
    let messages = line["messages"].as_array().unwrap();
    assert_eq!(messages.len(), shown["messages"].as_array().unwrap().len());
    assert_eq!(messages[1]["tool_calls"][0]["function"]["name"], "todo");
    assert!(messages[0]["timestamp"].as_f64().unwrap() > 1.7e9);

    // Nothing left to undo in an empty conversation; unknown ids are named.
    let missing = home.ctl_async(&["sessions", "undo", "nope"]).await;
    assert!(
        missing.err().contains("no session `nope`"),
        "{}",
        missing.err()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn titles_are_generated_after_the_first_exchange_and_editable() {
    let server = FakeLlm::start(vec![
        Reply::text("Use nginx as a reverse proxy."),
        Reply::text("\"Nginx reverse proxy setup.\""),
        Reply::text("more"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &server,
        "auxiliary:\n  title_generation:\n    enabled: true\n",
    );
    let id = send(&home, None, "how do I put nginx in front of my app?").await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    // The title is written in the background: wait for its request, then for the row.
    let mut seen = 0;
    let title_request = loop {
        let all = server
            .wait_for_requests(seen + 1, std::time::Duration::from_secs(10))
            .await;
        if let Some(second) = server.chat_requests().get(1) {
            break second.clone();
        }
        assert!(all.len() > seen, "no title request came");
        seen = all.len();
    };
    assert!(title_request.tool_names().is_empty());
    let asked = title_request.body["messages"].to_string();
    assert!(asked.contains("nginx in front of my app"), "{asked}");
    let title = hermes_tests::wait::until(
        "the title is written",
        std::time::Duration::from_secs(20),
        || async {
            let title = home.ctl_async(&["sessions", "title", &id]).await.ok();
            (title.trim() != "(untitled)").then_some(title)
        },
    )
    .await;
    assert_eq!(title.trim(), "Nginx reverse proxy setup");
    // A second turn asks for no new title.
    send(&home, Some(&id), "thanks").await;
    assert_eq!(server.chat_requests().len(), 3);
    // The user can change it; the generated one never overwrites theirs.
    home.ctl_async(&["sessions", "title", &id, "My proxy notes"])
        .await
        .ok();
    let listed = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    assert_eq!(listed[0]["title"], "My proxy notes");
}

#[tokio::test(flavor = "multi_thread")]
async fn prune_removes_only_old_idle_conversations() {
    let server = FakeLlm::start(vec![Reply::text("old"), Reply::text("new")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    let old = send(&home, None, "long ago").await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let recent = send(&home, None, "today").await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    // Age one conversation by 40 days, as if it had been idle that long.
    {
        let db = rusqlite::Connection::open(home.path().join("hermesd.db")).unwrap();
        db.busy_timeout(std::time::Duration::from_secs(5)).unwrap();
        db.execute(
            "UPDATE sessions SET updated_at = updated_at - 40 * 86400000 WHERE id = ?1",
            [&old],
        )
        .unwrap();
    }
    let dry = home
        .ctl_async(&[
            "sessions",
            "prune",
            "--older-than",
            "30d",
            "--dry-run",
            "--json",
        ])
        .await
        .json();
    assert_eq!(dry["deleted"], 1);
    let listed = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    assert_eq!(
        listed.as_array().unwrap().len(),
        2,
        "a dry run deletes nothing"
    );
    let done = home
        .ctl_async(&["sessions", "prune", "--older-than", "30d"])
        .await
        .ok();
    assert!(done.contains("deleted 1 conversation"), "{done}");
    let listed = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [recent.as_str()]);
    let bad = home
        .ctl_async(&["sessions", "prune", "--older-than", "soon"])
        .await;
    assert!(bad.err().contains("is not an age"), "{}", bad.err());
    let status = home.ctl_async(&["status", "--json"]).await.json();
    assert!(status["db_bytes"].as_u64().unwrap() > 0);
}
