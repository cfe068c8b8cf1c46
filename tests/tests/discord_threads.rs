//! Discord's automatic threads end to end (Hermes' `DISCORD_AUTO_THREAD`, on by default): a
//! mention in a server channel is answered in a public thread opened on it, named from its
//! text, and a follow-up in that thread needs no mention and continues the same conversation.
//! With `DISCORD_AUTO_THREAD=false`, in a `DISCORD_NO_THREAD_CHANNELS` channel, or for a reply,
//! the answer goes to the channel; a stranger's mention and a DM open no thread.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome, discord_home,
    fake_discord::{FakeDiscord, Post, User},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};

const WAIT: Duration = Duration::from_secs(30);

fn ann() -> User {
    User::new("4242", "Ann")
}

/// A home whose daemon talks to `llm` and `discord`, with `env` added.
async fn start(home: &TestHome, llm: &FakeLlm, discord: &FakeDiscord, env: &str) {
    discord_home::start(home, llm, discord, "", env).await;
}

async fn discord_sessions(home: &TestHome) -> Vec<serde_json::Value> {
    let sessions = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    sessions
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["source"] == "discord")
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mention_is_answered_in_a_new_thread_that_goes_on_without_a_mention() {
    let llm = FakeLlm::start(vec![
        Reply::text("first answer"),
        Reply::text("second answer"),
    ])
    .await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let guild = discord.guild("Friends");
    let general = discord.channel(&guild, "general");
    start(&home, &llm, &discord, "DISCORD_ALLOWED_USERS=4242\n").await;
    let bot = discord.bot();

    let asked = discord.push(&Post::new(
        &general,
        &ann(),
        &format!("{}  Plan the\n  trip to <#{general}> Lisbon", bot.mention()),
    ));
    // A thread opened on a message has the message's id.
    discord
        .wait_message(&asked, |t| t == "first answer", WAIT)
        .await;
    let thread = discord
        .view(|v| v.thread_on(&asked))
        .expect("a thread opened on the mention");
    assert_eq!(thread.id, asked);
    assert_eq!(thread.parent_id, general);
    assert_eq!(
        thread.name, "Plan the trip to Lisbon",
        "named from the message"
    );
    assert_eq!(thread.auto_archive_duration, Some(1440), "Hermes' day");
    assert!(
        discord.messages(&general).is_empty(),
        "nothing said in the channel itself"
    );

    // In the bot's thread no mention is needed, and the conversation goes on.
    discord.push(&Post::new(&thread.id, &ann(), "and the hotel?"));
    discord
        .wait_message(&thread.id, |t| t == "second answer", WAIT)
        .await;
    let second = llm.requests()[1].body["messages"].to_string();
    assert!(
        second.contains("Plan the") && second.contains("first answer"),
        "the first exchange is carried on: {second}"
    );
    assert!(second.contains("and the hotel?"), "{second}");
    assert_eq!(
        discord.opened_threads().len(),
        1,
        "a message in the thread opens none"
    );
    let sessions = discord_sessions(&home).await;
    assert_eq!(sessions.len(), 1, "one conversation: {sessions:?}");
    assert!(discord.messages(&general).is_empty());
    assert_eq!(discord.violations(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn with_auto_thread_off_a_mention_is_answered_in_the_channel() {
    let llm = FakeLlm::start(vec![Reply::text("right here")]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let guild = discord.guild("Friends");
    let general = discord.channel(&guild, "general");
    let env = "DISCORD_ALLOWED_USERS=4242\nDISCORD_AUTO_THREAD=false\n";
    start(&home, &llm, &discord, env).await;
    let bot = discord.bot();
    discord.push(&Post::new(
        &general,
        &ann(),
        &format!("{} what now?", bot.mention()),
    ));
    discord
        .wait_message(&general, |t| t == "right here", WAIT)
        .await;
    assert!(discord.opened_threads().is_empty());
    assert!(discord.calls_to("POST", "/threads").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_no_thread_channel_and_a_reply_are_answered_in_the_channel() {
    let llm = FakeLlm::start(vec![Reply::text("in the lounge"), Reply::text("in reply")]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let guild = discord.guild("Friends");
    let general = discord.channel(&guild, "general");
    let lounge = discord.channel(&guild, "lounge");
    // By name, as Hermes matches them (ids and `#names` too; a `#name` needs quotes in .env).
    let env = "DISCORD_ALLOWED_USERS=4242\nDISCORD_NO_THREAD_CHANNELS=\"announcements, lounge\"\n";
    start(&home, &llm, &discord, env).await;
    let bot = discord.bot();

    discord.push(&Post::new(
        &lounge,
        &ann(),
        &format!("{} anyone?", bot.mention()),
    ));
    discord
        .wait_message(&lounge, |t| t == "in the lounge", WAIT)
        .await;

    // A reply (Discord's message type 19) is answered where it was written, as in Hermes.
    let said = discord.push(&Post::new(&general, &ann(), "the plan is ready"));
    discord.push(
        &Post::new(&general, &ann(), &format!("{} look at this", bot.mention())).reply_to(&said),
    );
    discord
        .wait_message(&general, |t| t == "in reply", WAIT)
        .await;
    assert!(
        discord.opened_threads().is_empty(),
        "{:?}",
        discord.opened_threads()
    );
    assert!(discord.calls_to("POST", "/threads").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_strangers_mention_and_a_dm_open_no_thread() {
    let llm = FakeLlm::start(vec![Reply::text("in the DM"), Reply::text("in a thread")]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let guild = discord.guild("Friends");
    let general = discord.channel(&guild, "general");
    let dm = discord.dm(&ann());
    start(&home, &llm, &discord, "DISCORD_ALLOWED_USERS=4242\n").await;
    let bot = discord.bot();
    let mallory = User::new("8888", "Mallory");

    let strangers = discord.push(&Post::new(
        &general,
        &mallory,
        &format!("{} let me in", bot.mention()),
    ));
    // Ann's messages after Mallory's are answered: Mallory's was taken (and ignored) first.
    discord.push(&Post::new(&dm, &ann(), "hello"));
    discord.wait_message(&dm, |t| t == "in the DM", WAIT).await;
    assert!(discord.opened_threads().is_empty(), "a DM opens no thread");
    let asked = discord.push(&Post::new(
        &general,
        &ann(),
        &format!("{} and now?", bot.mention()),
    ));
    discord
        .wait_message(&asked, |t| t == "in a thread", WAIT)
        .await;
    let opened = discord.opened_threads();
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert_eq!(opened[0].message_id, asked, "only Ann's mention got one");
    assert!(discord.view(|v| v.thread_on(&strangers)).is_none());
    assert_eq!(
        llm.requests().len(),
        2,
        "the stranger never reached the model"
    );
}
