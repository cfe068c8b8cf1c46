//! The hub's promises across restarts and segment switches, through the real daemon: a client
//! that saw transient events before a restart still gets every event of the next turn, and an
//! Attach or Send racing a compression hand-off lands in the one live conversation.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_proto::pb::{self, client_frame, session_event::Kind};
use hermes_tests::{
    TestHome, bulk,
    events::{self, Attached, kind_name},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};

async fn say(client: &Attached, text: &str) {
    client
        .send(client_frame::Kind::UserInput(pb::UserInput {
            text: text.into(),
            ..pb::UserInput::default()
        }))
        .await;
}

fn answer_of(events: &[pb::SessionEvent]) -> Option<String> {
    events.iter().find_map(|e| match &e.kind {
        Some(Kind::AssistantMessage(m)) => Some(m.text.clone()),
        _ => None,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_saw_300_deltas_gets_every_event_of_the_next_turn_after_a_sigkill() {
    let chunks: Vec<String> = (0..500).map(|i| format!("d{i} ")).collect();
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let server = FakeLlm::start(vec![
        Reply::text_chunks(&refs).with_delay_ms(5),
        Reply::text("after the restart"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    home.ctl_async(&["status"]).await.ok();
    let session = events::create_session(&home.socket(), home.path()).await;
    let mut client = Attached::open(&home.socket(), &session.id, 0, false).await;
    client.until("replay_done").await;
    say(&client, "stream a long answer").await;
    let mut seen = 0;
    let mut deltas = 0;
    while deltas < 300 {
        let event = client.next().await;
        deltas += usize::from(kind_name(&event) == "text_delta");
        seen = seen.max(event.seq);
    }
    // Killed mid-answer: the deltas the client saw were never stored.
    home.kill_daemon_hard().await;
    drop(client);
    home.ctl_async(&["status"]).await.ok();

    // The same client comes back from the last seq it saw, as `hermesctl chat` does.
    let mut again = Attached::open(&home.socket(), &session.id, seen, false).await;
    again.until("replay_done").await;
    say(&again, "and now?").await;
    let next = again.until("turn_finished").await;
    let kinds: Vec<&str> = next.iter().map(kind_name).collect();
    for wanted in ["turn_started", "user_message", "assistant_message"] {
        assert!(kinds.contains(&wanted), "{wanted} missing: {kinds:?}");
    }
    assert_eq!(answer_of(&next).as_deref(), Some("after the restart"));
    assert!(
        next.iter().all(|e| e.seq > seen),
        "numbering goes on past every seq handed out before the kill"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_attach_and_a_send_inside_a_compression_hand_off_join_the_one_live_conversation() {
    let server = FakeLlm::start(vec![
        Reply::text("a1"),
        Reply::text("a2"),
        Reply::text("a3"),
        Reply::text("Goal: SUMMARYTEXT"),
        Reply::text("a4"),
        Reply::text("raced"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &server,
        // Balanced against the core tools' schema bytes (without `execute_code`, `delegate_task`,
        // the web and the browser tools).
        "model:\n  context_length: 32000\n  max_retries: 0\ncompression:\n  enabled: true\n  protect_first_n: 1\n  protect_last_n: 2\nagent:\n  disabled_toolsets: [code_execution, delegation, web, browser, vision, tts]\n",
    );
    // Widen the window between storing the new segment and the live session moving to it.
    home.write(".env", "HERMESD_TEST_HANDOFF_PAUSE_MS=1500\n");
    let mut first_id = String::new();
    for marker in ["HEADMARK", "MIDDLEMARK", "LATERMARK"] {
        let mut args = vec!["send", "--json"];
        if !first_id.is_empty() {
            args.extend(["--session", first_id.as_str()]);
        }
        let text = bulk(marker, 4000);
        args.push(&text);
        let sent = home.ctl_async(&args).await.json();
        first_id = sent["session_id"].as_str().unwrap().to_string();
    }
    let mut owner = Attached::open(&home.socket(), &first_id, 0, false).await;
    owner.until("replay_done").await;
    say(&owner, &bulk("NEWMARK", 4000)).await;
    let new_segment = loop {
        if let Some(Kind::Notice(n)) = owner.next().await.kind
            && n.kind == "test_handoff"
        {
            break n.text;
        }
    };
    assert_ne!(new_segment, first_id);

    // Inside the window: a client attaches by the new segment's id, and a message is sent to it.
    let mut racer = Attached::open(&home.socket(), &new_segment, 0, true).await;
    racer.until("replay_done").await;
    let sending = {
        let args = [
            "send",
            "--json",
            "--session",
            new_segment.as_str(),
            "racing",
        ];
        let home = &home;
        async move { home.ctl_async(&args).await.json() }
    };
    let (sent, first_turn) = tokio::join!(sending, owner.until("turn_finished"));
    assert_eq!(sent["answer"], "raced");
    assert_eq!(answer_of(&first_turn).as_deref(), Some("a4"));

    let raced_first = racer.until("turn_finished").await;
    assert_eq!(
        answer_of(&raced_first).as_deref(),
        Some("a4"),
        "the racing client is on the same live session: it sees the compressing turn end"
    );
    let raced_second = racer.until("turn_finished").await;
    assert_eq!(answer_of(&raced_second).as_deref(), Some("raced"));
    let first_end = raced_first.last().unwrap().seq;
    let second_start = raced_second
        .iter()
        .find(|e| kind_name(e) == "turn_started")
        .unwrap()
        .seq;
    assert!(
        first_end < second_start,
        "the second turn ran after the first"
    );

    let status = home.ctl_async(&["status", "--json"]).await.json();
    assert_eq!(status["live_sessions"], 1, "one live session: {status}");
    let stored = events::stored(&home.socket(), &first_id).await;
    let seqs: Vec<u64> = stored.iter().map(|e| e.seq).collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "stored seqs are unique and increasing across the segments: {seqs:?}"
    );
}

/// A long answer (10,000 deltas of 256 bytes) and a command printing 64 MiB as it runs, with
/// or without a client that attached and then stopped reading; returns how much the daemon's
/// RSS grew, and whether that client (when it finally read) was told it lagged.
async fn growth_with(stuck_client: bool) -> (f64, bool) {
    let piece = format!("{} ", "y".repeat(255));
    let chunks: Vec<&str> = (0..10_000).map(|_| piece.as_str()).collect();
    let server = FakeLlm::start(vec![
        Reply::text_chunks(&chunks),
        Reply::tool_call(
            "terminal",
            r#"{"command": "head -c 67108864 /dev/zero | tr '\\0' x"}"#,
        ),
        Reply::text("printed"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    home.ctl_async(&["status"]).await.ok();
    let session = events::create_session(&home.socket(), home.path()).await;
    // Warm up: one attach and detach, so the baseline holds the connection machinery.
    drop(events::stored(&home.socket(), &session.id).await);
    let before = home.daemon_rss_mib();
    let mut stuck = None;
    if stuck_client {
        let mut client = Attached::open(&home.socket(), &session.id, 0, true).await;
        client.until("replay_done").await;
        stuck = Some(client);
    }
    let sent = home
        .ctl_async(&["send", "--json", "--session", &session.id, "talk a lot"])
        .await
        .json();
    assert_eq!(sent["answer"], piece.repeat(10_000));
    home.ctl_async(&["send", "--json", "--session", &session.id, "print a lot"])
        .await
        .json();
    let grown = home.daemon_rss_mib() - before;
    println!("stuck client: {stuck_client}, daemon RSS grew {grown:.1} MiB");
    let mut lagged = false;
    if let Some(mut client) = stuck {
        // Every event it was given, then the notice; a client never cut off reads all 10,000+
        // events and then waits, which ends the loop at the timeout.
        let read = std::time::Duration::from_secs(5);
        while let Ok(Ok(Some(event))) = tokio::time::timeout(read, client.events.message()).await {
            if kind_name(&event) == "lagged" {
                lagged = true;
                break;
            }
        }
    }
    (grown, lagged)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_stops_reading_costs_a_bounded_amount_and_is_told_it_lagged() {
    let (free, _) = growth_with(false).await;
    let (stuck, lagged) = growth_with(true).await;
    println!("daemon RSS growth: {free:.1} MiB with no client, {stuck:.1} MiB with a stuck one");
    assert!(
        stuck - free < 16.0,
        "a stuck client cost {:.1} MiB ({stuck:.1} against {free:.1})",
        stuck - free
    );
    assert!(
        lagged,
        "the stuck client is told it lagged when it reads again"
    );
}
