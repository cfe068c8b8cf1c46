//! The webhook platform against the real daemon: GitHub, GitLab and generic signatures (good,
//! bad, stale, missing), the event filter, a sender's retry that never runs twice — also after
//! the daemon was killed and started again — and `deliver_only` to Telegram with no model call.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_telegram::{Chat, FakeTelegram},
    http, telegram_home, wait,
};
use hermesd::gateway::secret::hmac_hex;

const WAIT: Duration = Duration::from_secs(30);

/// POST to the webhook platform; the status and the JSON answer.
async fn post(
    port: u16,
    path: &str,
    headers: &[(&str, String)],
    body: &str,
) -> (u16, serde_json::Value) {
    let answer = http::post(port, path, headers, body).await;
    (answer.status, answer.json())
}

async fn listening(port: u16) {
    http::listening("the webhook platform listens", port).await;
}

fn github(secret: &str, delivery: &str, event: &str, body: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "X-Hub-Signature-256",
            format!("sha256={}", hmac_hex(secret.as_bytes(), body.as_bytes())),
        ),
        ("X-GitHub-Delivery", delivery.to_string()),
        ("X-GitHub-Event", event.to_string()),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn signatures_are_checked_and_a_retry_never_runs_twice_even_after_a_restart() {
    let llm = FakeLlm::start(vec![Reply::text("reviewed"), Reply::text("seen")]).await;
    let home = TestHome::new();
    let port = http::free_port();
    home.use_fake_model(
        &llm,
        &format!(
            "model:\n  context_length: 200000\nplatforms:\n  webhook:\n    enabled: true\n    extra:\n      \
             host: 127.0.0.1\n      port: {port}\n      secret: generic-secret\n      routes:\n        \
             gh:\n          secret: gh-secret\n          events: [pull_request]\n          \
             prompt: \"PR {{pull_request.title}} by {{sender.login}}\"\n          \
             skills: [no-such-skill, triage]\n        \
             generic: {{}}\n"
        ),
    );
    home.write(
        "skills/triage/SKILL.md",
        "---\nname: triage\ndescription: Triage a pull request\n---\n\n# Triage\n\nLabel it.\n",
    );
    home.ctl_async(&["status"]).await.ok();
    listening(port).await;
    let body = r#"{"pull_request": {"title": "Fix it"}, "sender": {"login": "ann"}}"#;

    let (status, answer) = post(
        port,
        "/webhooks/gh",
        &github("gh-secret", "d-1", "pull_request", body),
        body,
    )
    .await;
    assert_eq!(
        (status, answer["status"].as_str()),
        (202, Some("accepted")),
        "{answer}"
    );
    assert_eq!(answer["delivery_id"], "d-1");
    wait::until("the model got the rendered prompt", WAIT, || {
        let seen = llm
            .chat_requests()
            .iter()
            .any(|r| r.body.to_string().contains(r#"Use the \"triage\" skill for this (load it with skill_view first): PR Fix it by ann"#));
        async move { seen.then_some(()) }
    })
    .await;
    // The sender retries: no second run.
    let (status, answer) = post(
        port,
        "/webhooks/gh",
        &github("gh-secret", "d-1", "pull_request", body),
        body,
    )
    .await;
    assert_eq!(
        (status, answer["status"].as_str()),
        (200, Some("duplicate")),
        "{answer}"
    );

    // Bad, missing, and for another event.
    let (status, answer) = post(
        port,
        "/webhooks/gh",
        &github("wrong", "d-2", "pull_request", body),
        body,
    )
    .await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (401, Some("Invalid signature"))
    );
    let (status, _) = post(
        port,
        "/webhooks/gh",
        &[("X-GitHub-Delivery", "d-3".into())],
        body,
    )
    .await;
    assert_eq!(status, 401);
    let (status, answer) = post(
        port,
        "/webhooks/gh",
        &github("gh-secret", "d-4", "push", body),
        body,
    )
    .await;
    assert_eq!(
        (status, answer["status"].as_str()),
        (200, Some("ignored")),
        "{answer}"
    );
    let (status, answer) = post(port, "/webhooks/nope", &[], body).await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (404, Some("Unknown route: nope"))
    );

    // The generic V2 signature over the timestamp and body, with the global secret.
    let v2 = |at: i64, body: &str| {
        vec![
            ("X-Webhook-Timestamp", at.to_string()),
            (
                "X-Webhook-Signature-V2",
                hmac_hex(b"generic-secret", format!("{at}.{body}").as_bytes()),
            ),
            ("X-Request-ID", format!("g-{at}")),
        ]
    };
    let now = chrono::Utc::now().timestamp();
    let generic = r#"{"type": "deploy", "env": "prod"}"#;
    let (status, _) = post(port, "/webhooks/generic", &v2(now - 600, generic), generic).await;
    assert_eq!(status, 401, "a stale timestamp");
    let (status, answer) = post(port, "/webhooks/generic", &v2(now, generic), generic).await;
    assert_eq!(
        (status, answer["event"].as_str()),
        (202, Some("deploy")),
        "{answer}"
    );
    wait::until("both runs reached the model", WAIT, || {
        let n = llm.chat_requests().len();
        async move { (n >= 2).then_some(()) }
    })
    .await;

    // Killed and started again: the delivery id is still remembered.
    home.kill_daemon_hard().await;
    home.ctl_async(&["status"]).await.ok();
    listening(port).await;
    let (status, answer) = post(
        port,
        "/webhooks/gh",
        &github("gh-secret", "d-1", "pull_request", body),
        body,
    )
    .await;
    assert_eq!(
        (status, answer["status"].as_str()),
        (200, Some("duplicate")),
        "{answer}"
    );
    assert_eq!(
        llm.chat_requests().len(),
        2,
        "each accepted delivery ran once"
    );
    let sessions = home.ctl(&["sessions", "list", "--json"]).json();
    let webhook = sessions
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["source"] == "webhook")
        .count();
    assert_eq!(webhook, 2, "{sessions}");
    home.ctl(&["daemon", "stop"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn deliver_only_sends_the_rendered_prompt_without_a_model_call() {
    let llm = FakeLlm::start(vec![]).await;
    let bot = FakeTelegram::start().await;
    bot.add_chat(&Chat::private(42));
    let home = TestHome::new();
    let port = http::free_port();
    let token = telegram_home::unique_token(&bot);
    home.use_fake_model(
        &llm,
        &format!(
            "platforms:\n  telegram:\n    extra:\n      base_url: {}\n      poll_timeout: 1\n  \
             webhook:\n    enabled: true\n    extra:\n      host: 127.0.0.1\n      port: {port}\n      \
             routes:\n        alerts:\n          secret: gl-token\n          deliver: telegram\n          \
             deliver_only: true\n          prompt: \"Alert: {{alert.name}} on {{host}}\"\n",
            bot.base_url()
        ),
    );
    home.write(
        ".env",
        &format!(
            "TELEGRAM_BOT_TOKEN={token}\nTELEGRAM_ALLOWED_USERS=42\nTELEGRAM_HOME_CHANNEL=42\n"
        ),
    );
    home.ctl_async(&["status"]).await.ok();
    listening(port).await;
    bot.wait_call("setMyCommands", WAIT).await;
    let body = r#"{"alert": {"name": "disk full"}, "host": "vps-1"}"#;
    let headers = [
        ("X-Gitlab-Token", "gl-token".to_string()),
        ("X-Request-ID", "a-1".into()),
    ];
    let (status, answer) = post(port, "/webhooks/alerts", &headers, body).await;
    assert_eq!(
        (status, answer["status"].as_str()),
        (200, Some("delivered")),
        "{answer}"
    );
    assert_eq!(answer["target"], "telegram");
    bot.wait_message_text(42, |t| t == "Alert: disk full on vps-1", WAIT)
        .await;
    let (status, _) = post(
        port,
        "/webhooks/alerts",
        &[("X-Gitlab-Token", "nope".to_string())],
        body,
    )
    .await;
    assert_eq!(status, 401);
    assert!(llm.chat_requests().is_empty(), "no model call");
    home.ctl(&["daemon", "stop"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_body_replayed_under_a_new_delivery_id_is_a_duplicate_even_after_a_restart() {
    let llm = FakeLlm::start((0..6).map(|_| Reply::text("ok")).collect()).await;
    let home = TestHome::new();
    let port = http::free_port();
    home.use_fake_model(
        &llm,
        &format!(
            "platforms:\n  webhook:\n    enabled: true\n    extra:\n      \
             host: 127.0.0.1\n      port: {port}\n      secret: generic-secret\n      routes:\n        \
             gh:\n          secret: gh-secret\n        generic: {{}}\n        other: {{}}\n"
        ),
    );
    home.ctl_async(&["status"]).await.ok();
    listening(port).await;
    let body = r#"{"action": "opened", "number": 7}"#;
    let accepted = |answer: &(u16, serde_json::Value)| {
        assert_eq!(
            (answer.0, answer.1["status"].as_str()),
            (202, Some("accepted")),
            "{}",
            answer.1
        );
    };
    let duplicate = |answer: &(u16, serde_json::Value)| {
        assert_eq!(
            (answer.0, answer.1["status"].as_str()),
            (200, Some("duplicate")),
            "{}",
            answer.1
        );
    };

    accepted(
        &post(
            port,
            "/webhooks/gh",
            &github("gh-secret", "d-1", "pull_request", body),
            body,
        )
        .await,
    );
    // A captured request replayed with another delivery id, or with none.
    duplicate(
        &post(
            port,
            "/webhooks/gh",
            &github("gh-secret", "d-2", "pull_request", body),
            body,
        )
        .await,
    );
    let mut no_id = github("gh-secret", "", "pull_request", body);
    no_id.retain(|(name, _)| *name != "X-GitHub-Delivery");
    duplicate(&post(port, "/webhooks/gh", &no_id, body).await);
    // Another body is another delivery.
    let other_body = r#"{"action": "opened", "number": 8}"#;
    accepted(
        &post(
            port,
            "/webhooks/gh",
            &github("gh-secret", "d-3", "pull_request", other_body),
            other_body,
        )
        .await,
    );

    // The generic V2 signature covers its timestamp: the same signed request under a new request
    // id is a replay; the sender's fresh signature of the same body is a new delivery.
    let v2 = |at: i64, id: &str, body: &str| {
        vec![
            ("X-Webhook-Timestamp", at.to_string()),
            (
                "X-Webhook-Signature-V2",
                hmac_hex(b"generic-secret", format!("{at}.{body}").as_bytes()),
            ),
            ("X-Request-ID", id.to_string()),
        ]
    };
    let now = chrono::Utc::now().timestamp();
    accepted(&post(port, "/webhooks/generic", &v2(now, "g-1", body), body).await);
    duplicate(&post(port, "/webhooks/generic", &v2(now, "g-2", body), body).await);
    accepted(&post(port, "/webhooks/generic", &v2(now - 1, "g-3", body), body).await);
    // The legacy body-only signature: the body alone decides.
    let legacy = |id: &str| {
        vec![
            (
                "X-Webhook-Signature",
                hmac_hex(b"generic-secret", body.as_bytes()),
            ),
            ("X-Request-ID", id.to_string()),
        ]
    };
    accepted(&post(port, "/webhooks/other", &legacy("l-1"), body).await);
    duplicate(&post(port, "/webhooks/other", &legacy("l-2"), body).await);

    wait::until("each accepted delivery ran", WAIT, || {
        let n = llm.chat_requests().len();
        async move { (n >= 5).then_some(()) }
    })
    .await;
    // Killed and started again: the digests are still remembered.
    home.kill_daemon_hard().await;
    home.ctl_async(&["status"]).await.ok();
    listening(port).await;
    duplicate(
        &post(
            port,
            "/webhooks/gh",
            &github("gh-secret", "d-9", "pull_request", body),
            body,
        )
        .await,
    );
    duplicate(&post(port, "/webhooks/other", &legacy("l-9"), body).await);

    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(llm.chat_requests().len(), 5, "no replay ran");
    home.ctl(&["daemon", "stop"]);
}
