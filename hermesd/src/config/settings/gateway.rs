//! The gateway's settings with Hermes' keys: which chat platforms run and how they connect
//! (Telegram here: `TELEGRAM_BOT_TOKEN`, `platforms.telegram.enabled`, its Bot API base URL,
//! poll timeout and webhook; Discord in `discord.rs`, Slack in `slack.rs`), each platform's
//! rules (who may talk, group rules, strangers, home channel: `platform_rules.rs`), how chats map
//! to sessions (`group_sessions_per_user`, `thread_sessions_per_user`) and how often a streamed
//! answer is edited (`streaming.edit_interval`), the prompt's privacy (`privacy.redact_pii`) and
//! when a chat's conversation starts over (`session_reset`, in `session_reset.rs`).

use std::time::Duration;

use hermes_proto::env::Env;

use super::{
    DiscordSettings, PlatformRules, SlackSettings, group_rules::CHAT_PLATFORMS, read::Reader,
};

/// Telegram's connection settings; present only when it runs.
#[derive(Clone, PartialEq)]
pub struct TelegramSettings {
    /// `TELEGRAM_BOT_TOKEN` (environment or `.env`); never printed.
    pub token: String,
    /// `platforms.telegram.extra.base_url`; requests go to `{base_url}{token}/{method}`.
    pub base_url: String,
    /// The file download base, `{file_base_url}{token}/{file_path}` (derived from `base_url`
    /// unless `platforms.telegram.extra.base_file_url` is set).
    pub file_base_url: String,
    /// `platforms.telegram.extra.poll_timeout` seconds of a long poll (1 to 50, default 30).
    pub poll_timeout: Duration,
    /// `TELEGRAM_WEBHOOK_URL`: webhook mode instead of polling.
    pub webhook_url: Option<String>,
    /// `TELEGRAM_WEBHOOK_SECRET`: the secret-token header every webhook call must carry.
    pub webhook_secret: String,
    /// `TELEGRAM_WEBHOOK_PORT` (default 8443), bound on `TELEGRAM_WEBHOOK_HOST` (default
    /// 0.0.0.0).
    pub webhook_listen: String,
}

impl std::fmt::Debug for TelegramSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelegramSettings")
            .field("token", &"<hidden>")
            .field("base_url", &self.base_url)
            .field("poll_timeout", &self.poll_timeout)
            .field("webhook_url", &self.webhook_url)
            .finish_non_exhaustive()
    }
}

/// Who may talk to the agent through a platform, besides paired users.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessSettings {
    /// `{PLATFORM}_ALLOWED_USERS` and the platform's `allow_from`.
    pub allowed: Vec<String>,
    /// `GATEWAY_ALLOWED_USERS`.
    pub gateway_allowed: Vec<String>,
    /// `{PLATFORM}_GROUP_ALLOWED_USERS`: users allowed in groups (not in direct messages).
    pub group_users: Vec<String>,
    /// `{PLATFORM}_GROUP_ALLOWED_CHATS` (and chat ids, starting with `-`, that Hermes' older
    /// releases took in the user list; on Discord and Slack the allowed channels when no user
    /// list is set): groups where everyone may talk; `*` is every group.
    pub group_chats: Vec<String>,
    /// `{PLATFORM}_ALLOW_ALL_USERS`.
    pub allow_all: bool,
    /// `GATEWAY_ALLOW_ALL_USERS` (only when no allowlist is set).
    pub gateway_allow_all: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GatewaySection {
    /// `None`: Telegram does not run (no token, or `platforms.telegram.enabled: false`).
    pub telegram: Option<TelegramSettings>,
    /// `None`: Discord does not run.
    pub discord: Option<DiscordSettings>,
    /// `None`: Slack does not run.
    pub slack: Option<SlackSettings>,
    /// The platforms whose token is set but that were switched off (shown as `disabled`).
    pub disabled: Vec<&'static str>,
    /// Each chat platform's rules, running or not, in the order of `CHAT_PLATFORMS`.
    pub rules: Vec<(&'static str, PlatformRules)>,
    /// `group_sessions_per_user` (default true).
    pub group_sessions_per_user: bool,
    /// `thread_sessions_per_user` (default false).
    pub thread_sessions_per_user: bool,
    /// `streaming.edit_interval` seconds between edits of a streamed answer (0.3 to 10,
    /// default 1; Hermes' 0.8 is under Telegram's pace for one chat).
    pub edit_interval: Duration,
    /// `privacy.redact_pii` (default false): user and chat ids in the prompt's session context
    /// are hashed, on the platforms Hermes does it for.
    pub redact_pii: bool,
    /// `session_reset`: when a chat's conversation starts over by itself.
    pub session_reset: super::session_reset::SessionResetSection,
    /// The OpenAI-compatible API server (`api_server.rs`); `None` when off.
    pub api_server: Option<super::api_server::ApiServerSettings>,
    /// The webhook platform (`webhook.rs`); `None` when off.
    pub webhook: Option<super::webhook::WebhookSettings>,
}

impl Default for GatewaySection {
    fn default() -> Self {
        Self {
            telegram: None,
            discord: None,
            slack: None,
            disabled: Vec::new(),
            rules: CHAT_PLATFORMS
                .iter()
                .map(|keys| (keys.name, PlatformRules::defaults(keys)))
                .collect(),
            group_sessions_per_user: true,
            thread_sessions_per_user: false,
            edit_interval: Duration::from_secs(1),
            redact_pii: false,
            session_reset: super::session_reset::SessionResetSection::default(),
            api_server: None,
            webhook: None,
        }
    }
}

/// The Bot API's address.
pub const TELEGRAM_BASE_URL: &str = "https://api.telegram.org/bot";

/// The rules of a platform nothing configures.
static NO_RULES: std::sync::LazyLock<PlatformRules> =
    std::sync::LazyLock::new(PlatformRules::default);

impl GatewaySection {
    /// `platform`'s rules (a platform hermesd does not know has none: nobody may talk).
    pub fn rules(&self, platform: &str) -> &PlatformRules {
        self.rules
            .iter()
            .find(|(name, _)| *name == platform)
            .map_or(&*NO_RULES, |(_, rules)| rules)
    }

    /// The chat platforms that run, in the order their rows are shown.
    pub fn running(&self) -> Vec<&'static str> {
        let mut running = Vec::new();
        if self.telegram.is_some() {
            running.push("telegram");
        }
        if self.discord.is_some() {
            running.push("discord");
        }
        if self.slack.is_some() {
            running.push("slack");
        }
        running
    }

    pub fn read(r: &mut Reader<'_>, env: &Env) -> Self {
        let d = Self::default();
        let token = env.get("TELEGRAM_BOT_TOKEN").unwrap_or_default().trim();
        let enabled = r.flag("platforms.telegram.enabled", true);
        let telegram = (!token.is_empty() && enabled).then(|| telegram(r, env, token));
        let mut disabled = Vec::new();
        if !token.is_empty() && !enabled {
            disabled.push("telegram");
        }
        let (discord, discord_off) = DiscordSettings::read(r, env);
        if discord_off {
            disabled.push("discord");
        }
        let (slack, slack_off) = SlackSettings::read(r, env);
        if slack_off {
            disabled.push("slack");
        }
        let rules = CHAT_PLATFORMS
            .iter()
            .map(|keys| (keys.name, PlatformRules::read(r, env, keys)))
            .collect();
        let interval = r.seconds("streaming.edit_interval", 1.0).clamp(0.3, 10.0);
        Self {
            telegram,
            discord,
            slack,
            disabled,
            rules,
            group_sessions_per_user: r.flag("group_sessions_per_user", d.group_sessions_per_user),
            thread_sessions_per_user: r
                .flag("thread_sessions_per_user", d.thread_sessions_per_user),
            edit_interval: Duration::from_secs_f64(interval),
            redact_pii: r.flag("privacy.redact_pii", d.redact_pii),
            session_reset: super::session_reset::SessionResetSection::read(r, env),
            api_server: super::api_server::ApiServerSettings::read(r, env),
            webhook: super::webhook::WebhookSettings::read(r, env),
        }
    }
}

fn telegram(r: &mut Reader<'_>, env: &Env, token: &str) -> TelegramSettings {
    let mut base_url = r.text("platforms.telegram.extra.base_url");
    if base_url.is_empty() {
        base_url = TELEGRAM_BASE_URL.to_string();
    }
    let mut file_base_url = r.text("platforms.telegram.extra.base_file_url");
    if file_base_url.is_empty() {
        // https://api.telegram.org/bot → https://api.telegram.org/file/bot
        file_base_url = match base_url.rsplit_once('/') {
            Some((host, last)) => format!("{host}/file/{last}"),
            None => format!("{base_url}/file/bot"),
        };
    }
    let poll = r.whole("platforms.telegram.extra.poll_timeout", 30, 1, 50);
    let port = env
        .get("TELEGRAM_WEBHOOK_PORT")
        .and_then(|p| p.trim().parse::<u16>().ok())
        .unwrap_or(8443);
    let host = env
        .get("TELEGRAM_WEBHOOK_HOST")
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .unwrap_or("0.0.0.0");
    TelegramSettings {
        token: token.to_string(),
        base_url,
        file_base_url,
        poll_timeout: Duration::from_secs(poll),
        webhook_url: env
            .get("TELEGRAM_WEBHOOK_URL")
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_string),
        webhook_secret: env
            .get("TELEGRAM_WEBHOOK_SECRET")
            .unwrap_or_default()
            .trim()
            .to_string(),
        webhook_listen: format!("{host}:{port}"),
    }
}
