//! What reaches Slack besides a turn's streamed answer, end to end through the real daemon, the
//! fake model and the fake Slack in Socket Mode: a file the answer names with a `MEDIA:` tag is
//! uploaded after the answer with Slack's current flow (`files.getUploadURLExternal`, a POST of
//! the bytes, `files.completeUploadExternal` into the DM's thread), the tag leaves the text shown,
//! and the Hermes `.env` the answer also names is not uploaded but named in a note; a cron job's
//! result is delivered once to the channel `slack:<channel>` names (once that channel has talked
//! to the agent: before, it is refused), and once to the home channel (`SLACK_HOME_CHANNEL`) for
//! the bare `slack` target, also when the job names that channel twice.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_slack::{FakeSlack, UserMessage},
    home::StopOnDrop,
    slack_home::{self, wait_state},
};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread")]
async fn a_file_the_answer_names_is_uploaded_into_the_thread_and_the_env_is_not() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let report = home.work_dir().join("report.csv");
    let content = b"month,total\njan,3\n";
    std::fs::write(&report, content).unwrap();
    let answer = format!(
        "Here:\nMEDIA:{}\nMEDIA:{}",
        report.display(),
        home.path().join(".env").display()
    );
    let llm = FakeLlm::start(vec![Reply::text(&answer)]).await;
    let slack = FakeSlack::start().await;
    slack_home::configure(&home, &llm, &slack, "", "SLACK_ALLOWED_USERS=U1\n");
    home.ctl_async(&["status"]).await.ok();
    wait_state(&home, "connected").await;
    let token = slack.first_team().bot_token;

    let asked = slack.push(&UserMessage::new("D1", "U1", "the report please"));
    let shared = slack
        .wait_until("the report shared in the DM", WAIT, |s| {
            s.shared_files()
                .into_iter()
                .find(|f| f.name == "report.csv")
        })
        .await;
    assert_eq!(
        shared.shared_to,
        Some(("D1".to_owned(), Some(asked.ts.clone()))),
        "into the DM's thread, where the answer is"
    );
    assert_eq!(shared.bytes.as_deref(), Some(&content[..]));
    // The note is sent after every file: once it is there, nothing more is uploaded.
    let note = slack
        .wait_bot_message("D1", |t| t.starts_with("⚠️ Not sent"), WAIT)
        .await;
    assert!(note.text.contains(".env"), "{}", note.text);
    assert_eq!(note.thread_ts.as_deref(), Some(asked.ts.as_str()));

    // Step one: the upload URL, asked for with the file's name and length.
    let calls = slack.calls();
    let position = |method: &str| {
        let found: Vec<usize> = (0..calls.len())
            .filter(|&i| calls[i].method == method)
            .collect();
        assert_eq!(found.len(), 1, "one {method}:\n{}", slack.call_log());
        found[0]
    };
    let (asked_url, completed) = (
        position("files.getUploadURLExternal"),
        position("files.completeUploadExternal"),
    );
    let url_call = &calls[asked_url];
    assert_eq!(url_call.params["filename"], "report.csv");
    assert_eq!(
        url_call.params["length"].as_str().map(str::to_owned),
        Some(content.len().to_string())
    );
    assert_eq!(url_call.token, token);
    assert_eq!(url_call.status, Some(200));
    // Step two: the bytes, POSTed to that URL between the two calls.
    let uploads = slack.uploads();
    assert_eq!(uploads.len(), 1, "{uploads:?}");
    assert_eq!(uploads[0].file_id, shared.id);
    assert!(uploads[0].known);
    assert_eq!(&uploads[0].bytes[..], &content[..]);
    assert!(
        asked_url < uploads[0].after_calls && uploads[0].after_calls <= completed,
        "URL (call {asked_url}), bytes (after {} calls), completion (call {completed})",
        uploads[0].after_calls
    );
    // Step three: completed into the chat and thread.
    let done = &calls[completed];
    assert_eq!(done.params["channel_id"], "D1");
    assert_eq!(done.params["thread_ts"], asked.ts.as_str());
    assert_eq!(done.token, token);
    let files: Value = serde_json::from_str(done.params["files"].as_str().unwrap()).unwrap();
    assert_eq!(files[0]["id"], shared.id.as_str(), "{files}");

    // The answer is shown first, without its tags, in the thread.
    let shown = slack
        .wait_bot_message("D1", |t| t.starts_with("Here"), WAIT)
        .await;
    assert_eq!(shown.text, "Here:");
    assert_eq!(shown.thread_ts.as_deref(), Some(asked.ts.as_str()));
    assert!(
        shown.history.iter().all(|t| !t.contains("MEDIA:")),
        "{:?}",
        shown.history
    );
    let answered = (0..calls.len())
        .find(|&i| {
            matches!(calls[i].method.as_str(), "chat.postMessage" | "chat.update")
                && calls[i].params["text"] == "Here:"
        })
        .expect("the answer's final text was sent");
    assert!(answered < asked_url, "the file goes after the answer");
    assert_eq!(
        slack.files().len(),
        1,
        "only the report was announced: {:?}",
        slack.files()
    );
    assert_eq!(slack.bot_messages("D1").len(), 2, "the answer and the note");
}

/// Runs the cron job `name` now; returns the run's record.
async fn run_now(home: &TestHome, name: &str) -> Value {
    let out = home
        .ctl_async(&["--json", "cron", "run", name, "--wait"])
        .await;
    serde_json::from_str(&out.stdout())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", out.stdout(), out.stderr()))
}

/// Adds an hourly cron job `name` answering `prompt`, delivered to `deliver`.
async fn add_job(home: &TestHome, name: &str, prompt: &str, deliver: &str) {
    let added = home
        .ctl_async(&[
            "--json",
            "cron",
            "add",
            "--schedule",
            "every 1h",
            "--prompt",
            prompt,
            "--name",
            name,
            "--deliver",
            deliver,
        ])
        .await
        .json();
    assert!(added["id"].is_string(), "{added}");
}

/// Whether `text` is a cron result in Hermes' wrapper for the job `name`. The wrapper's
/// `-------------` line under its first two makes them a Markdown heading, which Slack shows bold
/// (`*…*`), as Telegram does.
fn wrapped(text: &str, name: &str) -> bool {
    text.trim_start_matches('*')
        .starts_with(&format!("Cronjob Response: {name}\n"))
        && text.contains("To stop or manage this job")
}

/// The bot's messages in `channel` that hold `text`.
fn holding(slack: &FakeSlack, channel: &str, text: &str) -> Vec<String> {
    slack
        .bot_messages(channel)
        .into_iter()
        .map(|m| m.text)
        .filter(|t| t.contains(text))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn cron_delivers_once_to_a_channel_that_talked_and_to_the_home_channel() {
    let llm = FakeLlm::start(vec![
        Reply::text("the sales report"),
        Reply::text("noted"),
        Reply::text("the sales report"),
        Reply::text("the weather report"),
    ])
    .await;
    let slack = FakeSlack::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    slack_home::configure(
        &home,
        &llm,
        &slack,
        "",
        "SLACK_ALLOWED_USERS=U1\nSLACK_HOME_CHANNEL=C0HOMECHAN\n",
    );
    home.ctl_async(&["status"]).await.ok();
    wait_state(&home, "connected").await;

    // A channel that never talked to the agent is no target (docs/architecture.md).
    add_job(&home, "sales", "Report sales", "slack:C0REPORTS1").await;
    let run = run_now(&home, "sales").await;
    assert_eq!(run["status"], "ok", "{run}");
    let said = run["delivery"].as_str().unwrap_or_default();
    assert!(
        said.starts_with("not delivered: slack:C0REPORTS1 is not a chat hermesd knows"),
        "{run}"
    );
    assert!(slack.bot_messages("C0REPORTS1").is_empty());

    // Once it has, the result goes there, at the top level.
    let bot = slack.first_team().bot_user_id;
    slack.push(&UserMessage::new(
        "C0REPORTS1",
        "U1",
        &format!("<@{bot}> reports go here"),
    ));
    slack
        .wait_bot_message("C0REPORTS1", |t| t == "noted", WAIT)
        .await;
    let run = run_now(&home, "sales").await;
    assert_eq!(run["status"], "ok", "{run}");
    assert_eq!(run["delivery"], "delivered to slack:C0REPORTS1", "{run}");
    let delivered = slack
        .wait_bot_message("C0REPORTS1", |t| t.contains("the sales report"), WAIT)
        .await;
    assert!(wrapped(&delivered.text, "sales"), "{}", delivered.text);
    assert!(delivered.thread_ts.is_none(), "{delivered:?}");

    // The bare target is the home channel; naming it as well still sends one message.
    add_job(&home, "weather", "Report weather", "slack,slack:C0HOMECHAN").await;
    let run = run_now(&home, "weather").await;
    assert_eq!(run["delivery"], "delivered to slack:C0HOMECHAN", "{run}");
    let delivered = slack
        .wait_bot_message("C0HOMECHAN", |t| t.contains("the weather report"), WAIT)
        .await;
    assert!(wrapped(&delivered.text, "weather"), "{}", delivered.text);
    assert!(delivered.thread_ts.is_none(), "{delivered:?}");

    // Every post of the bot came back as an event and was taken (and dropped) by the daemon.
    slack
        .wait_until("the echoes of the bot's posts acked", WAIT, |s| {
            let echoes: Vec<_> = s
                .envelopes()
                .into_iter()
                .filter(|e| e.payload["event"]["bot_id"].is_string())
                .collect();
            (echoes.len() >= 3 && echoes.iter().all(|e| e.acked)).then_some(())
        })
        .await;
    assert_eq!(holding(&slack, "C0REPORTS1", "the sales report").len(), 1);
    assert_eq!(holding(&slack, "C0HOMECHAN", "the weather report").len(), 1);
    assert_eq!(slack.bot_messages("C0HOMECHAN").len(), 1);
    let cron_posts = slack
        .calls_of("chat.postMessage")
        .into_iter()
        .filter(|c| {
            c.params["text"]
                .as_str()
                .is_some_and(|t| t.contains("Cronjob Response"))
        })
        .count();
    assert_eq!(cron_posts, 2, "{}", slack.call_log());
    assert_eq!(
        llm.requests().len(),
        4,
        "one model call a run and one for the channel, none for an echo"
    );
}
