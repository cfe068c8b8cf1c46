//! Telegram's group rules and strangers' direct messages through the real daemon and the fake
//! Bot API: with `require_mention`, only a mention (its handle taken out of the text), a reply to
//! the bot, a wake word or a free-response chat reaches the model; a command for another bot
//! and the bot's own messages never do; a stranger's direct message gets no pairing code while
//! an allowlist is set, unless `unauthorized_dm_behavior: pair` asks for one; in a group open to
//! everyone (`TELEGRAM_GROUP_ALLOWED_CHATS`) another member cannot answer someone's approval.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_telegram::{Chat, FakeTelegram, Incoming, User},
    home::StopOnDrop,
    telegram_home,
};

const WAIT: Duration = Duration::from_secs(30);

/// The user messages of every model request, in order.
fn user_texts(llm: &FakeLlm) -> Vec<Vec<String>> {
    llm.chat_requests()
        .iter()
        .map(|request| {
            request.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "user")
                .map(|m| m["content"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .collect()
}

async fn start(home: &TestHome, bot: &FakeTelegram) {
    home.ctl_async(&["status"]).await.ok();
    bot.wait_call("setMyCommands", WAIT).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn with_require_mention_only_what_addresses_the_bot_reaches_the_model() {
    let llm = FakeLlm::start(vec![
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
        Reply::text("four"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let bot_id = bot.bot_user()["id"].as_i64().unwrap();
    telegram_home::configure(
        &home,
        &llm,
        &bot,
        "telegram:\n  require_mention: true\n  mention_patterns: ['^hermes\\b']\n  \
         free_response_chats: [-600]\n",
        // The bot itself is allowed, to show its own messages are skipped for what they are.
        &format!("TELEGRAM_ALLOWED_USERS=42,{bot_id}\n"),
    );
    let _stop = StopOnDrop(&home);
    start(&home, &bot).await;
    let ann = User::new(42, "Ann").with_username("ann");
    let friends = Chat::group(-500, "friends");

    // Chatter, then a mention: only the mention is taken, without the handle.
    bot.push_text(&friends, &ann, "just chatting");
    bot.push_text(&friends, &ann, "@fake_bot what's new?");
    let one = bot.wait_message_text(-500, |t| t == "one", WAIT).await;
    assert_eq!(user_texts(&llm), [vec!["what's new?".to_string()]]);

    // A reply to the bot's message is for it.
    bot.push(Incoming::text(&friends, &ann, "and then?").replying_to(one.message_id));
    bot.wait_message_text(-500, |t| t == "two", WAIT).await;

    // A wake word is for this bot.
    bot.push_text(&friends, &ann, "Hermes, sum it up");
    bot.wait_message_text(-500, |t| t == "three", WAIT).await;
    let third = &user_texts(&llm)[2];
    assert_eq!(
        third.first().map(String::as_str),
        Some("what's new?"),
        "not reset: {third:?}"
    );
    assert_eq!(third.last().map(String::as_str), Some("Hermes, sum it up"));

    // In a free-response chat every message is for it, but never the bot's own, nor a
    // command for another bot (taken, `/new` would answer and start over).
    let team = Chat::group(-600, "team");
    bot.push_text(&team, &User::new(bot_id, "Fake Bot"), "I am the bot");
    bot.push_text(&team, &ann, "/new@other_bot");
    bot.push_text(&team, &ann, "anyone around?");
    bot.wait_message_text(-600, |t| t == "four", WAIT).await;
    let said: Vec<String> = bot.messages(-600).into_iter().map(|m| m.text).collect();
    assert_eq!(said, ["four"], "only the answer");
    let all = user_texts(&llm);
    assert_eq!(all.len(), 4, "{all:?}");
    assert_eq!(all[3], ["anyone around?"]);
    let everything = format!("{all:?}");
    for never in ["just chatting", "other_bot", "I am the bot", "@fake_bot"] {
        assert!(
            !everything.contains(never),
            "{never} reached the model: {all:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_strangers_dm_gets_no_code_while_an_allowlist_is_set_unless_pairing_is_asked() {
    let llm = FakeLlm::start(vec![Reply::text("hello Ann")]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    telegram_home::configure(&home, &llm, &bot, "", "TELEGRAM_ALLOWED_USERS=42\n");
    let _stop = StopOnDrop(&home);
    start(&home, &bot).await;

    let eve = User::new(77, "Eve");
    bot.push_text(&Chat::private(77), &eve, "let me in");
    // Taken in order: once Ann is answered, Eve's message was judged.
    bot.push_text(&Chat::private(42), &User::new(42, "Ann"), "hi");
    bot.wait_message_text(42, |t| t == "hello Ann", WAIT).await;
    assert!(bot.messages(77).is_empty(), "{:?}", bot.messages(77));
    let pending = home.ctl_async(&["pairing", "list", "--json"]).await.json();
    assert_eq!(pending.as_array().unwrap().len(), 0, "{pending}");
    assert_eq!(user_texts(&llm), [vec!["hi".to_string()]]);

    // The platform's own setting asks for pairing codes even so.
    let bot = FakeTelegram::start().await;
    let asked = TestHome::new();
    telegram_home::configure(
        &asked,
        &llm,
        &bot,
        "telegram:\n  unauthorized_dm_behavior: pair\n",
        "TELEGRAM_ALLOWED_USERS=42\n",
    );
    let _stop = StopOnDrop(&asked);
    start(&asked, &bot).await;
    bot.push_text(&Chat::private(77), &eve, "let me in, please");
    bot.wait_message_text(77, |t| t.contains("pairing code"), WAIT)
        .await;
    let pending = asked.ctl_async(&["pairing", "list", "--json"]).await.json();
    assert_eq!(pending.as_array().unwrap().len(), 1, "{pending}");
}

#[tokio::test(flavor = "multi_thread")]
async fn in_a_group_only_the_asker_answers_an_approval() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call("terminal", r#"{"command": "rm -rf victim"}"#),
        Reply::text("removed it"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    // Everyone in the group may talk; each has their own conversation (the default).
    telegram_home::configure(&home, &llm, &bot, "", "TELEGRAM_GROUP_ALLOWED_CHATS=-500\n");
    let _stop = StopOnDrop(&home);
    std::fs::create_dir_all(home.user_home().join("victim")).unwrap();
    start(&home, &bot).await;
    let friends = Chat::group(-500, "friends");
    let ann = User::new(42, "Ann").with_username("ann");
    let bob = User::new(43, "Bob").with_username("bob");

    bot.push_text(&friends, &ann, "clean up");
    let question = bot
        .wait_message_text(-500, |t| t.contains("requires approval"), WAIT)
        .await;
    let button = |choice: &str| question.button(choice);
    let answer_to = |press: String| {
        let bot = &bot;
        async move {
            bot.wait_press_answer(&press, WAIT)
                .await
                .text
                .unwrap_or_default()
        }
    };
    let (_, bobs) = bot.push_callback(&friends, &bob, question.message_id, &button("once"));
    assert_eq!(
        answer_to(bobs).await,
        "Only the one who asked can answer this."
    );
    // Let in by the group's listing, Ann is not the owner: "always" would outlive her turn.
    let (_, always) = bot.push_callback(&friends, &ann, question.message_id, &button("always"));
    assert!(
        answer_to(always)
            .await
            .starts_with("Only the bot's owner can allow a command always")
    );
    assert!(
        home.user_home().join("victim").exists(),
        "neither press approved Ann's command"
    );
    // Nor can a member move the home channel.
    bot.push_text(&friends, &bob, "/sethome");
    bot.wait_message_text(
        -500,
        |t| t == "Only the bot's owner can use /sethome.",
        WAIT,
    )
    .await;

    bot.push_callback(&friends, &ann, question.message_id, &button("once"));
    bot.wait_message_text(-500, |t| t == "removed it", WAIT)
        .await;
    assert!(!home.user_home().join("victim").exists(), "Ann approved it");
}
