//! Slack's connection through faults, end to end: a silent socket and a `disconnect` envelope
//! are noticed and the connection made again with nothing lost, and an envelope Slack delivers
//! again is taken once; a daemon killed mid-stream leaves one notice and no rerun; a 429 is
//! waited out; the Events API answers a good signature once stored and refuses a bad or stale
//! one.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_slack::{FakeSlack, Fault, Signing, UserMessage},
    home::StopOnDrop,
    slack_home::{self, wait_state},
};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

fn answers(slack: &FakeSlack, channel: &str, text: &str) -> usize {
    slack
        .bot_messages(channel)
        .iter()
        .filter(|m| m.text == text)
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_socket_and_a_disconnect_are_noticed_and_nothing_is_lost_or_doubled() {
    let llm = FakeLlm::start(vec![Reply::text("one"), Reply::text("two")]).await;
    let slack = FakeSlack::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    slack_home::configure(&home, &llm, &slack, "", "SLACK_ALLOWED_USERS=U1\n");
    home.ctl_async(&["status"]).await.ok();
    wait_state(&home, "connected").await;
    assert_eq!(slack.connections(), 1);

    // The socket goes silent: what is sent meanwhile waits for the next connection.
    slack.silence();
    slack.push(&UserMessage::new("D1", "U1", "first"));
    slack.wait_connections(2, WAIT).await;
    slack.wait_bot_message("D1", |t| t == "one", WAIT).await;

    // Slack asks for a new connection: it is made at once.
    slack.disconnect("refresh_requested");
    slack.wait_connections(3, WAIT).await;
    let second = slack.push(&UserMessage::new("D1", "U1", "second"));
    slack.wait_bot_message("D1", |t| t == "two", WAIT).await;

    // Slack delivers the message's envelope again (its ack lost): acked, not taken twice.
    let envelope = slack
        .envelopes()
        .into_iter()
        .find(|e| e.payload["event"]["ts"] == json!(second.ts))
        .unwrap();
    slack.redeliver(&envelope.id);
    slack
        .wait_until("the redelivered envelope acked", WAIT, |s| {
            s.envelope(&envelope.id).filter(|e| e.acked && e.sends == 2)
        })
        .await;
    assert_eq!(
        llm.requests().len(),
        2,
        "each message reached the model once"
    );
    assert_eq!(
        (answers(&slack, "D1", "one"), answers(&slack, "D1", "two")),
        (1, 1)
    );
    let log = std::fs::read_to_string(home.path().join("logs/hermesd.log")).unwrap_or_default();
    assert!(
        log.contains("nothing heard"),
        "the silence was noticed as such"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_mid_stream_leaves_one_notice_and_no_rerun() {
    let llm = FakeLlm::start(vec![
        Reply::stall_after_headers(600_000, &["Thinking about", " it"]),
        Reply::text("second answer"),
    ])
    .await;
    let slack = FakeSlack::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    slack_home::configure(&home, &llm, &slack, "", "SLACK_ALLOWED_USERS=U1\n");
    home.ctl_async(&["status"]).await.ok();
    slack.push(&UserMessage::new("D1", "U1", "a long one"));
    slack
        .wait_bot_message("D1", |t| t.starts_with("Thinking"), WAIT)
        .await;
    home.kill_daemon_hard().await;

    home.ctl_async(&["status"]).await.ok();
    slack
        .wait_bot_message("D1", |t| t.contains("/retry"), WAIT)
        .await;
    slack.push(&UserMessage::new("D1", "U1", "next"));
    slack
        .wait_bot_message("D1", |t| t == "second answer", WAIT)
        .await;
    let notices = slack
        .bot_messages("D1")
        .iter()
        .filter(|m| m.text.contains("/retry"))
        .count();
    assert_eq!(notices, 1, "{:?}", slack.bot_messages("D1"));
    assert_eq!(llm.requests().len(), 2, "the cut turn was not run again");
    assert_eq!(answers(&slack, "D1", "second answer"), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_429_is_waited_out() {
    let llm = FakeLlm::start(vec![Reply::text("patience")]).await;
    let slack = FakeSlack::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    slack_home::configure(&home, &llm, &slack, "", "SLACK_ALLOWED_USERS=U1\n");
    slack.fail_next("chat.postMessage", Fault::RateLimited(1));
    home.ctl_async(&["status"]).await.ok();
    slack.push(&UserMessage::new("D1", "U1", "hello"));
    slack
        .wait_bot_message("D1", |t| t == "patience", WAIT)
        .await;
    let posts = slack.calls_of("chat.postMessage");
    assert_eq!(posts[0].status, Some(429), "{}", slack.call_log());
    let waited = posts[1].at.duration_since(posts[0].at);
    assert!(
        waited >= Duration::from_millis(900),
        "Retry-After was kept: {waited:?}"
    );
    assert_eq!(answers(&slack, "D1", "patience"), 1);
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_events_api_takes_a_signed_request_once_and_refuses_a_bad_or_stale_one() {
    let llm = FakeLlm::start(vec![Reply::text("over http")]).await;
    let slack = FakeSlack::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let port = free_port();
    let secret = "8f742231b10e8888abcd99yyyzzz85a5";
    slack_home::configure_events(
        &home,
        &llm,
        &slack,
        "",
        &format!(
            "SLACK_ALLOWED_USERS=U1\nSLACK_SIGNING_SECRET={secret}\nSLACK_EVENTS_HOST=127.0.0.1\n\
             SLACK_EVENTS_PORT={port}\n"
        ),
    );
    home.ctl_async(&["status"]).await.ok();
    wait_state(&home, "connected").await;
    assert_eq!(
        slack.connections(),
        0,
        "no Socket Mode without an app token"
    );
    let url = format!("http://127.0.0.1:{port}/slack/events");

    let challenge = json!({"type": "url_verification", "token": "x", "challenge": "c-123"});
    let answer = slack
        .post_event(&url, &challenge, &Signing::new(secret))
        .await;
    assert_eq!(answer.status, 200);
    assert!(answer.body.contains("c-123"), "{}", answer.body);

    let pushed = slack.compose(&UserMessage::new("D1", "U1", "hello over http"));
    let event = &pushed.callbacks[0];
    let forged = slack
        .post_event(&url, event, &Signing::new("not-the-secret"))
        .await;
    assert_eq!(forged.status, 401);
    let stale = Signing {
        skew: -400,
        ..Signing::new(secret)
    };
    assert_eq!(slack.post_event(&url, event, &stale).await.status, 401);
    assert!(
        llm.requests().is_empty(),
        "a refused request reached the model"
    );

    let taken = slack.post_event(&url, event, &Signing::new(secret)).await;
    assert_eq!(taken.status, 200);
    assert!(
        taken.took < Duration::from_secs(3),
        "answered within Slack's 3 s: {:?}",
        taken.took
    );
    slack
        .wait_bot_message("D1", |t| t == "over http", WAIT)
        .await;
    let retry = Signing {
        retry: Some(1),
        ..Signing::new(secret)
    };
    assert_eq!(slack.post_event(&url, event, &retry).await.status, 200);
    assert_eq!(llm.requests().len(), 1, "Slack's retry was taken once");
    assert_eq!(answers(&slack, "D1", "over http"), 1);
}
