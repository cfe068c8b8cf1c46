//! Live sessions through the real daemon: attaching mid-answer, two clients at once, a client
//! that dies, live state in `sessions list`, busy policies, eviction, and `send --stream`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_proto::pb::{self, client_frame, session_event::Kind};
use hermes_tests::{
    DaemonProcess, TestHome,
    events::{self, Attached, kind_name},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};

/// An answer of `words` words that stops after the first `words / 2` until the test calls
/// `release()`, so the turn is surely running while the test acts; the reply and its whole text.
fn held_answer(words: usize) -> (Reply, String) {
    let chunks: Vec<String> = (0..words).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let (before, after) = refs.split_at(words / 2);
    (Reply::held(before, after), chunks.concat())
}

fn text_of(events: &[pb::SessionEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(Kind::TextDelta(d)) => Some(d.text.as_str()),
            _ => None,
        })
        .collect()
}

async fn say(client: &Attached, text: &str, busy: pb::BusyPolicy) {
    client
        .send(client_frame::Kind::UserInput(pb::UserInput {
            text: text.into(),
            busy_policy: busy as i32,
            ..pb::UserInput::default()
        }))
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_attaching_mid_answer_sees_each_piece_of_text_once() {
    let (reply, full) = held_answer(40);
    let server = FakeLlm::start(vec![reply]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    home.ctl_async(&["status"]).await.ok();
    let session = events::create_session(&home.socket(), home.path()).await;
    let mut first = Attached::open(&home.socket(), &session.id, 0, false).await;
    first.until("replay_done").await;
    say(&first, "talk", pb::BusyPolicy::Unspecified).await;
    let mut seen_first = Vec::new();
    while seen_first
        .iter()
        .filter(|e| kind_name(e) == "text_delta")
        .count()
        < 8
    {
        seen_first.push(first.next().await);
    }
    let mut second = Attached::open(&home.socket(), &session.id, 0, true).await;
    let mut seen_second = second.until("replay_done").await;
    server.release();
    seen_second.extend(second.until("turn_finished").await);
    seen_first.extend(first.until("turn_finished").await);
    assert_eq!(text_of(&seen_first), full);
    assert_eq!(
        text_of(&seen_second),
        full,
        "the late client gets the text so far once, then the rest"
    );
    let seqs: Vec<u64> = seen_second
        .iter()
        .filter(|e| kind_name(e) != "replay_done")
        .map(|e| e.seq)
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    // From the moment the second client is live, both see the same events.
    let live_from = seen_second
        .iter()
        .position(|e| kind_name(e) == "replay_done")
        .unwrap();
    let tail = |events: &[pb::SessionEvent], after: u64| -> Vec<(u64, &'static str)> {
        events
            .iter()
            .filter(|e| e.seq > after && kind_name(e) != "clients_changed")
            .map(|e| (e.seq, kind_name(e)))
            .collect()
    };
    let boundary = seen_second[..live_from]
        .iter()
        .map(|e| e.seq)
        .max()
        .unwrap();
    seen_second.drain(..=live_from);
    assert_eq!(tail(&seen_first, boundary), tail(&seen_second, boundary));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_client_leaves_the_turn_running_and_a_reattach_shows_it_complete() {
    // Held halfway: the listing below sees the turn still running.
    let (reply, full) = held_answer(100);
    let server = FakeLlm::start(vec![reply]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    home.ctl_async(&["status"]).await.ok();
    let session = events::create_session(&home.socket(), home.path()).await;
    let mut client = Attached::open(&home.socket(), &session.id, 0, false).await;
    client.until("replay_done").await;
    say(&client, "talk", pb::BusyPolicy::Unspecified).await;
    client.until("text_delta").await;
    let listed = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    assert_eq!(listed[0]["state"], "running");
    assert_eq!(listed[0]["clients"], 1);
    drop(client);
    let mut later = Attached::open(&home.socket(), &session.id, 0, true).await;
    let mut seen = later.until("replay_done").await;
    server.release();
    seen.extend(later.until("turn_finished").await);
    let answer = seen
        .iter()
        .find_map(|e| match &e.kind {
            Some(Kind::AssistantMessage(m)) => Some(m.text.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        answer,
        full.trim_end().to_string() + " ",
        "the whole answer, stored"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn steered_input_joins_the_running_turn() {
    let (reply, _) = held_answer(15);
    let server = FakeLlm::start(vec![reply, Reply::text("took your note")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    home.ctl_async(&["status"]).await.ok();
    let session = events::create_session(&home.socket(), home.path()).await;
    home.ctl_async(&["sessions", "busy", &session.id, "steer"])
        .await
        .ok();
    let mut client = Attached::open(&home.socket(), &session.id, 0, false).await;
    client.until("replay_done").await;
    say(&client, "start", pb::BusyPolicy::Unspecified).await;
    client.until("text_delta").await;
    say(&client, "also this", pb::BusyPolicy::Unspecified).await;
    // A client's frames are handled in order: once an answer to no question is refused, the
    // note before it has been steered into the turn, which may now go on.
    client
        .send(client_frame::Kind::ApprovalResponse(pb::ApprovalResponse {
            id: "no-such-question".into(),
            decision: "once".into(),
        }))
        .await;
    let mut seen = Vec::new();
    while !seen.iter().any(
        |e: &pb::SessionEvent| matches!(&e.kind, Some(Kind::Notice(n)) if n.kind == "stale_answer"),
    ) {
        seen.push(client.next().await);
    }
    server.release();
    seen.extend(client.until("turn_finished").await);
    assert!(
        !seen.iter().any(|e| kind_name(e) == "turn_started"),
        "no second turn"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (last["role"].as_str(), last["content"].as_str()),
        (Some("user"), Some("also this"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn interrupting_input_stops_the_turn_and_runs_next() {
    let (reply, _) = held_answer(200);
    let server = FakeLlm::start(vec![reply, Reply::text("new topic")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    home.ctl_async(&["status"]).await.ok();
    let session = events::create_session(&home.socket(), home.path()).await;
    let mut client = Attached::open(&home.socket(), &session.id, 0, false).await;
    client.until("replay_done").await;
    say(&client, "long story", pb::BusyPolicy::Unspecified).await;
    client.until("text_delta").await;
    say(&client, "stop, new topic", pb::BusyPolicy::Interrupt).await;
    client.until("turn_interrupted").await;
    let seen = client.until("turn_finished").await;
    let started = seen
        .iter()
        .find_map(|e| match &e.kind {
            Some(Kind::TurnStarted(t)) => Some(t.input.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(started, "stop, new topic");
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_sessions_are_evicted_and_streaming_send_prints_as_it_goes() {
    let server = FakeLlm::start(vec![
        Reply::text_chunks(&["Hel", "lo"]),
        Reply::text_chunks(&["a", "b"]),
    ])
    .await;
    let home = TestHome::new();
    home.use_fake_model(&server, "sessions:\n  evict_after: 0.3\n");
    // Eviction is announced only in the log, at debug level.
    let mut daemon = DaemonProcess::start(&home, &["--log-level", "info,hermesd::agent=debug"]);
    let text = home.ctl_async(&["send", "--stream", "hi"]).await.ok();
    assert_eq!(text.trim(), "Hello");
    let lines = home
        .ctl_async(&["--json", "send", "--stream", "hi"])
        .await
        .ok();
    let kinds: Vec<String> = lines
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| *k == "text_delta").count(),
        2,
        "{kinds:?}"
    );
    assert_eq!(kinds.last().map(String::as_str), Some("turn_finished"));
    // Both conversations go, perhaps in different sweeps.
    let mut evicted = 0;
    while evicted < 2 {
        let line = daemon.wait_for_log(&["idle sessions evicted"]).await;
        evicted += line
            .split_whitespace()
            .find_map(|field| field.strip_prefix("evicted="))
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or_else(|| panic!("no count in {line:?}"));
    }
    let status = home.ctl_async(&["status", "--json"]).await.json();
    assert_eq!(status["live_sessions"], 0, "{status}");
}
