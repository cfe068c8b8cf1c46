//! A chat's busy policy end to end: with `/busy steer`, a message sent while a turn runs is
//! taken by that turn (one answer covers both), and a message the turn can no longer take (it
//! was stopped) is answered in the chat as the next turn, not lost to it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_telegram::{Chat, FakeTelegram, User},
    home::StopOnDrop,
    telegram_home,
};

const WAIT: Duration = Duration::from_secs(30);

fn ann() -> User {
    User::new(42, "Ann").with_username("ann")
}

fn dm() -> Chat {
    Chat::private(42)
}

async fn start(llm: &FakeLlm, bot: &FakeTelegram) -> TestHome {
    let home = TestHome::new();
    telegram_home::configure(&home, llm, bot, "", "TELEGRAM_ALLOWED_USERS=42\n");
    home.ctl_async(&["status"]).await.ok();
    bot.wait_call("setMyCommands", WAIT).await;
    // Set before the first message: the setting starts the chat's conversation.
    bot.push_text(&dm(), &ann(), "/busy steer");
    bot.wait_message_text(42, |t| t == "Busy policy: steer", WAIT)
        .await;
    home
}

#[tokio::test(flavor = "multi_thread")]
async fn a_steered_message_is_taken_by_the_running_turn() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call("terminal", r#"{"command": "rm -rf keeper"}"#),
        Reply::text("kept it, and noted the rest"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = start(&llm, &bot).await;
    let _stop = StopOnDrop(&home);
    std::fs::create_dir_all(home.user_home().join("keeper")).unwrap();

    bot.push_text(&dm(), &ann(), "clean up");
    bot.wait_message_text(42, |t| t.contains("requires approval"), WAIT)
        .await;
    // The turn waits for the approval: this message is steered into it, then the denial
    // lets it go on to its next step, which takes the message.
    bot.push_text(&dm(), &ann(), "and water the plants");
    bot.push_text(&dm(), &ann(), "/deny");
    bot.wait_message_text(42, |t| t == "kept it, and noted the rest", WAIT)
        .await;
    let second = llm.user_texts(1);
    assert!(
        second.iter().any(|t| t == "and water the plants"),
        "the running turn took it: {second:?}"
    );
    assert_eq!(llm.chat_requests().len(), 2, "no second turn ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_steered_too_late_is_answered_in_the_chat() {
    let llm = FakeLlm::start(vec![
        Reply::StallAfterHeaders {
            ms: 120_000,
            chunks_before: vec!["thinking".into()],
        },
        Reply::text("the plants are watered"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = start(&llm, &bot).await;
    let _stop = StopOnDrop(&home);

    bot.push_text(&dm(), &ann(), "think hard");
    bot.wait_message_text(42, |t| t.starts_with("thinking"), WAIT)
        .await;
    // Steered into the running turn, which is then stopped before it could take it: the
    // message runs as the next turn, and its answer reaches the chat.
    bot.push_text(&dm(), &ann(), "water the plants");
    bot.push_text(&dm(), &ann(), "/stop");
    bot.wait_message_text(42, |t| t.contains("(stopped)"), WAIT)
        .await;
    bot.wait_message_text(42, |t| t == "the plants are watered", WAIT)
        .await;
    let second = llm.user_texts(1);
    assert_eq!(
        second.last().map(String::as_str),
        Some("water the plants"),
        "{second:?}"
    );
    let answers: Vec<_> = bot
        .messages(42)
        .into_iter()
        .filter(|m| m.text == "the plants are watered")
        .collect();
    assert_eq!(answers.len(), 1, "answered once: {answers:?}");
}
