//! Slack's connection settings with Hermes' keys: the bot token (`SLACK_BOT_TOKEN`), the app
//! token for Socket Mode (`SLACK_APP_TOKEN`), whether it runs (`platforms.slack.enabled`) and
//! the Web API's base URL (`platforms.slack.extra.api_base`; Socket Mode's websocket URL comes
//! from its `apps.connections.open`). Who may talk and where are the platform's rules
//! (`platform_rules.rs`).

use hermes_proto::env::Env;

use super::read::Reader;

/// Slack's Web API.
pub const SLACK_API_BASE: &str = "https://slack.com/api";

/// Slack's settings; present only when it runs.
#[derive(Clone, PartialEq)]
pub struct SlackSettings {
    /// `SLACK_BOT_TOKEN`; never printed.
    pub bot_token: String,
    /// `SLACK_APP_TOKEN`; never printed.
    pub app_token: String,
    /// `platforms.slack.extra.api_base`, without a trailing `/`.
    pub api_base: String,
}

impl std::fmt::Debug for SlackSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlackSettings")
            .field("bot_token", &"<hidden>")
            .field("app_token", &"<hidden>")
            .field("api_base", &self.api_base)
            .finish_non_exhaustive()
    }
}

impl SlackSettings {
    /// The settings when a bot token is set (`None`: Slack does not run); the flag says a token
    /// is set but the platform is switched off, so it can show as `disabled`.
    pub fn read(r: &mut Reader<'_>, env: &Env) -> (Option<Self>, bool) {
        let token = env.get("SLACK_BOT_TOKEN").unwrap_or_default().trim();
        let enabled = r.flag("platforms.slack.enabled", true);
        if token.is_empty() {
            return (None, false);
        }
        if !enabled {
            return (None, true);
        }
        let mut api_base = r.text("platforms.slack.extra.api_base");
        if api_base.is_empty() {
            api_base = SLACK_API_BASE.to_string();
        }
        let settings = Self {
            bot_token: token.to_string(),
            app_token: env
                .get("SLACK_APP_TOKEN")
                .unwrap_or_default()
                .trim()
                .to_string(),
            api_base: api_base.trim_end_matches('/').to_string(),
        };
        (Some(settings), false)
    }
}
