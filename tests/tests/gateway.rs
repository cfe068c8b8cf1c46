//! The gateway end to end: the real daemon, the fake model server and the fake Bot API. A user
//! who is allowed sees one streamed, edited answer; a stranger gets a pairing code and the model
//! gets nothing; a deaf poll is abandoned and the bot reconnects; a daemon killed between a send
//! and its acknowledgement, or mid-stream, neither loses nor doubles anything.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_telegram::{Chat, FakeTelegram, Fault, User},
    home::StopOnDrop,
    telegram_home::{self, wait_state},
};

const WAIT: Duration = Duration::from_secs(30);

/// A home whose daemon talks to `llm` and polls `bot`, with `env` added to its `.env`.
fn configure(home: &TestHome, llm: &FakeLlm, bot: &FakeTelegram, env: &str) -> String {
    telegram_home::configure(home, llm, bot, "", env)
}

fn ann() -> User {
    User::new(42, "Ann").with_username("ann")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_allowed_user_sees_one_streamed_edited_answer_and_a_terminal_sees_the_session() {
    let llm = FakeLlm::start(vec![
        Reply::text_chunks(&["Hello", " from", " **Hermes**"]).with_delay_ms(150),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let token = configure(&home, &llm, &bot, "TELEGRAM_ALLOWED_USERS=42\n");
    home.ctl_async(&["status"]).await.ok();
    let menu = bot
        .wait_until("the command menu", WAIT, |view| {
            let menu = view.commands();
            (!menu.is_empty()).then_some(menu)
        })
        .await;
    assert!(menu.iter().any(|(name, _)| name == "retry"), "{menu:?}");
    assert!(
        !menu.iter().any(|(name, _)| name == "quit"),
        "terminal-only commands stay out"
    );

    bot.push_text(&Chat::private(42), &ann(), "hi there");
    let answer = bot
        .wait_message_text(42, |text| text == "Hello from Hermes", WAIT)
        .await;
    let messages = bot.messages(42);
    assert_eq!(messages.len(), 1, "one message, edited: {messages:?}");
    assert!(answer.edits >= 1, "{answer:?}");
    assert_eq!(answer.parse_mode.as_deref(), Some("HTML"));
    assert!(answer.raw.contains("<b>Hermes</b>"), "{}", answer.raw);
    assert_eq!(llm.requests().len(), 1);
    assert_eq!(
        llm.requests()[0].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"],
        "hi there"
    );
    assert!(!bot.chat_actions(42).is_empty(), "typing was shown");

    // The conversation is an ordinary session with source telegram.
    let sessions = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    let listed = sessions.as_array().unwrap();
    assert!(
        listed.iter().any(|s| s["source"] == "telegram"),
        "{sessions}"
    );
    let status = home
        .ctl_async(&["gateway", "status", "--json"])
        .await
        .json();
    assert_eq!(status[0]["platform"], "telegram");
    assert_eq!(status[0]["state"], "connected");
    assert!(!status[0]["last_sent_at"].is_null());
    // The token is never in the log.
    let log = std::fs::read_to_string(home.path().join("logs/hermesd.log")).unwrap_or_default();
    assert!(!log.contains(&token), "the bot token leaked into the log");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stranger_gets_a_code_the_model_gets_nothing_and_approval_lets_them_in() {
    let llm = FakeLlm::start(vec![Reply::text("Welcome")]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "");
    home.ctl_async(&["status"]).await.ok();
    bot.wait_call("setMyCommands", WAIT).await;

    let stranger = User::new(77, "Eve");
    bot.push_text(&Chat::private(77), &stranger, "let me in");
    let reply = bot
        .wait_message_text(77, |t| t.contains("pairing code"), WAIT)
        .await;
    let code = reply
        .text
        .split_whitespace()
        .find(|w| {
            w.len() == 8
                && w.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        })
        .expect("an 8-character code")
        .to_string();
    // A stranger in a group is ignored silently.
    bot.push_text(
        &Chat::group(-500, "friends"),
        &User::new(78, "Mallory"),
        "hello bot",
    );
    let pending = home.ctl_async(&["pairing", "list", "--json"]).await.json();
    assert_eq!(pending.as_array().unwrap().len(), 1, "{pending}");
    assert_eq!(pending[0]["approved"], false);
    assert!(
        llm.requests().is_empty(),
        "the model got a stranger's message"
    );
    let sessions = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    assert!(sessions.as_array().unwrap().is_empty(), "{sessions}");
    let log = std::fs::read_to_string(home.path().join("logs/hermesd.log")).unwrap_or_default();
    assert!(!log.contains(&code), "a pairing code was logged");

    let wrong = home
        .ctl_async(&["pairing", "approve", "telegram", "AAAAAAAA"])
        .await;
    assert_ne!(wrong.code(), Some(0));
    let approved = home
        .ctl_async(&[
            "pairing",
            "approve",
            "telegram",
            &code.to_lowercase(),
            "--json",
        ])
        .await
        .json();
    assert_eq!(approved["user_id"], "77");
    bot.push_text(&Chat::private(77), &stranger, "now?");
    bot.wait_message_text(77, |t| t == "Welcome", WAIT).await;
    assert!(
        bot.messages(-500).is_empty(),
        "nothing was said in the group"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deaf_poll_is_abandoned_and_the_bot_reconnects() {
    let llm = FakeLlm::start(vec![Reply::text("still here")]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "TELEGRAM_ALLOWED_USERS=42\n");
    // The first poll is taken and never answered: a deaf connection.
    bot.fail_next("getUpdates", Fault::Hang);
    home.ctl_async(&["status"]).await.ok();
    bot.wait_polls(1, WAIT).await;
    let connects_before = bot.calls_of("getMe").len();
    bot.push_text(&Chat::private(42), &ann(), "are you there?");
    // The hung poll holds the message back until the watchdog (poll_timeout 1 s + 15 s) gives
    // up on it and the bot reconnects.
    bot.wait_message_text(42, |t| t == "still here", Duration::from_secs(60))
        .await;
    assert!(
        bot.calls_of("getMe").len() > connects_before,
        "it connected again"
    );
    let status = home
        .ctl_async(&["gateway", "status", "--json"])
        .await
        .json();
    assert!(status[0]["reconnects"].as_u64().unwrap() >= 1, "{status}");
    assert!(
        status[0]["last_error"]
            .as_str()
            .unwrap()
            .contains("did not finish"),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_between_sent_and_acknowledged_resends_once_marked() {
    let llm = FakeLlm::start(vec![Reply::text("the final answer")]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "TELEGRAM_ALLOWED_USERS=42\n");
    home.ctl_async(&["status"]).await.ok();
    bot.wait_call("setMyCommands", WAIT).await;
    // The early streamed message fails; the answer's own send arrives but is never answered.
    bot.fail_next("sendMessage", Fault::Server(500));
    bot.fail_next("sendMessage", Fault::DeliverThenHang);
    let update = bot.push_text(&Chat::private(42), &ann(), "question");
    bot.wait_message_text(42, |t| t == "the final answer", WAIT)
        .await;
    home.kill_daemon_hard().await;

    home.ctl_async(&["status"]).await.ok();
    bot.wait_message_text(42, |t| t.starts_with("(recovered)"), WAIT)
        .await;
    bot.wait_confirmed(update + 1, WAIT).await;
    let texts: Vec<String> = bot.messages(42).into_iter().map(|m| m.text).collect();
    assert_eq!(
        texts,
        vec![
            "the final answer".to_string(),
            "(recovered) the final answer".to_string()
        ],
        "one answer, re-sent once and marked"
    );
    assert_eq!(llm.requests().len(), 1, "the turn was not run again");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_mid_stream_leaves_one_notice_and_no_rerun() {
    let llm = FakeLlm::start(vec![
        Reply::stall_after_headers(600_000, &["Thinking about", " it"]),
        Reply::text("second answer"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "TELEGRAM_ALLOWED_USERS=42\n");
    home.ctl_async(&["status"]).await.ok();
    bot.wait_call("setMyCommands", WAIT).await;
    bot.push_text(&Chat::private(42), &ann(), "a long one");
    bot.wait_message_text(42, |t| t.starts_with("Thinking"), WAIT)
        .await;
    home.kill_daemon_hard().await;

    home.ctl_async(&["status"]).await.ok();
    bot.wait_message_text(42, |t| t.contains("/retry"), WAIT)
        .await;
    // A new message after the restart is answered once; the cut turn is not run again.
    bot.push_text(&Chat::private(42), &ann(), "next");
    bot.wait_message_text(42, |t| t == "second answer", WAIT)
        .await;
    let notices = bot
        .messages(42)
        .into_iter()
        .filter(|m| m.text.contains("/retry"))
        .count();
    assert_eq!(notices, 1, "{:?}", bot.messages(42));
    assert_eq!(llm.requests().len(), 2);
    let last = llm.requests()[1].body["messages"].clone();
    let users: Vec<&str> = last
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        users.iter().filter(|u| **u == "next").count(),
        1,
        "{users:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_daemon_with_the_same_token_does_not_poll() {
    let llm = FakeLlm::start(vec![]).await;
    let bot = FakeTelegram::start().await;
    let first = TestHome::new();
    let _stop_first = StopOnDrop(&first);
    let token = configure(&first, &llm, &bot, "");
    first.ctl_async(&["status"]).await.ok();
    bot.wait_call("setMyCommands", WAIT).await;
    let second = TestHome::new();
    let _stop_second = StopOnDrop(&second);
    second.use_fake_model(
        &llm,
        &format!(
            "platforms:\n  telegram:\n    extra:\n      base_url: {}\n",
            bot.base_url()
        ),
    );
    second.write(".env", &format!("TELEGRAM_BOT_TOKEN={token}\n"));
    second.ctl_async(&["status"]).await.ok();
    let status = wait_state(&second, "retrying").await;
    assert!(
        status[0]["last_error"]
            .as_str()
            .unwrap()
            .contains("already connected with this bot token"),
        "{status}"
    );
    assert_eq!(
        bot.calls_of("getMe").len(),
        1,
        "only the first daemon connected"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn streamed_edits_keep_to_the_edit_interval() {
    let chunks: Vec<String> = (0..20).map(|i| format!("part{i} ")).collect();
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let llm = FakeLlm::start(vec![Reply::text_chunks(&refs).with_delay_ms(100)]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "TELEGRAM_ALLOWED_USERS=42\n");
    home.ctl_async(&["status"]).await.ok();
    bot.wait_call("setMyCommands", WAIT).await;
    bot.push_text(&Chat::private(42), &ann(), "stream please");
    bot.wait_message_text(42, |t| t.ends_with("part19"), WAIT)
        .await;
    let edits = bot.calls_of("editMessageText");
    // Every edit but the final one is a partial one, at most one per 0.3 s.
    let partial = &edits[..edits.len() - 1];
    assert!(
        partial.len() >= 2,
        "the answer was edited as it grew: {}",
        edits.len()
    );
    for pair in partial.windows(2) {
        let gap = pair[1].at.duration_since(pair[0].at);
        assert!(gap >= Duration::from_millis(250), "edits {gap:?} apart");
    }
    assert_eq!(bot.messages(42).len(), 1);
}
