//! Discord end to end: the real daemon, the fake model server and the fake Discord (REST and
//! Gateway). An allowed user gets one streamed, edited answer; a stranger gets a pairing code
//! in a DM (nothing with an allowlist); a guild channel needs a mention unless it is a
//! free-response channel (a mention is answered in a thread opened on it, as Hermes' default
//! `auto_thread` does; a free-response channel is answered in place); a thread's answer stays
//! in the thread; an approval is answered by a
//! button; a zombie connection is noticed and resumed with nothing lost or doubled; a SIGKILL
//! mid-stream leaves one notice; a 429 is waited out; 4004 is fatal.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    discord_home::{self, wait_state},
    fake_discord::{FakeDiscord, Post, User},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};

const WAIT: Duration = Duration::from_secs(30);

fn ann() -> User {
    User::new("4242", "Ann")
}

/// A home whose daemon talks to `llm` and `discord`, Ann allowed, with `env` added.
use discord_home::start;

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
    let token = discord_home::configure(&home, &llm, &discord, "", "DISCORD_ALLOWED_USERS=4242\n");
    home.ctl_async(&["status"]).await.ok();
    discord.wait_ready(WAIT).await;
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
    let log = std::fs::read_to_string(home.path().join("logs/hermesd.log")).unwrap_or_default();
    assert!(log.contains("discord"), "the log says something of Discord");
    assert!(!log.contains(&token), "the bot token leaked into the log");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stranger_gets_a_pairing_code_in_a_dm_and_nothing_in_a_channel() {
    let llm = FakeLlm::start(vec![Reply::text("Welcome")]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let eve = User::new("7777", "Eve");
    let dm = discord.dm(&eve);
    let guild = discord.guild("Friends");
    let general = discord.channel(&guild, "general");
    start(&home, &llm, &discord, "", "").await;

    discord.push(&Post::new(&dm, &eve, "let me in"));
    let reply = discord
        .wait_message(&dm, |t| t.contains("pairing code"), WAIT)
        .await;
    let code = reply
        .content
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| {
            w.len() == 8
                && w.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        })
        .expect("an 8-character code")
        .to_string();
    assert!(
        reply.content.contains("pairing approve discord"),
        "{}",
        reply.content
    );
    // A stranger mentioning the bot in a channel is ignored silently.
    let bot = discord.bot();
    let mallory = User::new("8888", "Mallory");
    discord.push(&Post::new(
        &general,
        &mallory,
        &format!("{} hello", bot.mention()),
    ));
    let pending = home.ctl_async(&["pairing", "list", "--json"]).await.json();
    assert_eq!(pending.as_array().unwrap().len(), 1, "{pending}");
    assert!(
        llm.requests().is_empty(),
        "the model got a stranger's message"
    );

    home.ctl_async(&["pairing", "approve", "discord", &code])
        .await
        .ok();
    discord.push(&Post::new(&dm, &eve, "now?"));
    discord.wait_message(&dm, |t| t == "Welcome", WAIT).await;
    assert!(
        discord.messages(&general).is_empty(),
        "nothing said in the channel"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_an_allowlist_a_stranger_gets_nothing() {
    let llm = FakeLlm::start(vec![Reply::text("for Ann")]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let eve = User::new("7777", "Eve");
    let eve_dm = discord.dm(&eve);
    let ann_dm = discord.dm(&ann());
    start(&home, &llm, &discord, "", "DISCORD_ALLOWED_USERS=4242\n").await;
    discord.push(&Post::new(&eve_dm, &eve, "let me in"));
    // Ann's message after Eve's is answered: Eve's was taken (and ignored) before it.
    discord.push(&Post::new(&ann_dm, &ann(), "hello"));
    discord
        .wait_message(&ann_dm, |t| t == "for Ann", WAIT)
        .await;
    assert!(
        discord.messages(&eve_dm).is_empty(),
        "Hermes ignores strangers with an allowlist"
    );
    let pending = home.ctl_async(&["pairing", "list", "--json"]).await.json();
    assert!(pending.as_array().unwrap().is_empty(), "{pending}");
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_channel_needs_a_mention_unless_it_is_free_response() {
    let llm = FakeLlm::start(vec![Reply::text("mentioned"), Reply::text("free")]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let guild = discord.guild("Friends");
    let general = discord.channel(&guild, "general");
    let lounge = discord.channel(&guild, "lounge");
    let env = format!("DISCORD_ALLOWED_USERS=4242\nDISCORD_FREE_RESPONSE_CHANNELS={lounge}\n");
    start(&home, &llm, &discord, "", &env).await;
    let bot = discord.bot();

    discord.push(&Post::new(&general, &ann(), "just chatting"));
    let asked = discord.push(&Post::new(
        &general,
        &ann(),
        &format!("{} what now?", bot.mention()),
    ));
    // Answered in the thread opened on the mention (its id is the message's).
    discord
        .wait_message(&asked, |t| t == "mentioned", WAIT)
        .await;
    let first = llm.requests()[0].body["messages"].clone();
    let text = first.to_string();
    assert!(text.contains("what now?"), "{text}");
    assert!(
        !text.contains("just chatting"),
        "the unmentioned message was taken: {text}"
    );
    assert!(
        !text.contains(&bot.mention()),
        "the mention is removed: {text}"
    );

    discord.push(&Post::new(&lounge, &ann(), "anyone?"));
    discord.wait_message(&lounge, |t| t == "free", WAIT).await;
    assert_eq!(llm.requests().len(), 2);
    assert!(
        discord.messages(&general).is_empty(),
        "nothing in the channel"
    );
    let opened = discord.opened_threads();
    assert_eq!(
        opened.len(),
        1,
        "none in the free-response channel: {opened:?}"
    );
    assert_eq!(
        (opened[0].id.as_str(), opened[0].parent_id.as_str()),
        (asked.as_str(), general.as_str())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thread_reply_stays_in_the_thread_and_the_thread_needs_no_second_mention() {
    let llm = FakeLlm::start(vec![
        Reply::text("in the thread"),
        Reply::text("still here"),
    ])
    .await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let guild = discord.guild("Friends");
    let general = discord.channel(&guild, "general");
    start(&home, &llm, &discord, "", "DISCORD_ALLOWED_USERS=4242\n").await;
    // A thread made while the bot is connected: it learns of it from THREAD_CREATE.
    let thread = discord.thread(&general, "plans");
    let bot = discord.bot();
    discord.push(&Post::new(
        &thread,
        &ann(),
        &format!("{} plan it", bot.mention()),
    ));
    discord
        .wait_message(&thread, |t| t == "in the thread", WAIT)
        .await;
    assert!(
        discord.messages(&general).is_empty(),
        "nothing in the parent channel"
    );
    // The bot is in the thread now: no mention needed (Hermes' thread participation).
    discord.push(&Post::new(&thread, &ann(), "and then?"));
    discord
        .wait_message(&thread, |t| t == "still here", WAIT)
        .await;
    let sessions = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    let discord_sessions: Vec<_> = sessions
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["source"] == "discord")
        .collect();
    assert_eq!(
        discord_sessions.len(),
        1,
        "one conversation for the thread: {sessions}"
    );
    let second = llm.requests()[1].body["messages"].to_string();
    assert!(
        second.contains("plan it"),
        "the thread's history goes on: {second}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_is_answered_by_a_button() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call("terminal", r#"{"command": "rm -rf victim"}"#),
        Reply::text("removed it"),
    ])
    .await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    std::fs::create_dir_all(home.user_home().join("victim")).unwrap();
    let guild = discord.guild("Friends");
    let ops = discord.channel(&guild, "ops");
    let env = format!("DISCORD_ALLOWED_USERS=4242,5151\nDISCORD_FREE_RESPONSE_CHANNELS={ops}\n");
    start(&home, &llm, &discord, "", &env).await;

    discord.push(&Post::new(&ops, &ann(), "clean up"));
    let question = discord
        .wait_message(&ops, |t| t.contains("requires approval"), WAIT)
        .await;
    assert_eq!(question.buttons.len(), 4, "{question:?}");
    // Someone else's press (another conversation: channels are per user) is refused with a
    // note only they see.
    let bob = User::new("5151", "Bob");
    discord.press(&question.id, &question.button("once"), &bob);
    let note = discord
        .wait_until("a note to the other presser", WAIT, |v| {
            v.followups().into_iter().next()
        })
        .await;
    assert_eq!(note["flags"], 64, "{note}");
    assert!(
        note["content"]
            .as_str()
            .unwrap()
            .contains("Only the one who asked"),
        "{note}"
    );
    assert!(
        home.user_home().join("victim").exists(),
        "not run on Bob's word"
    );
    let press = discord.press(&question.id, &question.button("once"), &ann());
    discord
        .wait_message(&ops, |t| t == "removed it", WAIT)
        .await;
    assert!(
        !home.user_home().join("victim").exists(),
        "approved, so it ran"
    );
    discord
        .wait_until("the question edited to its verdict", WAIT, |view| {
            view.messages(&ops)
                .iter()
                .any(|m| m.content.starts_with("✅ Approved (once)") && m.buttons.is_empty())
                .then_some(())
        })
        .await;
    let answers = discord.answers();
    let answer = answers
        .iter()
        .find(|a| a.interaction_id == press)
        .expect("the press was acknowledged");
    assert_eq!(answer.response["type"], 6, "{answer:?}");
    assert!(answer.after < Duration::from_secs(3), "{answer:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_application_command_runs_and_is_acknowledged() {
    let llm = FakeLlm::start(vec![Reply::text("first"), Reply::text("after new")]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let dm = discord.dm(&ann());
    start(&home, &llm, &discord, "", "DISCORD_ALLOWED_USERS=4242\n").await;
    discord.push(&Post::new(&dm, &ann(), "remember 42"));
    discord.wait_message(&dm, |t| t == "first", WAIT).await;
    let id = discord.slash(&dm, &ann(), "new", "");
    discord
        .wait_until("the command acknowledged", WAIT, |view| {
            view.answers().into_iter().find(|a| a.interaction_id == id)
        })
        .await;
    discord.push(&Post::new(&dm, &ann(), "what did I say?"));
    discord.wait_message(&dm, |t| t == "after new", WAIT).await;
    let second = llm.requests()[1].body["messages"].to_string();
    assert!(
        !second.contains("remember 42"),
        "/new started over: {second}"
    );
    let answer = discord
        .answers()
        .into_iter()
        .find(|a| a.interaction_id == id)
        .unwrap();
    assert_eq!(answer.response["type"], 4);
    assert_eq!(
        answer.response["data"]["flags"], 64,
        "only the caller sees it"
    );
    assert!(answer.after < Duration::from_secs(3));
}
