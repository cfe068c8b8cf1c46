//! Slack end to end: the real daemon, the fake model server and the fake Slack in Socket Mode.
//! An allowed user's DM gets one streamed answer, edited, in the thread the DM opened; a
//! stranger gets a pairing code in a DM and nothing in a channel; in a channel only a mention
//! reaches the model, its answer goes in the message's thread and a reply in that thread needs
//! no mention; an approval is answered by a Block Kit button; `/hermes <sub>` runs the command;
//! `send_message` reaches the home channel and a thread.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_slack::{FakeSlack, UserMessage},
    home::StopOnDrop,
    slack_home::{self, wait_state},
};

const WAIT: Duration = Duration::from_secs(30);

/// Waits until every envelope of the message `ts` was acked (the daemon stored it).
async fn wait_taken(slack: &FakeSlack, ts: &str) {
    slack
        .wait_until("the message's envelopes acked", WAIT, |s| {
            let mine: Vec<_> = s
                .envelopes()
                .into_iter()
                .filter(|e| e.payload["event"]["ts"] == ts)
                .collect();
            (!mine.is_empty() && mine.iter().all(|e| e.acked)).then_some(())
        })
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_allowed_user_gets_one_streamed_answer_in_the_thread_of_their_dm() {
    let llm = FakeLlm::start(vec![
        Reply::text_chunks(&["Hello", " from", " **Hermes**"]).with_delay_ms(150),
    ])
    .await;
    let slack = FakeSlack::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    slack_home::configure(&home, &llm, &slack, "", "SLACK_ALLOWED_USERS=U1\n");
    slack.add_user("U1", "Ann");
    home.ctl_async(&["status"]).await.ok();
    let row = wait_state(&home, "connected").await;
    assert_eq!(row["platform"], "slack");

    let pushed = slack.push(&UserMessage::new("D1", "U1", "hi there"));
    let answer = slack
        .wait_bot_message("D1", |t| t == "Hello from *Hermes*", WAIT)
        .await;
    assert_eq!(slack.bot_messages("D1").len(), 1, "one message, edited");
    assert!(answer.updates >= 1, "{answer:?}");
    assert_eq!(
        answer.thread_ts.as_deref(),
        Some(pushed.ts.as_str()),
        "a top-level DM is answered in its own thread, as Hermes does"
    );
    assert_eq!(llm.requests().len(), 1);
    assert_eq!(llm.user_texts(0).last().unwrap(), "hi there");
    wait_taken(&slack, &pushed.ts).await;
    // The bot's own post came back as an event and was dropped: still one request.
    slack
        .wait_until("the echo of the bot's post acked", WAIT, |s| {
            s.envelopes()
                .iter()
                .any(|e| e.payload["event"]["bot_id"].is_string() && e.acked)
                .then_some(())
        })
        .await;
    assert_eq!(llm.requests().len(), 1);

    let sessions = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    assert!(
        sessions
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["source"] == "slack"),
        "{sessions}"
    );
    let log = std::fs::read_to_string(home.path().join("logs/hermesd.log")).unwrap_or_default();
    assert!(
        !log.contains(&slack.first_team().bot_token),
        "the bot token leaked into the log"
    );
    assert!(
        !log.contains(&slack.app_token()),
        "the app token leaked into the log"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stranger_gets_a_pairing_code_in_a_dm_and_nothing_in_a_channel() {
    let llm = FakeLlm::start(vec![Reply::text("Welcome")]).await;
    let slack = FakeSlack::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    slack_home::configure(&home, &llm, &slack, "", "");
    home.ctl_async(&["status"]).await.ok();

    slack.push(&UserMessage::new("D9", "U9", "let me in"));
    let reply = slack
        .wait_bot_message("D9", |t| t.contains("pairing code"), WAIT)
        .await;
    assert!(
        reply.text.contains('`'),
        "the code is shown as code: {}",
        reply.text
    );
    let bot = slack.first_team().bot_user_id;
    let in_channel = slack.push(&UserMessage::new(
        "C5",
        "U8",
        &format!("<@{bot}> hello bot"),
    ));
    wait_taken(&slack, &in_channel.ts).await;
    assert!(
        slack.bot_messages("C5").is_empty(),
        "a stranger in a channel is ignored"
    );
    assert!(
        llm.requests().is_empty(),
        "the model got a stranger's message"
    );
    let pending = home.ctl_async(&["pairing", "list", "--json"]).await.json();
    assert_eq!(pending.as_array().unwrap().len(), 1, "{pending}");
    assert_eq!(pending[0]["platform"], "slack", "{pending}");
}

#[tokio::test(flavor = "multi_thread")]
async fn in_a_channel_a_mention_opens_a_thread_whose_replies_need_none() {
    let llm = FakeLlm::start(vec![
        Reply::text("first answer"),
        Reply::text("second answer"),
    ])
    .await;
    let slack = FakeSlack::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    slack_home::configure(&home, &llm, &slack, "", "SLACK_ALLOWED_USERS=U1,U2\n");
    home.ctl_async(&["status"]).await.ok();
    let bot = slack.first_team().bot_user_id;

    let chatter = slack.push(&UserMessage::new("C1", "U1", "just chatting"));
    wait_taken(&slack, &chatter.ts).await;
    assert!(
        llm.requests().is_empty(),
        "no mention, no answer (Slack requires one by default)"
    );

    let asked = slack.push(&UserMessage::new(
        "C1",
        "U1",
        &format!("<@{bot}> what now?"),
    ));
    let first = slack
        .wait_bot_message("C1", |t| t == "first answer", WAIT)
        .await;
    assert_eq!(
        first.thread_ts.as_deref(),
        Some(asked.ts.as_str()),
        "answered in a thread"
    );
    let asked_text = llm.user_texts(0).last().unwrap().clone();
    assert!(
        asked_text.ends_with("what now?") && !asked_text.contains("<@"),
        "the mention is taken out: {asked_text}"
    );
    assert_eq!(
        llm.requests().len(),
        1,
        "message and app_mention are one update"
    );

    // Another user's reply in that thread needs no mention, and is answered in the thread.
    let other = slack.push(&UserMessage::new("C1", "U2", "and then?").in_thread(&asked.ts));
    let second = slack
        .wait_bot_message("C1", |t| t == "second answer", WAIT)
        .await;
    assert_eq!(
        second.thread_ts.as_deref(),
        Some(asked.ts.as_str()),
        "the reply stays in the thread"
    );
    let texts = llm.user_texts(1);
    assert!(
        texts.iter().any(|t| t.contains("what now?")),
        "one conversation per thread: {texts:?}"
    );
    assert!(texts.last().unwrap().contains("and then?"), "{texts:?}");
    wait_taken(&slack, &other.ts).await;

    // A reply in a thread the bot is not in still needs a mention.
    let elsewhere = slack.push(&UserMessage::new("C1", "U1", "unrelated").in_thread(&chatter.ts));
    wait_taken(&slack, &elsewhere.ts).await;
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_is_answered_by_a_block_kit_button() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call("terminal", r#"{"command": "rm -rf victim"}"#),
        Reply::text("removed it"),
    ])
    .await;
    let slack = FakeSlack::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    slack_home::configure(&home, &llm, &slack, "", "SLACK_ALLOWED_USERS=U1\n");
    std::fs::create_dir_all(home.user_home().join("victim")).unwrap();
    home.ctl_async(&["status"]).await.ok();

    let asked = slack.push(&UserMessage::new("D1", "U1", "clean up"));
    let question = slack
        .wait_bot_message("D1", |t| t.contains("requires approval"), WAIT)
        .await;
    assert_eq!(question.thread_ts.as_deref(), Some(asked.ts.as_str()));
    let buttons = question.blocks[1]["elements"].as_array().unwrap().clone();
    assert_eq!(buttons.len(), 4, "{}", question.blocks);
    let once = buttons
        .iter()
        .find(|b| b["value"].as_str().unwrap().ends_with(":once"))
        .unwrap();
    let press = slack.press(
        "D1",
        &question.ts,
        "U1",
        once["action_id"].as_str().unwrap(),
        once["value"].as_str().unwrap(),
    );
    slack
        .wait_bot_message("D1", |t| t == "removed it", WAIT)
        .await;
    assert!(
        !home.user_home().join("victim").exists(),
        "approved, so it ran"
    );
    slack.wait_acked(&press, WAIT).await;
    slack
        .wait_until(
            "the question edited to its verdict, without buttons",
            WAIT,
            |s| {
                s.bot_messages("D1")
                    .into_iter()
                    .find(|m| m.ts == question.ts && m.text.contains("Approved"))
                    .filter(|m| m.blocks.as_array().is_some_and(Vec::is_empty))
            },
        )
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn hermes_subcommands_run_as_commands() {
    let llm = FakeLlm::start(vec![]).await;
    let slack = FakeSlack::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    slack_home::configure(&home, &llm, &slack, "", "SLACK_ALLOWED_USERS=U1\n");
    home.ctl_async(&["status"]).await.ok();

    let envelope = slack.slash("D1", "U1", "/hermes", "help");
    let help = slack
        .wait_bot_message(
            "D1",
            |t| t.contains("/retry") && t.contains("/approve"),
            WAIT,
        )
        .await;
    assert!(
        help.thread_ts.is_none(),
        "a command's answer is not in a thread"
    );
    let acked = slack.wait_acked(&envelope, WAIT).await;
    assert_eq!(acked.ack_payload.unwrap()["response_type"], "ephemeral");
    assert!(llm.requests().is_empty(), "a command is not a question");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agent_sends_to_the_home_channel_and_into_a_thread() {
    // Slack's ids as Hermes reads them (a letter and at least 8 capitals or digits).
    // The fake's first message is at ts 1700000000.000001: the asking message below.
    let llm = FakeLlm::start(vec![
        Reply::tool_call(
            "send_message",
            r#"{"target": "slack", "message": "to home"}"#,
        ),
        Reply::tool_call(
            "send_message",
            r#"{"target": "slack:C0ASKCHAN1:1700000000.000001", "message": "into the thread"}"#,
        ),
        Reply::text("all sent"),
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
    let bot = slack.first_team().bot_user_id;
    let asked = slack.push(&UserMessage::new(
        "C0ASKCHAN1",
        "U1",
        &format!("<@{bot}> tell them"),
    ));
    assert_eq!(asked.ts, "1700000000.000001");
    let homed = slack
        .wait_bot_message("C0HOMECHAN", |t| t == "to home", WAIT)
        .await;
    assert!(homed.thread_ts.is_none());
    let threaded = slack
        .wait_bot_message("C0ASKCHAN1", |t| t == "into the thread", WAIT)
        .await;
    assert_eq!(threaded.thread_ts.as_deref(), Some(asked.ts.as_str()));
    let done = slack
        .wait_bot_message("C0ASKCHAN1", |t| t == "all sent", WAIT)
        .await;
    assert_eq!(done.thread_ts.as_deref(), Some(asked.ts.as_str()));
}
