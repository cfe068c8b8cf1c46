//! Discord's connection settings with Hermes' keys: the bot token (`DISCORD_BOT_TOKEN`), whether
//! it runs (`platforms.discord.enabled`) and the REST API's base URL
//! (`platforms.discord.extra.api_base`; the Gateway's websocket URL comes from its
//! `GET /gateway/bot`). Who may talk and where are the platform's rules (`platform_rules.rs`).

use hermes_proto::env::Env;

use super::read::Reader;

/// Discord's REST API.
pub const DISCORD_API_BASE: &str = "https://discord.com/api/v10";

/// Discord's settings; present only when it runs.
#[derive(Clone, PartialEq)]
pub struct DiscordSettings {
    /// `DISCORD_BOT_TOKEN`; never printed.
    pub token: String,
    /// `platforms.discord.extra.api_base`, without a trailing `/`.
    pub api_base: String,
}

impl std::fmt::Debug for DiscordSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscordSettings")
            .field("token", &"<hidden>")
            .field("api_base", &self.api_base)
            .finish_non_exhaustive()
    }
}

impl DiscordSettings {
    /// The settings when a token is set (`None`: Discord does not run); the token is returned
    /// also when the platform is switched off, so it can show as `disabled`.
    pub fn read(r: &mut Reader<'_>, env: &Env) -> (Option<Self>, bool) {
        let token = env.get("DISCORD_BOT_TOKEN").unwrap_or_default().trim();
        let enabled = r.flag("platforms.discord.enabled", true);
        if token.is_empty() {
            return (None, false);
        }
        if !enabled {
            return (None, true);
        }
        let mut api_base = r.text("platforms.discord.extra.api_base");
        if api_base.is_empty() {
            api_base = DISCORD_API_BASE.to_string();
        }
        let settings = Self {
            token: token.to_string(),
            api_base: api_base.trim_end_matches('/').to_string(),
        };
        (Some(settings), false)
    }
}
