//! A test home wired to the fake Slack: its Web API as `platforms.slack.extra.api_base`, the
//! fake's bot token and its app token (unique to the fake, since the daemon's lock on it is
//! machine-wide) for Socket Mode, a 0.5 s ping (a silent socket is noticed in 1.5 s) and a
//! 0.3 s edit interval; and a wait on Slack's row of `hermesctl gateway status --json`.

use serde_json::Value;

use crate::{TestHome, fake_llm::FakeLlm, fake_slack::FakeSlack};

/// Point `home` at `llm` and `slack` in Socket Mode (with `extra` config merged in), with the
/// first workspace's bot token and `env` in its `.env`.
pub fn configure(home: &TestHome, llm: &FakeLlm, slack: &FakeSlack, extra: &str, env: &str) {
    let env = format!("SLACK_APP_TOKEN={}\n{env}", slack.app_token());
    configure_events(home, llm, slack, extra, &env);
}

/// [`configure`] without the app token: the Events API, whose settings `env` gives.
pub fn configure_events(home: &TestHome, llm: &FakeLlm, slack: &FakeSlack, extra: &str, env: &str) {
    home.use_fake_model(
        llm,
        &format!(
            "platforms:\n  slack:\n    extra:\n      api_base: {}\n      ping_interval: 0.5\n\
             streaming:\n  edit_interval: 0.3\n{extra}",
            slack.api_base()
        ),
    );
    home.write(
        ".env",
        &format!("SLACK_BOT_TOKEN={}\n{env}", slack.first_team().bot_token),
    );
}

/// Slack's row of `hermesctl gateway status --json` once it is in `state` (the command's own
/// run time paces the loop).
pub async fn wait_state(home: &TestHome, state: &str) -> Value {
    loop {
        let status = home
            .ctl_async(&["gateway", "status", "--json"])
            .await
            .json();
        let row = status
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["platform"] == "slack").cloned());
        if let Some(row) = row
            && row["state"] == state
        {
            return row;
        }
        tokio::task::yield_now().await;
    }
}
