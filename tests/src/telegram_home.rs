//! A test home wired to the fake Bot API: a bot token no other test uses (the daemon's lock is
//! machine-wide, per token), the platform's base URL, a 1 s poll and a 0.3 s edit interval, and a
//! wait on the gateway's state as `hermesctl gateway status --json` reports it.

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::Value;

use crate::{TestHome, fake_llm::FakeLlm, fake_telegram::FakeTelegram};

/// A token the fake accepts and no other test of this process uses.
pub fn unique_token(bot: &FakeTelegram) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let pid = std::process::id();
    let token = format!(
        "{pid}{:03}:AAGatewayTest-{pid}",
        NEXT.fetch_add(1, Ordering::SeqCst)
    );
    bot.add_token(&token);
    token
}

/// Point `home` at `llm` and `bot` (with `extra` config merged in), put a fresh token and `env`
/// in its `.env`; returns the token.
pub fn configure(
    home: &TestHome,
    llm: &FakeLlm,
    bot: &FakeTelegram,
    extra: &str,
    env: &str,
) -> String {
    let token = unique_token(bot);
    home.use_fake_model(
        llm,
        &format!(
            "platforms:\n  telegram:\n    extra:\n      base_url: {}\n      poll_timeout: 1\n\
             streaming:\n  edit_interval: 0.3\n{extra}",
            bot.base_url()
        ),
    );
    home.write(".env", &format!("TELEGRAM_BOT_TOKEN={token}\n{env}"));
    token
}

/// `hermesctl gateway status --json` once the first platform is in `state` (the command's own
/// run time paces the loop).
pub async fn wait_state(home: &TestHome, state: &str) -> Value {
    loop {
        let status = home
            .ctl_async(&["gateway", "status", "--json"])
            .await
            .json();
        if status[0]["state"] == state {
            return status;
        }
        tokio::task::yield_now().await;
    }
}
