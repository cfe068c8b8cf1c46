//! A test home wired to the fake Discord: a bot token no other test uses (the daemon's lock is
//! machine-wide, per token), the fake's REST base as `platforms.discord.extra.api_base`, a
//! 0.3 s edit interval, a start that waits for the bot to be ready, and a wait on the gateway's state as `hermesctl gateway status --json`
//! reports it.

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::Value;

use crate::{TestHome, fake_discord::FakeDiscord, fake_llm::FakeLlm};

/// A token the fake accepts and no other test of this process uses.
pub fn unique_token(discord: &FakeDiscord) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let pid = std::process::id();
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let token = format!("MTA{pid}x{n:03}.GdTest.discord-{pid}-{n}");
    discord.add_token(&token);
    token
}

/// Point `home` at `llm` and `discord` (with `extra` config merged in), put a fresh token and
/// `env` in its `.env`; returns the token.
pub fn configure(
    home: &TestHome,
    llm: &FakeLlm,
    discord: &FakeDiscord,
    extra: &str,
    env: &str,
) -> String {
    let token = unique_token(discord);
    home.use_fake_model(
        llm,
        &format!(
            "platforms:\n  discord:\n    extra:\n      api_base: {}\n\
             streaming:\n  edit_interval: 0.3\n{extra}",
            discord.api_base()
        ),
    );
    home.write(".env", &format!("DISCORD_BOT_TOKEN={token}\n{env}"));
    token
}

/// [`configure`], then start the daemon and wait until the bot is connected and its commands
/// registered.
pub async fn start(home: &TestHome, llm: &FakeLlm, discord: &FakeDiscord, extra: &str, env: &str) {
    configure(home, llm, discord, extra, env);
    home.ctl_async(&["status"]).await.ok();
    discord.wait_ready(std::time::Duration::from_secs(30)).await;
}

/// The `hermesctl gateway status --json` row of `platform` once it is in `state` (the
/// command's own run time paces the loop).
pub async fn wait_state(home: &TestHome, platform: &str, state: &str) -> Value {
    loop {
        let status = home
            .ctl_async(&["gateway", "status", "--json"])
            .await
            .json();
        let row = status
            .as_array()
            .into_iter()
            .flatten()
            .find(|row| row["platform"] == platform)
            .cloned();
        if let Some(row) = row.filter(|row| row["state"] == state) {
            return row;
        }
        tokio::task::yield_now().await;
    }
}
