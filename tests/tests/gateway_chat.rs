//! The gateway's chat features end to end: approvals as buttons and as `/approve` / `/deny`,
//! slash commands, long answers split at Telegram's limit, markup Telegram rejects retried as
//! plain text, 429s waited out, files saved and referenced, webhook mode with its secret, a
//! terminal attached to a Telegram conversation, and a refused token left fatal.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_telegram::{Chat, FakeTelegram, Fault, User},
    home::StopOnDrop,
    telegram_home::{self, unique_token, wait_state},
};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

/// A home whose daemon talks to `llm` and polls `bot`, user 42 allowed, with `env` added.
fn configure(home: &TestHome, llm: &FakeLlm, bot: &FakeTelegram, env: &str) -> String {
    telegram_home::configure(
        home,
        llm,
        bot,
        "",
        &format!("TELEGRAM_ALLOWED_USERS=42\n{env}"),
    )
}

async fn start(home: &TestHome, bot: &FakeTelegram) {
    home.ctl_async(&["status"]).await.ok();
    bot.wait_call("setMyCommands", WAIT).await;
}

fn ann() -> User {
    User::new(42, "Ann").with_username("ann")
}

fn dm() -> Chat {
    Chat::private(42)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_is_a_message_with_buttons_and_a_press_answers_it() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call("terminal", r#"{"command": "rm -rf victim"}"#),
        Reply::text("removed it"),
        Reply::tool_call("terminal", r#"{"command": "rm -rf keeper"}"#),
        Reply::text("left it"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "");
    std::fs::create_dir_all(home.user_home().join("victim")).unwrap();
    std::fs::create_dir_all(home.user_home().join("keeper")).unwrap();
    start(&home, &bot).await;

    bot.push_text(&dm(), &ann(), "clean up");
    let question = bot
        .wait_message_text(42, |t| t.contains("requires approval"), WAIT)
        .await;
    assert_eq!(question.buttons().len(), 4, "{:?}", question.reply_markup);
    let (_, press) =
        bot.push_callback(&dm(), &ann(), question.message_id, &question.button("once"));
    bot.wait_message_text(42, |t| t == "removed it", WAIT).await;
    assert!(
        !home.user_home().join("victim").exists(),
        "approved, so it ran"
    );
    // The question is edited to its verdict, and then the press answered, after the answer
    // reaches the agent: both may land after the reply.
    bot.wait_until("the question edited to its verdict", WAIT, |view| {
        view.messages(42)
            .iter()
            .any(|m| m.text.starts_with("✅ Approved (once)"))
            .then_some(())
    })
    .await;
    bot.wait_press_answer(&press, WAIT).await;
    let answered = bot.callback_answers();
    assert_eq!(answered.len(), 1, "{answered:?}");

    // The same through a command.
    bot.push_text(&dm(), &ann(), "and the other");
    bot.wait_until("a second question", WAIT, |view| {
        let messages = view.messages(42);
        (messages.len() >= 3 && messages.last()?.text.contains("requires approval")).then_some(())
    })
    .await;
    bot.push_text(&dm(), &ann(), "/deny");
    bot.wait_message_text(42, |t| t == "left it", WAIT).await;
    assert!(
        home.user_home().join("keeper").exists(),
        "denied, so it did not run"
    );
}

/// A press that arrives before Telegram has told the daemon the question's message id still
/// edits the question: the press names the message it came from.
#[tokio::test(flavor = "multi_thread")]
async fn a_press_before_the_questions_id_is_known_still_edits_it() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call("terminal", r#"{"command": "rm -rf victim"}"#),
        Reply::text("removed it"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "");
    std::fs::create_dir_all(home.user_home().join("victim")).unwrap();
    start(&home, &bot).await;

    // The question appears in the chat, but its sendMessage is answered only when released.
    bot.fail_next("sendMessage", Fault::DeliverThenHold);
    bot.push_text(&dm(), &ann(), "clean up");
    let question = bot
        .wait_message_text(42, |t| t.contains("requires approval"), WAIT)
        .await;
    let (_, press) =
        bot.push_callback(&dm(), &ann(), question.message_id, &question.button("once"));
    bot.wait_press_answer(&press, WAIT).await;
    bot.release_held();
    bot.wait_message_text(42, |t| t == "removed it", WAIT).await;
    bot.wait_until("the question edited to its verdict", WAIT, |view| {
        view.message(42, question.message_id)
            .filter(|m| m.text.starts_with("✅ Approved (once) by ann"))
            .map(|_| ())
    })
    .await;
    assert!(
        !home.user_home().join("victim").exists(),
        "approved, so it ran"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_commands_act_on_the_chats_conversation() {
    let llm = FakeLlm::start(vec![
        Reply::text("first answer"),
        Reply::text("fresh answer"),
        Reply::text("retried answer"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "");
    start(&home, &bot).await;

    bot.push_text(&dm(), &ann(), "/help");
    bot.wait_message_text(42, |t| t.contains("/retry") && t.contains("/approve"), WAIT)
        .await;
    bot.push_text(&dm(), &ann(), "/hepl");
    bot.wait_message_text(42, |t| t.contains("Did you mean /help?"), WAIT)
        .await;
    bot.push_text(&dm(), &ann(), "hello");
    bot.wait_message_text(42, |t| t == "first answer", WAIT)
        .await;
    bot.push_text(&dm(), &ann(), "/title Groceries");
    bot.wait_message_text(42, |t| t == "Title set: Groceries", WAIT)
        .await;
    bot.push_text(&dm(), &ann(), "/reset");
    bot.wait_message_text(42, |t| t.starts_with("✨ New session"), WAIT)
        .await;
    bot.push_text(&dm(), &ann(), "again");
    bot.wait_message_text(42, |t| t == "fresh answer", WAIT)
        .await;
    let sessions = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    let telegram: Vec<_> = sessions
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["source"] == "telegram")
        .collect();
    assert_eq!(telegram.len(), 2, "{sessions}");
    // The fresh conversation does not carry the first one's history.
    let second = &llm.requests()[1].body["messages"];
    assert!(!second.to_string().contains("first answer"), "{second}");
    bot.push_text(&dm(), &ann(), "/retry");
    bot.wait_message_text(42, |t| t == "retried answer", WAIT)
        .await;
    let third = &llm.requests()[2].body["messages"];
    let users: Vec<_> = third
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(users.len(), 1, "the exchange was replaced: {third}");
    assert_eq!(users[0]["content"], "again");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_answer_is_split_rejected_markup_goes_plain_and_429_is_waited_out() {
    let paragraph = "word ".repeat(200);
    let long: String = (0..12)
        .map(|i| format!("Paragraph {i}: {paragraph}"))
        .collect::<Vec<_>>()
        .join("\n\n");
    let llm = FakeLlm::start(vec![Reply::text(&long), Reply::text("**bold** reply")]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "");
    start(&home, &bot).await;

    bot.push_text(&dm(), &ann(), "tell me a lot");
    bot.wait_until("every piece", WAIT, |view| {
        view.messages(42)
            .iter()
            .any(|m| m.text.contains("Paragraph 11"))
            .then_some(())
    })
    .await;
    let pieces = bot.messages(42);
    assert!(pieces.len() >= 3, "{}", pieces.len());
    for piece in &pieces {
        assert!(
            piece.text.encode_utf16().count() <= 4096,
            "{}",
            piece.text.len()
        );
    }
    let all: String = pieces.iter().map(|m| m.text.as_str()).collect();
    for i in 0..12 {
        assert!(
            all.contains(&format!("Paragraph {i}:")),
            "paragraph {i} lost"
        );
    }

    // Telegram refuses the HTML once (the plain text goes), and rate-limits an edit.
    bot.fail_next(
        "sendMessage",
        Fault::BadRequest("can't parse entities: Unsupported start tag".into()),
    );
    bot.fail_next("editMessageText", Fault::TooManyRequests { retry_after: 1 });
    let before = bot.messages(42).len();
    bot.push_text(&dm(), &ann(), "short one");
    let reply = bot.wait_message_text(42, |t| t == "bold reply", WAIT).await;
    assert_eq!(
        bot.messages(42).len(),
        before + 1,
        "one message for the answer"
    );
    assert!(reply.edits >= 1);
    let sends = bot.calls_of("sendMessage");
    let plain = sends.last().unwrap();
    assert!(
        plain.param("parse_mode").is_null(),
        "the retry is plain text"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_photo_and_a_document_are_saved_and_named_to_the_agent() {
    let llm = FakeLlm::start(vec![
        Reply::text("nice picture"),
        Reply::text("got the file"),
        Reply::text("heard you"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "");
    start(&home, &bot).await;

    bot.push_photo(&dm(), &ann(), vec![0xFF, 0xD8, 0xFF, 0xE0], Some("look"));
    bot.wait_message_text(42, |t| t == "nice picture", WAIT)
        .await;
    let asked = llm.requests()[0].body["messages"].to_string();
    assert!(asked.contains("look"), "{asked}");
    assert!(asked.contains("saved at"), "{asked}");
    bot.push_document(
        &dm(),
        &ann(),
        b"a,b\n1,2\n".to_vec(),
        "../../evil name.csv",
        "text/csv",
        None,
    );
    bot.wait_message_text(42, |t| t == "got the file", WAIT)
        .await;
    let asked = llm.requests()[1].body["messages"].to_string();
    let saved = home.path().join("cache/gateway/42");
    let files: Vec<String> = std::fs::read_dir(&saved)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    let csv = files.iter().find(|f| f.ends_with(".csv")).unwrap();
    assert!(!csv.contains('/') && !csv.starts_with('.'), "{csv}");
    assert_eq!(std::fs::read(saved.join(csv)).unwrap(), b"a,b\n1,2\n");
    assert!(asked.contains(csv.as_str()), "{asked}");
    bot.push_voice(&dm(), &ann(), vec![b'O', b'g', b'g', b'S'], 3, None);
    bot.wait_message_text(42, |t| t == "heard you", WAIT).await;
    let asked = llm.requests()[2].body["messages"].to_string();
    assert!(
        asked.contains("voice") && asked.contains("saved at"),
        "{asked}"
    );
    assert_eq!(std::fs::read_dir(&saved).unwrap().count(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn webhook_mode_checks_the_secret_and_answers_once_stored() {
    let llm = FakeLlm::start(vec![Reply::text("via webhook")]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let port = hermes_tests::http::free_port();
    configure(
        &home,
        &llm,
        &bot,
        &format!(
            "TELEGRAM_WEBHOOK_URL=http://127.0.0.1:{port}/telegram\nTELEGRAM_WEBHOOK_PORT={port}\nTELEGRAM_WEBHOOK_HOST=127.0.0.1\nTELEGRAM_WEBHOOK_SECRET=s3cret-value\n"
        ),
    );
    start(&home, &bot).await;
    let (url, secret) = bot.webhook().expect("setWebhook was called");
    assert!(url.ends_with("/telegram"));
    assert_eq!(secret.as_deref(), Some("s3cret-value"));
    assert!(
        bot.calls_of("getUpdates").is_empty(),
        "no polling in webhook mode"
    );

    let update = json!({"message": {"message_id": 1, "date": 1,
        "chat": {"id": 42, "type": "private", "first_name": "Ann"},
        "from": {"id": 42, "is_bot": false, "first_name": "Ann"},
        "text": "through the hook"}});
    bot.add_chat(&dm());
    assert_eq!(
        bot.deliver_webhook(update.clone(), Some("wrong")).await,
        401
    );
    assert_eq!(bot.deliver_webhook(update.clone(), None).await, 401);
    assert_eq!(bot.deliver_webhook(update, Some("s3cret-value")).await, 200);
    bot.wait_message_text(42, |t| t == "via webhook", WAIT)
        .await;
    assert_eq!(
        llm.requests().len(),
        1,
        "only the authentic delivery reached the model"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_attaches_to_a_telegram_conversation() {
    let llm = FakeLlm::start(vec![
        Reply::text("first"),
        Reply::text("seen from the terminal"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "");
    start(&home, &bot).await;
    bot.push_text(&dm(), &ann(), "hello");
    bot.wait_message_text(42, |t| t == "first", WAIT).await;
    let sessions = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    let id = sessions[0]["id"].as_str().unwrap().to_string();

    let mut watcher = home
        .command(&hermes_tests::binary("hermesctl"))
        .args(["attach", "--read-only", &id])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = watcher.stdout.take().unwrap();
    let (lines_tx, mut lines_rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    // The backlog shows the first exchange; then the phone's next message arrives live.
    let mut seen = String::new();
    tokio::time::timeout(WAIT, async {
        while !seen.contains("first") {
            seen.push_str(&lines_rx.recv().await.unwrap());
            seen.push('\n');
        }
    })
    .await
    .expect("the backlog");
    bot.push_text(&dm(), &ann(), "from the phone");
    tokio::time::timeout(WAIT, async {
        while !seen.contains("seen from the terminal") {
            seen.push_str(&lines_rx.recv().await.unwrap());
            seen.push('\n');
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the live turn was not shown:\n{seen}"));
    assert!(seen.contains("from the phone"), "{seen}");
    let _ = watcher.kill();
    let _ = watcher.wait();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_token_is_fatal_and_not_retried() {
    let llm = FakeLlm::start(vec![]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let token = configure(&home, &llm, &bot, "");
    bot.remove_token(&token);
    home.ctl_async(&["status"]).await.ok();
    let status = wait_state(&home, "fatal").await;
    assert!(
        status[0]["last_error"]
            .as_str()
            .unwrap()
            .contains("Unauthorized"),
        "{status}"
    );
    assert!(!status[0]["last_error"].as_str().unwrap().contains(&token));
    assert_eq!(bot.calls_of("getMe").len(), 1, "not retried");
    assert!(bot.calls_of("getUpdates").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trusted_skill_is_a_command_in_the_menu_and_in_the_chat() {
    let llm = FakeLlm::start(vec![Reply::text("backed up")]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "");
    home.write(
        "skills/db-backup/SKILL.md",
        "---\nname: db-backup\ndescription: Back up the database\n---\n\n# Backup\n\nRun pg_dump.\n",
    );
    start(&home, &bot).await;
    let menu = bot
        .wait_until("the command menu", WAIT, |view| {
            let menu = view.commands();
            (!menu.is_empty()).then_some(menu)
        })
        .await;
    assert!(
        menu.iter()
            .any(|(name, about)| name == "db_backup" && about == "Back up the database"),
        "{menu:?}"
    );
    bot.push_text(&dm(), &ann(), "/db-backup the prod one");
    bot.wait_message_text(42, |t| t == "backed up", WAIT).await;
    let asked = llm.requests()[0].body["messages"].to_string();
    assert!(
        asked.contains("db_backup") && asked.contains("the prod one"),
        "{asked}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conflict_is_reported_and_a_disabled_platform_stays_off() {
    let llm = FakeLlm::start(vec![]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &bot, "");
    bot.set_conflict(true);
    home.ctl_async(&["status"]).await.ok();
    let status = wait_state(&home, "retrying").await;
    let error = status[0]["last_error"].as_str().unwrap();
    assert!(
        error.contains("conflict") && error.contains("getUpdates"),
        "{error}"
    );

    let off = TestHome::new();
    let _stop_off = StopOnDrop(&off);
    let token = unique_token(&bot);
    off.use_fake_model(
        &llm,
        &format!(
            "platforms:\n  telegram:\n    enabled: false\n    extra:\n      base_url: {}\n",
            bot.base_url()
        ),
    );
    off.write(".env", &format!("TELEGRAM_BOT_TOKEN={token}\n"));
    off.ctl_async(&["status"]).await.ok();
    let status = off.ctl_async(&["gateway", "status", "--json"]).await.json();
    assert_eq!(status[0]["state"], "disabled", "{status}");
    assert!(
        bot.calls().iter().all(|c| c.token != token),
        "a disabled platform makes no call"
    );
}
