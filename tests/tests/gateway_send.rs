//! `send_message` and home channels end to end, through the real daemon, the fake Bot API and
//! the fake model: `/sethome` makes a chat the home channel, the agent sends to it and to a chat
//! by id, lists its targets, and is refused — with a clear tool error, nothing sent — for a chat
//! nobody in it talked to and a platform hermesd has no connection for.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_telegram::{Chat, FakeTelegram, User},
    home::StopOnDrop,
    telegram_home,
};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(30);

fn ann() -> User {
    User::new(42, "Ann").with_username("ann")
}

fn dm() -> Chat {
    Chat::private(42)
}

/// The tool results the model got in request `n`, in order.
fn tool_results(llm: &FakeLlm, n: usize) -> Vec<Value> {
    llm.chat_requests()[n].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap_or(Value::Null))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agent_sends_to_the_home_channel_and_known_chats_only() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call(
            "send_message",
            r#"{"target": "telegram", "message": "📣 to home"}"#,
        ),
        Reply::tool_call(
            "send_message",
            r#"{"target": "telegram:42", "message": "by id"}"#,
        ),
        Reply::tool_call(
            "send_message",
            r#"{"target": "telegram:999", "message": "leak"}"#,
        ),
        Reply::tool_call(
            "send_message",
            r#"{"target": "pigeon:1", "message": "leak"}"#,
        ),
        Reply::tool_call("send_message", r#"{"action": "list"}"#),
        Reply::text("all sent"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    telegram_home::configure(&home, &llm, &bot, "", "TELEGRAM_ALLOWED_USERS=42\n");
    home.ctl_async(&["status"]).await.ok();
    let _stop = StopOnDrop(&home);
    bot.wait_call("setMyCommands", WAIT).await;

    bot.push_text(&dm(), &ann(), "/sethome");
    bot.wait_message_text(
        42,
        |t| t.starts_with("✅ Home channel set to Ann (ID: 42)"),
        WAIT,
    )
    .await;
    bot.push_text(&dm(), &ann(), "tell everyone");
    bot.wait_message_text(42, |t| t == "all sent", WAIT).await;

    let texts: Vec<String> = bot.messages(42).into_iter().map(|m| m.text).collect();
    assert!(texts.iter().any(|t| t == "📣 to home"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "by id"), "{texts:?}");
    assert!(
        bot.messages(999).is_empty(),
        "nothing went to a stranger's chat"
    );

    let results = tool_results(&llm, 5);
    assert_eq!(results.len(), 5, "{results:?}");
    assert_eq!(results[0]["success"], true, "{:?}", results[0]);
    assert_eq!(results[0]["chat_id"], "42");
    assert!(
        results[0]["note"]
            .as_str()
            .unwrap()
            .contains("home channel")
    );
    assert_eq!(results[1]["success"], true, "{:?}", results[1]);
    let refused = results[2]["error"].as_str().unwrap_or_default();
    assert!(
        refused.contains("not a chat hermesd knows"),
        "{:?}",
        results[2]
    );
    let unknown = results[3]["error"].as_str().unwrap_or_default();
    assert!(
        unknown.contains("Unknown platform: pigeon"),
        "{:?}",
        results[3]
    );
    let listed = results[4]["targets"].as_str().unwrap_or_default();
    assert!(listed.contains("telegram  (home channel: 42)"), "{listed}");
    assert!(listed.contains("telegram:42"), "{listed}");
}

/// `hermesctl gateway home` lists the homes and sets one (as `/sethome` does in the chat), a
/// malformed chat id is refused with the fix, and `send_message` to the bare platform then goes
/// to the chat and topic it named.
#[tokio::test(flavor = "multi_thread")]
async fn hermesctl_sets_the_home_channel() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call(
            "send_message",
            r#"{"target": "telegram", "message": "to the family"}"#,
        ),
        Reply::text("sent"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    telegram_home::configure(&home, &llm, &bot, "", "TELEGRAM_ALLOWED_USERS=42\n");
    home.ctl_async(&["status"]).await.ok();
    let _stop = StopOnDrop(&home);
    bot.wait_call("setMyCommands", WAIT).await;
    let family = Chat::forum(-1001, "Family");
    bot.add_chat(&family);

    let out = home.ctl_async(&["--json", "gateway", "home"]).await;
    let homes: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(homes[0]["platform"], "telegram", "{homes}");
    assert_eq!(homes[0]["chat_id"], Value::Null, "{homes}");

    let out = home
        .ctl_async(&["gateway", "home", "telegram", "family chat"])
        .await;
    assert_ne!(out.code(), Some(0));
    assert!(
        out.stderr().contains("is not a chat id"),
        "{}",
        out.stderr()
    );

    let out = home
        .ctl_async(&[
            "--json", "gateway", "home", "telegram", "-1001:7", "--name", "Family",
        ])
        .await;
    let set: Value = serde_json::from_str(&out.stdout())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", out.stdout(), out.stderr()));
    assert_eq!(set["chat_id"], "-1001", "{set}");
    assert_eq!(set["thread_id"], "7", "{set}");
    assert_eq!(set["source"], "set", "{set}");
    let out = home.ctl_async(&["gateway", "home"]).await;
    assert!(
        out.stdout().contains("-1001 topic 7 (Family, set)"),
        "{}",
        out.stdout()
    );

    bot.push_text(&dm(), &ann(), "tell the family");
    bot.wait_message_text(42, |t| t == "sent", WAIT).await;
    let sent = bot.messages(-1001);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].text, "to the family");
    assert_eq!(sent[0].thread_id, Some(7));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cron_job_made_in_a_chat_delivers_there_and_to_the_home_channel() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call(
            "cronjob",
            r#"{"action": "create", "name": "plants", "schedule": "every 1h",
                "prompt": "check the plants", "deliver": "origin,telegram"}"#,
        ),
        Reply::text("scheduled"),
        Reply::text("the plants are fine"),
        Reply::unauthorized(),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    telegram_home::configure(&home, &llm, &bot, "", "TELEGRAM_ALLOWED_USERS=42\n");
    home.ctl_async(&["status"]).await.ok();
    let _stop = StopOnDrop(&home);
    bot.wait_call("setMyCommands", WAIT).await;

    let family = Chat::group(-100, "Family");
    bot.push_text(&family, &ann(), "/sethome");
    bot.wait_message_text(-100, |t| t.starts_with("✅ Home channel set"), WAIT)
        .await;
    bot.push_text(&dm(), &ann(), "check the plants every hour");
    bot.wait_message_text(42, |t| t == "scheduled", WAIT).await;

    let out = home
        .ctl_async(&["--json", "cron", "run", "plants", "--wait"])
        .await;
    let run: Value = serde_json::from_str(&out.stdout())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", out.stdout(), out.stderr()));
    let delivery = run["delivery"].as_str().unwrap_or_default();
    assert_eq!(
        delivery, "delivered to telegram:42; delivered to telegram:-100",
        "{run}"
    );
    for chat in [42, -100] {
        let delivered: Vec<String> = bot
            .messages(chat)
            .into_iter()
            .map(|m| m.text)
            .filter(|t| t.contains("the plants are fine"))
            .collect();
        assert_eq!(delivered.len(), 1, "chat {chat}: {delivered:?}");
        assert!(
            delivered[0].starts_with("Cronjob Response: plants"),
            "{delivered:?}"
        );
    }
    // A failed run is delivered too, with its reason.
    let out = home
        .ctl_async(&["--json", "cron", "run", "plants", "--wait"])
        .await;
    let run: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(run["status"], "failed", "{run}");
    assert!(
        run["delivery"]
            .as_str()
            .unwrap()
            .starts_with("delivered to telegram:42"),
        "{run}"
    );
    let failed: Vec<String> = bot
        .messages(42)
        .into_iter()
        .map(|m| m.text)
        .filter(|t| t.contains("⚠️ Cron 'plants' failed:"))
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_allowlist_of_everyone_does_not_make_every_chat_a_target() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call(
            "send_message",
            r#"{"target": "telegram:999", "message": "leak"}"#,
        ),
        Reply::text("refused"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    telegram_home::configure(&home, &llm, &bot, "", "TELEGRAM_ALLOWED_USERS=*\n");
    home.ctl_async(&["status"]).await.ok();
    let _stop = StopOnDrop(&home);
    bot.wait_call("setMyCommands", WAIT).await;
    bot.push_text(&dm(), &ann(), "message 999");
    bot.wait_message_text(42, |t| t == "refused", WAIT).await;
    assert!(bot.messages(999).is_empty());
    let refused = &tool_results(&llm, 1)[0];
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .contains("not a chat hermesd knows"),
        "{refused}"
    );
}

/// Telegram is down when the run ends: the delivery waits, recorded as pending with the reason,
/// and goes once the platform connects — once, and the run's record then says so.
#[tokio::test(flavor = "multi_thread")]
async fn a_result_that_waited_for_telegram_is_delivered_once_it_connects() {
    let llm = FakeLlm::start(vec![Reply::text("the report")]).await;
    let first = FakeTelegram::start().await;
    let home = TestHome::new();
    let token = telegram_home::configure(&home, &llm, &first, "", "TELEGRAM_ALLOWED_USERS=42\n");
    let port = first.addr().port();
    drop(first); // nothing answers on the Bot API's port now
    home.ctl_async(&["status"]).await.ok();
    let _stop = StopOnDrop(&home);
    let added = home
        .ctl_async(&[
            "--json",
            "cron",
            "add",
            "--schedule",
            "every 1h",
            "--prompt",
            "Report",
            "--name",
            "report",
            "--deliver",
            "telegram:42",
        ])
        .await
        .json();
    assert!(added["id"].is_string(), "{added}");
    let out = home
        .ctl_async(&["--json", "cron", "run", "report", "--wait"])
        .await;
    let run: Value = serde_json::from_str(&out.stdout())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", out.stdout(), out.stderr()));
    let delivery = run["delivery"].as_str().unwrap_or_default();
    assert!(
        delivery.starts_with("pending: telegram is not connected")
            && delivery.ends_with("(for telegram:42)"),
        "{run}"
    );

    let bot = FakeTelegram::start_on_port(port)
        .await
        .expect("the port is free again");
    bot.add_token(&token);
    bot.add_chat(&dm());
    let delivered = bot
        .wait_message_text(42, |t| t.contains("the report"), WAIT)
        .await;
    assert!(
        delivered.text.starts_with("Cronjob Response: report"),
        "{}",
        delivered.text
    );
    let run_id = run["id"].as_str().unwrap().to_string();
    let record = hermes_tests::wait::until("the run's record to say delivered", WAIT, || async {
        let runs = home
            .ctl_async(&["--json", "cron", "runs", "report"])
            .await
            .json();
        let run = runs
            .as_array()
            .and_then(|r| r.iter().find(|r| r["id"] == run_id.as_str()).cloned())?;
        run["delivery"]
            .as_str()
            .is_some_and(|d| d.starts_with("delivered"))
            .then_some(run)
    })
    .await;
    assert_eq!(
        record["delivery"], "delivered to telegram:42 once telegram connected",
        "{record}"
    );
    let waiting: i64 = rusqlite::Connection::open(home.path().join("hermesd.db"))
        .unwrap()
        .query_row("SELECT count(*) FROM cron_pending", [], |r| r.get(0))
        .unwrap();
    assert_eq!(waiting, 0, "the delivery was taken with its message");
    let copies = bot
        .messages(42)
        .into_iter()
        .filter(|m| m.text.contains("the report"))
        .count();
    assert_eq!(copies, 1);
}
