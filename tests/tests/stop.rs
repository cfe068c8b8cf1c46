//! Stopping the daemon while it works, through the real daemon: a turn waiting on the model, a
//! cron run and a background review are each interrupted and stored as interrupted by "the
//! daemon is stopping", and `hermesctl daemon stop` returns within 5 s.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::{Duration, Instant};

use hermes_proto::pb::{self, session_event::Kind};
use hermes_tests::{
    TestHome,
    events::{self},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};
use serde_json::Value;

const STOPPING: &str = "the daemon is stopping";
/// The bound on a stop with work in flight.
const STOP_BOUND: Duration = Duration::from_secs(5);

/// Stop the daemon and return how long `hermesctl daemon stop` took.
async fn stop(home: &TestHome) -> Duration {
    let began = Instant::now();
    home.ctl_async(&["daemon", "stop"]).await.ok();
    began.elapsed()
}

fn interrupted_by(events: &[pb::SessionEvent]) -> Option<String> {
    events.iter().find_map(|e| match &e.kind {
        Some(Kind::TurnInterrupted(t)) => Some(t.by.clone()),
        _ => None,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_waiting_on_the_model_is_stored_as_interrupted_and_the_stop_is_quick() {
    let server = FakeLlm::start(vec![Reply::stall_before_headers(120_000)]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    home.ctl_async(&["status"]).await.ok();
    let session = events::create_session(&home.socket(), home.path()).await;
    let sending = {
        let args = ["send", "--json", "--session", session.id.as_str(), "hello?"];
        let home = &home;
        async move { home.ctl_async(&args).await }
    };
    let waiting = async {
        server.wait_for_requests(1, Duration::from_secs(20)).await;
        stop(&home).await
    };
    let (sent, took) = tokio::join!(sending, waiting);
    assert!(took < STOP_BOUND, "the stop took {took:?}");
    assert_ne!(sent.code(), Some(0), "the send reports the interruption");
    home.ctl_async(&["status"]).await.ok();
    let stored = events::stored(&home.socket(), &session.id).await;
    assert_eq!(interrupted_by(&stored).as_deref(), Some(STOPPING));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cron_run_in_flight_is_recorded_as_interrupted_by_the_stop() {
    let server = FakeLlm::start(vec![Reply::stall_before_headers(120_000)]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    let job = home
        .ctl_async(&[
            "--json",
            "cron",
            "add",
            "--schedule",
            "0 9 * * *",
            "--prompt",
            "report",
        ])
        .await
        .json();
    let id = job["id"].as_str().unwrap().to_string();
    home.ctl_async(&["cron", "run", &id]).await.ok();
    server.wait_for_requests(1, Duration::from_secs(20)).await;
    let took = stop(&home).await;
    assert!(took < STOP_BOUND, "the stop took {took:?}");
    let runs = home
        .ctl_async(&["--json", "cron", "runs", &id])
        .await
        .json();
    let run = &runs[0];
    assert_eq!(run["status"], "interrupted", "{runs}");
    assert!(
        run["error"].as_str().unwrap_or_default().contains(STOPPING),
        "recorded by the stop itself, not by the next start's recovery: {run}"
    );
    let session = run["session_id"].as_str().unwrap();
    let stored = events::stored(&home.socket(), session).await;
    assert_eq!(interrupted_by(&stored).as_deref(), Some(STOPPING));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_review_in_flight_is_stored_as_interrupted_by_the_stop() {
    let server = FakeLlm::start(vec![
        Reply::text("hello"),
        // The review's model call stalls.
        Reply::stall_before_headers(120_000),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &server,
        "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n",
    );
    let sent = home.ctl_async(&["send", "--json", "hi"]).await.json();
    assert_eq!(sent["answer"], "hello");
    server.wait_for_requests(2, Duration::from_secs(20)).await;
    let took = stop(&home).await;
    assert!(took < STOP_BOUND, "the stop took {took:?}");
    let reviews: Value = home
        .ctl_async(&["sessions", "list", "--source", "review", "--json"])
        .await
        .json();
    let review = reviews[0]["id"].as_str().unwrap();
    let stored = events::stored(&home.socket(), review).await;
    assert_eq!(interrupted_by(&stored).as_deref(), Some(STOPPING));
}
