//! Slack with several workspaces and files, end to end: with two bot tokens (one app), a
//! message from the second workspace is answered with that workspace's token; a file sent to
//! the bot is downloaded with the bot token and named to the agent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_slack::{FakeSlack, UserMessage},
    home::StopOnDrop,
    slack_home,
};

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread")]
async fn each_workspace_is_answered_with_its_own_token() {
    let llm = FakeLlm::start(vec![
        Reply::text("hello first"),
        Reply::text("hello second"),
    ])
    .await;
    let slack = FakeSlack::start().await;
    let second = slack.add_team("T0002", "secondworkspace");
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    slack_home::configure(&home, &llm, &slack, "", "SLACK_ALLOWED_USERS=U1,U2\n");
    // Both tokens, comma-separated, as Hermes takes them.
    let first = slack.first_team();
    home.write(
        ".env",
        &format!(
            "SLACK_BOT_TOKEN={},{}\nSLACK_APP_TOKEN={}\nSLACK_ALLOWED_USERS=U1,U2\n",
            first.bot_token,
            second.bot_token,
            slack.app_token()
        ),
    );
    home.ctl_async(&["status"]).await.ok();

    slack.push(&UserMessage::new("D1", "U1", "hi from one"));
    slack
        .wait_bot_message("D1", |t| t == "hello first", WAIT)
        .await;
    slack.push(&UserMessage::new("D2", "U2", "hi from two").in_team("T0002"));
    slack
        .wait_bot_message("D2", |t| t == "hello second", WAIT)
        .await;
    let posts = slack.calls_of("chat.postMessage");
    let token_for = |channel: &str| {
        posts
            .iter()
            .find(|c| c.params["channel"] == channel)
            .map(|c| c.token.clone())
            .unwrap()
    };
    assert_eq!(token_for("D1"), first.bot_token);
    assert_eq!(
        token_for("D2"),
        second.bot_token,
        "the second workspace's token"
    );
    assert_eq!(slack.calls_of("auth.test").len(), 2, "each token checked");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_sent_to_the_bot_is_fetched_with_the_bot_token_and_named_to_the_agent() {
    let llm = FakeLlm::start(vec![Reply::text("got it")]).await;
    let slack = FakeSlack::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    slack_home::configure(&home, &llm, &slack, "", "SLACK_ALLOWED_USERS=U1\n");
    home.ctl_async(&["status"]).await.ok();

    slack.push(&UserMessage::new("D1", "U1", "read this").with_file(
        "notes.txt",
        "text/plain",
        b"the secret word is pineapple",
    ));
    slack.wait_bot_message("D1", |t| t == "got it", WAIT).await;
    let body = llm.requests()[0].body["messages"].to_string();
    assert!(
        body.contains("notes.txt"),
        "the agent is told of the file: {body}"
    );
    let saved = walk(&home.path().join("..")).into_iter().any(|path| {
        path.file_name()
            .is_some_and(|n| n.to_string_lossy().contains("notes"))
            && std::fs::read_to_string(&path).is_ok_and(|t| t.contains("pineapple"))
    });
    assert!(
        saved,
        "the file was downloaded (the fake answers a page without the token)"
    );
}

/// Every file below `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}
