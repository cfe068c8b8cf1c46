//! Turns nobody typed, through the real daemon and the fake model: a background process started
//! with `notify_on_complete` or `watch_patterns` reports to its conversation as a new turn
//! (Hermes' `[IMPORTANT: …]` message, masked of secrets), and in a Telegram conversation the
//! answers of such turns — a process's report, a delegation's results — reach the chat through
//! the fake Bot API.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, RecordedRequest, Reply},
    fake_telegram::{Chat, FakeTelegram, User},
    home::StopOnDrop,
    telegram_home, wait,
};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

fn terminal(arguments: Value) -> Reply {
    Reply::tool_call("terminal", &arguments.to_string())
}

/// The text of the last user message of `request`.
fn last_user_text(request: &RecordedRequest) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| match m["content"].as_str() {
            Some(text) => text.to_string(),
            None => m["content"].to_string(),
        })
        .unwrap_or_default()
}

/// The chat requests once there are `n` of them.
async fn requests(llm: &FakeLlm, n: usize) -> Vec<RecordedRequest> {
    wait::until("the model is asked again", WAIT, || async {
        let asked = llm.chat_requests();
        (asked.len() >= n).then_some(asked)
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_finished_process_reports_to_its_conversation_as_a_new_turn() {
    let llm = FakeLlm::start(vec![
        terminal(json!({
            "command": "echo built with sk-canary-7f3a9c2e4b1d6a8f; exit 3",
            "background": true,
            "notify_on_complete": true,
        })),
        Reply::text("started the build"),
        Reply::text("the build failed with exit code 3"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&llm, "");
    let out = home.ctl_async(&["send", "--json", "build it"]).await.json();
    assert_eq!(out["answer"], "started the build", "{out}");
    let session = out["session_id"].as_str().unwrap().to_string();

    let asked = requests(&llm, 3).await;
    let report = last_user_text(&asked[2]);
    assert!(
        report.contains("[IMPORTANT: Background process proc_")
            && report.contains("exited (exit code 3)")
            && report.contains("Output:\nbuilt with"),
        "{report}"
    );
    assert!(
        !report.contains("7f3a9c2e4b1d6a8f") && report.contains("sk-can..."),
        "process output reaches the model masked, as a tool result does: {report}"
    );
    // The report's turn is the conversation's: stored with its answer.
    let shown = wait::until("the report's answer is stored", WAIT, || async {
        let shown = home
            .ctl_async(&["sessions", "show", &session, "--json"])
            .await
            .json();
        let answered = shown["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["content"] == "the build failed with exit code 3");
        answered.then_some(shown)
    })
    .await;
    let sources: Vec<&str> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(sources.len(), 2, "{sources:?}");
    assert!(sources[1].starts_with("[IMPORTANT: Background process"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_watched_line_is_reported_while_the_process_runs_on() {
    let llm = FakeLlm::start(vec![
        terminal(json!({
            "command": "printf 'compiling\\nserver READY on 8080\\n'; read never",
            "background": true,
            "watch_patterns": ["READY"],
        })),
        Reply::text("watching the server"),
        Reply::text("the server is up"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&llm, "");
    let out = home
        .ctl_async(&["send", "--json", "start the server"])
        .await
        .json();
    assert_eq!(out["answer"], "watching the server", "{out}");
    let asked = requests(&llm, 3).await;
    let report = last_user_text(&asked[2]);
    assert!(
        report.contains("matched watch pattern \"READY\"")
            && report.contains("server READY on 8080"),
        "{report}"
    );
    let quoted = report.split("Matched output:\n").nth(1).unwrap();
    assert_eq!(quoted, "server READY on 8080]", "only the matching line");
}

#[tokio::test(flavor = "multi_thread")]
async fn in_telegram_a_process_report_and_a_delegations_results_reach_the_chat() {
    let llm = FakeLlm::start(vec![
        terminal(json!({
            "command": "echo deployed",
            "background": true,
            "notify_on_complete": true,
        })),
        Reply::text("deploying in the background"),
        Reply::text("the deploy finished: deployed"),
        Reply::tool_call("delegate_task", r#"{"goal": "count the files"}"#),
        Reply::text("a subagent is on it"),
        Reply::text("the subagent counted 7 files"),
    ])
    .await;
    llm.route("YOUR TASK:\ncount the files", vec![Reply::text("7 files")]);
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    telegram_home::configure(&home, &llm, &bot, "", "TELEGRAM_ALLOWED_USERS=42\n");
    home.ctl_async(&["status"]).await.ok();
    let _stop = StopOnDrop(&home);
    bot.wait_call("setMyCommands", WAIT).await;
    let ann = User::new(42, "Ann").with_username("ann");
    let dm = Chat::private(42);

    bot.push_text(&dm, &ann, "deploy it");
    bot.wait_message_text(42, |t| t == "deploying in the background", WAIT)
        .await;
    bot.wait_message_text(42, |t| t == "the deploy finished: deployed", WAIT)
        .await;

    bot.push_text(&dm, &ann, "count the files with a subagent");
    bot.wait_message_text(42, |t| t == "a subagent is on it", WAIT)
        .await;
    bot.wait_message_text(42, |t| t == "the subagent counted 7 files", WAIT)
        .await;
    let texts: Vec<String> = bot.messages(42).into_iter().map(|m| m.text).collect();
    assert_eq!(
        texts
            .iter()
            .filter(|t| *t == "the deploy finished: deployed")
            .count(),
        1,
        "once: {texts:?}"
    );
}
