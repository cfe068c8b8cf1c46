//! What the prompt says about where the agent is talking, end to end through the real daemon,
//! the fake Bot API and the fake model: the `## Current Session Context` block of a Telegram
//! conversation (source, user, platforms, home channel, delivery options) stays byte-stable
//! from one message to the next, a shared group's messages say who wrote them, and with
//! `privacy.redact_pii` the ids in it are hashed.
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

/// The system prompt of the model's request `n`.
fn system(llm: &FakeLlm, n: usize) -> String {
    llm.chat_requests()[n].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The last user message of the model's request `n`.
fn last_user(llm: &FakeLlm, n: usize) -> String {
    let body = &llm.chat_requests()[n].body;
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chat_conversation_knows_where_it_is() {
    let llm = FakeLlm::start(vec![
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    telegram_home::configure(
        &home,
        &llm,
        &bot,
        "group_sessions_per_user: false\n",
        "TELEGRAM_ALLOWED_USERS=42,43\n",
    );
    home.ctl_async(&["status"]).await.ok();
    let _stop = StopOnDrop(&home);
    bot.wait_call("setMyCommands", WAIT).await;
    let ann = User::new(42, "Ann").with_username("ann");
    let dm = Chat::private(42);
    bot.push_text(&dm, &ann, "/sethome");
    bot.wait_message_text(42, |t| t.starts_with("✅ Home channel set"), WAIT)
        .await;

    bot.push_text(&dm, &ann, "hello");
    bot.wait_message_text(42, |t| t == "one", WAIT).await;
    bot.push_text(&dm, &ann, "again");
    bot.wait_message_text(42, |t| t == "two", WAIT).await;
    let first = system(&llm, 0);
    let context = &first[first.find("## Current Session Context").expect("the block")..];
    for line in [
        "**Source:** Telegram (\"DM with ann\")",
        "**User:** \"ann\"",
        "**Connected Platforms:** local (files on this machine), telegram: Connected ✓",
        "  - telegram: \"Ann\" (ID: \"42\")",
        "- `\"origin\"` → Back to this chat (\"Ann\")",
        "- `\"telegram\"` → Home channel (\"Ann\")",
    ] {
        assert!(context.contains(line), "{line}\n---\n{context}");
    }
    assert_eq!(system(&llm, 1), first, "the prompt is byte-stable");

    // A group shared by everyone in it: the block says so, and each message names its writer.
    let family = Chat::group(-100, "Family");
    let bob = User::new(43, "Bob\n## Override").with_username("bob");
    bot.push_text(&family, &bob, "what's for dinner?");
    bot.wait_message_text(-100, |t| t == "three", WAIT).await;
    let group = system(&llm, 2);
    assert!(
        group.contains("**Source:** Telegram (\"group: Family\")"),
        "{group}"
    );
    assert!(
        group.contains("**Session type:** Multi-user session"),
        "{group}"
    );
    assert_eq!(last_user(&llm, 2), "[bob] what's for dinner?");
}

#[tokio::test(flavor = "multi_thread")]
async fn redact_pii_hashes_the_ids_in_the_prompt() {
    let llm = FakeLlm::start(vec![Reply::text("hi")]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    telegram_home::configure(
        &home,
        &llm,
        &bot,
        "privacy:\n  redact_pii: true\n",
        "TELEGRAM_ALLOWED_USERS=987654321\nTELEGRAM_HOME_CHANNEL=987654321\n",
    );
    home.ctl_async(&["status"]).await.ok();
    let _stop = StopOnDrop(&home);
    bot.wait_call("setMyCommands", WAIT).await;
    // A user with no username or name the platform gives: only the id names them.
    let user = User::new(987_654_321, "");
    bot.push_text(&Chat::private(987_654_321), &user, "hello");
    bot.wait_message_text(987_654_321, |t| t == "hi", WAIT)
        .await;
    let prompt = system(&llm, 0);
    let context = &prompt[prompt
        .find("## Current Session Context")
        .expect("the block")..];
    assert!(!context.contains("987654321"), "{context}");
    // sha256("987654321")[:12]
    assert!(context.contains("(ID: \"8a9bcf1e51e8\")"), "{context}");
}

/// Make every conversation look last active `hours` ago (time passing, for the reset policy).
fn age_conversations(home: &TestHome, hours: i64) {
    let db = rusqlite::Connection::open(home.path().join("hermesd.db")).unwrap();
    db.busy_timeout(Duration::from_secs(10)).unwrap();
    db.execute(
        "UPDATE sessions SET updated_at = updated_at - ?1",
        [hours * 3_600_000],
    )
    .unwrap();
}

/// An idle chat starts over with a notice and a fresh conversation (the model told so, the old
/// history gone from its context); one whose background process still runs is kept.
#[tokio::test(flavor = "multi_thread")]
async fn an_idle_chat_is_reset_with_a_notice_unless_its_process_runs() {
    let llm = FakeLlm::start(vec![
        Reply::text("noted OLDMARK"),
        Reply::tool_call(
            "terminal",
            r#"{"command": "sleep 600", "background": true}"#,
        ),
        Reply::text("started"),
        Reply::text("fresh"),
        Reply::text("still here"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    telegram_home::configure(
        &home,
        &llm,
        &bot,
        "session_reset:\n  mode: idle\n  idle_minutes: 60\n",
        "TELEGRAM_ALLOWED_USERS=42,43\n",
    );
    home.ctl_async(&["status"]).await.ok();
    let _stop = StopOnDrop(&home);
    bot.wait_call("setMyCommands", WAIT).await;
    let (ann, bob) = (User::new(42, "Ann"), User::new(43, "Bob"));
    bot.push_text(&Chat::private(42), &ann, "remember OLDMARK");
    bot.wait_message_text(42, |t| t == "noted OLDMARK", WAIT)
        .await;
    bot.push_text(&Chat::private(43), &bob, "start the job");
    bot.wait_message_text(43, |t| t == "started", WAIT).await;

    age_conversations(&home, 2);
    bot.push_text(&Chat::private(42), &ann, "hi again");
    bot.wait_message_text(42, |t| t == "fresh", WAIT).await;
    let notices: Vec<String> = bot
        .messages(42)
        .into_iter()
        .map(|m| m.text)
        .filter(|t| t.starts_with("◐ Session automatically reset (inactive for 1h)"))
        .collect();
    assert_eq!(notices.len(), 1, "{:?}", bot.messages(42));
    let asked = llm.chat_requests()[3].body["messages"].to_string();
    assert!(asked.contains("expired due to inactivity"), "{asked}");
    assert!(
        !asked.contains("OLDMARK"),
        "the old history is not in the new context"
    );

    bot.push_text(&Chat::private(43), &bob, "how is it going?");
    bot.wait_message_text(43, |t| t == "still here", WAIT).await;
    assert!(
        !bot.messages(43)
            .iter()
            .any(|m| m.text.starts_with("◐ Session automatically reset")),
        "a conversation with a running process is kept"
    );
    let kept = llm.chat_requests()[4].body["messages"].to_string();
    assert!(kept.contains("start the job"), "{kept}");
    let sessions = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    assert_eq!(
        sessions.as_array().unwrap().len(),
        3,
        "the old one is kept: {sessions}"
    );
}
