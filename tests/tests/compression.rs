//! Context compression through the real daemon and the fake model: triggered by size, by an
//! overflow or payload-too-large error, and on demand; the summary request, the continuation
//! segment and its lineage, a summary that fails or stalls, and the bound on passes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_tests::{
    TestHome, bulk,
    events::{self, kind_name},
    fake_llm::{FakeLlm, FakeModel, RecordedRequest, Reply},
    home::StopOnDrop,
};
use serde_json::Value;

/// A 32k window, compression at half of it; one head message and two tail messages protected.
/// The sizes here are balanced against the tools' schemas of the time (the core tools, without
/// `execute_code`, `delegate_task` the web and browser tools), which every request carries.
const CONFIG: &str = "model:\n  context_length: 32000\n  max_retries: 0\ncompression:\n  enabled: true\n  protect_first_n: 1\n  protect_last_n: 2\nagent:\n  disabled_toolsets: [code_execution, delegation, web, browser, vision, tts]\n";

fn all_text(request: &RecordedRequest) -> String {
    request.body["messages"].to_string()
}

async fn send(home: &TestHome, session: Option<&str>, text: &str) -> Value {
    let mut args = vec!["send", "--json"];
    if let Some(id) = session {
        args.extend(["--session", id]);
    }
    args.push(text);
    home.ctl_async(&args).await.json()
}

/// Three turns of ~4k tokens each (under the 16k threshold with the fixed part), returning the
/// session id; the fourth such message passes the threshold.
async fn three_long_turns(home: &TestHome) -> String {
    let first = send(home, None, &bulk("HEADMARK", 4000)).await;
    let id = first["session_id"].as_str().unwrap().to_string();
    send(home, Some(&id), &bulk("MIDDLEMARK", 4000)).await;
    send(home, Some(&id), &bulk("LATERMARK", 4000)).await;
    id
}

#[tokio::test(flavor = "multi_thread")]
async fn passing_the_threshold_summarises_the_middle_into_a_linked_segment() {
    let server = FakeLlm::start(vec![
        Reply::text("a1"),
        Reply::text("a2"),
        Reply::text("a3"),
        Reply::text("Goal: SUMMARYTEXT"),
        Reply::text("a4"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, CONFIG);
    let first_id = three_long_turns(&home).await;
    let last = send(&home, Some(&first_id), &bulk("NEWMARK", 4000)).await;
    assert_eq!(last["answer"], "a4");

    let requests = server.requests();
    assert_eq!(requests.len(), 5, "three turns, one summary, one answer");
    let summary = &requests[3];
    assert!(
        summary.tool_names().is_empty(),
        "no tools for the summariser"
    );
    assert!(
        all_text(summary).contains("MIDDLEMARK"),
        "the middle is summarised"
    );
    assert!(!all_text(summary).contains("NEWMARK"), "the tail is not");
    let continued = &requests[4];
    let text = all_text(continued);
    assert!(
        text.contains("SUMMARYTEXT"),
        "the summary reaches the model"
    );
    assert!(!text.contains("MIDDLEMARK"), "the middle is gone");
    assert!(text.contains("HEADMARK") && text.contains("NEWMARK"));
    assert_eq!(
        continued.body["messages"][0], requests[2].body["messages"][0],
        "the system prompt is kept byte for byte"
    );

    // The conversation goes on in a new segment linked to the old one.
    let new_id = last["session_id"].as_str().unwrap();
    assert_ne!(new_id, first_id);
    let all = home
        .ctl_async(&["sessions", "list", "--all", "--json"])
        .await
        .json();
    let segment = all
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == new_id)
        .unwrap();
    assert_eq!(segment["parent_session_id"], first_id.as_str());
    let heads = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    assert_eq!(
        heads.as_array().unwrap().len(),
        1,
        "one row per conversation"
    );

    // Any id of the chain reaches the newest segment; the event log reads as one.
    let shown = home
        .ctl_async(&["sessions", "show", &first_id, "--json"])
        .await
        .json();
    assert_eq!(shown["id"], new_id);
    let kinds: Vec<&str> = events::stored(&home.socket(), &first_id)
        .await
        .iter()
        .map(kind_name)
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == "turn_finished").count(), 4);
    assert!(kinds.contains(&"notice"));
    // Search reaches the summarised messages in the old segment, as one hit for the conversation.
    let hits = home
        .ctl_async(&["sessions", "search", "--json", "MIDDLEMARK"])
        .await
        .json();
    assert_eq!(hits.as_array().unwrap().len(), 1);
    assert_eq!(hits[0]["session_id"], new_id);
    assert_eq!(hits[0]["segment_id"], first_id.as_str());
    let seqs: Vec<u64> = events::stored(&home.socket(), new_id)
        .await
        .iter()
        .map(|e| e.seq)
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "seq goes on: {seqs:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_overflow_error_compresses_and_retries_the_request() {
    for refusal in [Reply::context_overflow(), Reply::payload_too_large()] {
        let server = FakeLlm::start(vec![
            Reply::text("a1"),
            Reply::text("a2"),
            Reply::text("a3"),
            refusal,
            Reply::text("SUMMARYTEXT"),
            Reply::text("a4"),
        ])
        .await;
        let home = TestHome::new();
        let _stop = StopOnDrop(&home);
        // A window so large that only the provider's refusal can trigger compression.
        home.use_fake_model(&server, &CONFIG.replace("32000", "1000000"));
        let id = three_long_turns(&home).await;
        let last = send(&home, Some(&id), "short question").await;
        assert_eq!(last["answer"], "a4");
        let requests = server.requests();
        assert_eq!(requests.len(), 6);
        assert!(requests[4].tool_names().is_empty());
        assert!(all_text(&requests[5]).contains("SUMMARYTEXT"));
        assert_ne!(last["session_id"], id.as_str());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_summary_that_fails_or_stalls_still_completes_the_turn() {
    for failing in [Reply::server_error(), Reply::stall_before_headers(20_000)] {
        let server = FakeLlm::start(vec![
            Reply::text("a1"),
            Reply::text("a2"),
            Reply::text("a3"),
            Reply::text("a4"),
        ])
        .await;
        // The summary's own reply: a summary request given up before it was written must not
        // leave it to the turn's next request.
        server.route("You write context checkpoints", vec![failing]);
        let home = TestHome::new();
        let _stop = StopOnDrop(&home);
        home.use_fake_model(
            &server,
            &format!("{CONFIG}auxiliary:\n  compression:\n    timeout: 1\n"),
        );
        let id = three_long_turns(&home).await;
        let last = send(&home, Some(&id), &bulk("NEWMARK", 4000)).await;
        assert_eq!(last["answer"], "a4", "the turn completes without a summary");
        let requests = server.requests();
        let text = all_text(requests.last().unwrap());
        assert!(!text.contains("MIDDLEMARK"), "the middle was dropped");
        assert!(text.contains("could not"), "a note says why: {text}");
        assert!(text.contains("NEWMARK"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_that_keeps_refusing_gets_at_most_three_passes() {
    let mut script = vec![Reply::text("a1"), Reply::text("a2"), Reply::text("a3")];
    script.extend((0..12).map(|_| Reply::context_overflow()));
    let server = FakeLlm::start(script).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, &CONFIG.replace("32000", "1000000"));
    let id = three_long_turns(&home).await;
    let out = home
        .ctl_async(&["send", "--session", &id, "one more"])
        .await;
    assert_eq!(out.code(), Some(1));
    assert!(out.err().contains("context"), "{}", out.err());
    let refused = server.requests().len() - 3;
    assert!(
        refused <= 7,
        "at most 3 passes of summary + retry: {refused}"
    );
    assert!(server.remaining() > 0, "never a loop");
}

#[tokio::test(flavor = "multi_thread")]
async fn compress_on_demand_continues_in_a_new_segment() {
    let server = FakeLlm::start(vec![
        Reply::text("a1"),
        Reply::text("a2"),
        Reply::text("a3"),
        Reply::text("SUMMARYTEXT"),
        Reply::text("a4"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, &CONFIG.replace("32000", "1000000"));
    let id = three_long_turns(&home).await;
    let done = home
        .ctl_async(&["sessions", "compress", &id, "--json"])
        .await
        .json();
    let new_id = done["new_segment_id"].as_str().unwrap();
    assert_ne!(new_id, id);
    assert!(done["tokens_after"].as_u64() < done["tokens_before"].as_u64());
    let last = send(&home, Some(&id), "and now?").await;
    assert_eq!(last["answer"], "a4");
    assert_eq!(last["session_id"], new_id);
    assert!(all_text(server.requests().last().unwrap()).contains("SUMMARYTEXT"));

    let nothing = home.ctl_async(&["sessions", "compress", "nope"]).await;
    assert_eq!(nothing.code(), Some(1));
    assert!(nothing.err().contains("no session"), "{}", nothing.err());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_tool_result_mid_turn_moves_the_turn_to_a_new_segment() {
    let server = FakeLlm::start(vec![
        Reply::text("a1"),
        Reply::text("a2"),
        Reply::text("a3"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, CONFIG);
    let work = tempfile::tempdir().unwrap();
    let big = work.path().join("big.txt");
    server.push(Reply::tool_call(
        "read_file",
        &serde_json::json!({"path": big}).to_string(),
    ));
    server.push(Reply::text("SUMMARYTEXT"));
    server.push(Reply::text("the file is long"));
    let lines: String = (0..300)
        .map(|i| format!("FILEMARK line {i}: the quick brown fox jumps over the lazy dog again\n"))
        .collect();
    std::fs::write(&big, lines).unwrap();
    let id = three_long_turns(&home).await;
    let last = send(&home, Some(&id), "read big.txt").await;
    let requests = server.requests();
    let sizes: Vec<(String, usize)> = requests
        .iter()
        .map(|r| (r.path.clone(), r.body.to_string().len()))
        .collect();
    assert_eq!(last["answer"], "the file is long", "{sizes:?}");
    let chats: Vec<_> = requests
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect();
    assert!(
        chats[4].tool_names().is_empty(),
        "the summary comes after the tool result"
    );
    let final_request = all_text(chats[5]);
    assert!(final_request.contains("SUMMARYTEXT") && final_request.contains("FILEMARK"));

    // The turn finished in the new segment: its answer and closing event are stored there.
    let new_id = last["session_id"].as_str().unwrap();
    assert_ne!(new_id, id);
    let shown = home
        .ctl_async(&["sessions", "show", new_id, "--json"])
        .await
        .json();
    let messages = shown["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["content"], "the file is long");
    let new_events: Vec<&str> = events::stored(&home.socket(), &id)
        .await
        .iter()
        .filter(|e| e.session_id == new_id)
        .map(kind_name)
        .collect();
    assert!(new_events.contains(&"assistant_message"), "{new_events:?}");
    assert_eq!(new_events.last(), Some(&"turn_finished"), "{new_events:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plausible_limit_in_an_overflow_error_becomes_the_known_window() {
    let server = FakeLlm::start(vec![
        Reply::text("a1"),
        Reply::text("a2"),
        Reply::text("a3"),
        // "maximum context length is 8192 tokens"
        Reply::context_overflow(),
        Reply::text("SUMMARYTEXT"),
        Reply::text("a4"),
    ])
    .await
    .with_models(vec![
        FakeModel::new("fake-model").with_context_length(100_000),
    ]);
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &server,
        "model:\n  max_retries: 0\ncompression:\n  enabled: true\n  protect_first_n: 1\n  protect_last_n: 2\nagent:\n  disabled_toolsets: [code_execution, delegation, web, browser, vision, tts]\n",
    );
    let before = home.ctl_async(&["model", "show", "--json"]).await.json();
    assert_eq!(before["context_length"], 100_000);
    let id = three_long_turns(&home).await;
    let last = send(&home, Some(&id), "short question").await;
    assert_eq!(last["answer"], "a4");
    let after = home.ctl_async(&["model", "show", "--json"]).await.json();
    assert_eq!(after["context_length"], 8192);
    assert_eq!(after["context_source"], "provider error");
}

/// What the learning loop saved mid-conversation reaches the chat it came from: the memory
/// snapshot is frozen for a segment, and a compression builds the next segment's system prompt
/// again with the memory as it is now.
#[tokio::test(flavor = "multi_thread")]
async fn a_compression_after_a_memory_write_rebuilds_the_system_prompt() {
    let server = FakeLlm::start(vec![
        Reply::tool_call(
            "memory",
            r#"{"action": "add", "target": "memory", "content": "The user drinks OOLONGMARK tea"}"#,
        ),
        Reply::text("a1"),
        Reply::text("a2"),
        Reply::text("a3"),
        Reply::text("Goal: SUMMARYTEXT"),
        Reply::text("a4"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, CONFIG);
    // Smaller turns than `three_long_turns`: the memory call and its result take room too.
    let first = send(&home, None, &bulk("HEADMARK", 3000)).await;
    let first_id = first["session_id"].as_str().unwrap().to_string();
    send(&home, Some(&first_id), &bulk("MIDDLEMARK", 3000)).await;
    send(&home, Some(&first_id), &bulk("LATERMARK", 3000)).await;
    let last = send(&home, Some(&first_id), &bulk("NEWMARK", 8000)).await;
    assert_eq!(last["answer"], "a4", "{last}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 6, "four turns, one tool call, one summary");
    let system = |n: usize| requests[n].body["messages"][0]["content"].to_string();
    assert!(
        !system(3).contains("OOLONGMARK"),
        "the segment's snapshot is frozen"
    );
    assert!(
        system(5).contains("OOLONGMARK"),
        "the new segment's prompt has the memory: {}",
        system(5)
    );
    assert_ne!(last["session_id"], first_id.as_str());
}
