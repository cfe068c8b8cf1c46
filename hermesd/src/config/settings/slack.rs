//! Slack's connection settings with Hermes' keys: the bot tokens (`SLACK_BOT_TOKEN`, several
//! comma-separated for several workspaces, as Hermes takes them; the first is the primary), the
//! app token for Socket Mode (`SLACK_APP_TOKEN`), whether it runs (`platforms.slack.enabled`),
//! the Web API's base URL (`platforms.slack.extra.api_base`; Socket Mode's websocket URL comes
//! from its `apps.connections.open`), and where answers go (`platforms.slack.extra.
//! reply_in_thread`, `dm_top_level_threads_as_sessions`, both on as in Hermes). Without an app
//! token, the Events API over HTTP: `SLACK_SIGNING_SECRET` checks each request, which is
//! received on `SLACK_EVENTS_HOST`:`SLACK_EVENTS_PORT` (default 0.0.0.0:3000, Bolt's).
//! `platforms.slack.extra.ping_interval` paces Socket Mode's pings (a connection silent for
//! three of them is made again). Who may talk and where are the platform's rules
//! (`platform_rules.rs`).

use std::time::Duration;

use hermes_proto::env::Env;

use super::read::Reader;

/// Slack's Web API.
pub const SLACK_API_BASE: &str = "https://slack.com/api";

/// Slack's settings; present only when it runs.
#[derive(Clone, PartialEq)]
pub struct SlackSettings {
    /// `SLACK_BOT_TOKEN`'s tokens, one per workspace; never printed.
    pub bot_tokens: Vec<String>,
    /// `SLACK_APP_TOKEN`; never printed. Empty: the Events API.
    pub app_token: String,
    /// `platforms.slack.extra.api_base`, without a trailing `/`.
    pub api_base: String,
    /// `SLACK_SIGNING_SECRET`, for the Events API; never printed.
    pub signing_secret: String,
    /// `SLACK_EVENTS_HOST`:`SLACK_EVENTS_PORT`, where the Events API is received.
    pub events_listen: String,
    /// `platforms.slack.extra.reply_in_thread` (default true): a top-level channel message is
    /// answered in a thread of its own, which is its conversation.
    pub reply_in_thread: bool,
    /// `platforms.slack.extra.dm_top_level_threads_as_sessions` (default true): the same for
    /// a top-level direct message.
    pub dm_threads: bool,
    /// `platforms.slack.extra.ping_interval` (0.2 to 60 s, default 10).
    pub ping_interval: Duration,
    /// `platforms.slack.extra.pace_calls` (default true): pace Web API calls by Slack's tiers
    /// before Slack answers 429 (off for a Slack-compatible server with limits of its own).
    pub pace_calls: bool,
}

impl std::fmt::Debug for SlackSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlackSettings")
            .field("workspaces", &self.bot_tokens.len())
            .field("socket_mode", &!self.app_token.is_empty())
            .field("api_base", &self.api_base)
            .field("events_listen", &self.events_listen)
            .field("reply_in_thread", &self.reply_in_thread)
            .field("dm_threads", &self.dm_threads)
            .finish_non_exhaustive()
    }
}

impl SlackSettings {
    /// The settings when a bot token is set (`None`: Slack does not run); the flag says a token
    /// is set but the platform is switched off, so it can show as `disabled`.
    pub fn read(r: &mut Reader<'_>, env: &Env) -> (Option<Self>, bool) {
        let raw = env.get("SLACK_BOT_TOKEN").unwrap_or_default();
        let mut bot_tokens: Vec<String> = Vec::new();
        for token in raw.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            if !bot_tokens.iter().any(|t| t == token) {
                bot_tokens.push(token.to_string());
            }
        }
        let enabled = r.flag("platforms.slack.enabled", true);
        if bot_tokens.is_empty() {
            return (None, false);
        }
        if !enabled {
            return (None, true);
        }
        let mut api_base = r.text("platforms.slack.extra.api_base");
        if api_base.is_empty() {
            api_base = SLACK_API_BASE.to_string();
        }
        let var = |name: &str| env.get(name).unwrap_or_default().trim().to_string();
        let host = match var("SLACK_EVENTS_HOST") {
            host if host.is_empty() => "0.0.0.0".to_string(),
            host => host,
        };
        let port = match var("SLACK_EVENTS_PORT") {
            port if port.is_empty() => "3000".to_string(),
            port => port,
        };
        let ping = r
            .seconds("platforms.slack.extra.ping_interval", 10.0)
            .clamp(0.2, 60.0);
        let settings = Self {
            bot_tokens,
            app_token: var("SLACK_APP_TOKEN"),
            api_base: api_base.trim_end_matches('/').to_string(),
            signing_secret: var("SLACK_SIGNING_SECRET"),
            events_listen: if host.contains(':') && !host.starts_with('[') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            },
            reply_in_thread: r.flag("platforms.slack.extra.reply_in_thread", true),
            dm_threads: r.flag(
                "platforms.slack.extra.dm_top_level_threads_as_sessions",
                true,
            ),
            ping_interval: Duration::from_secs_f64(ping),
            pace_calls: r.flag("platforms.slack.extra.pace_calls", true),
        };
        (Some(settings), false)
    }

    /// The primary workspace's bot token (the first).
    pub fn primary_token(&self) -> &str {
        self.bot_tokens
            .first()
            .map(String::as_str)
            .unwrap_or_default()
    }
}
