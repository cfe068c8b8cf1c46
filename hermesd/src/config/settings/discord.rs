//! Discord's connection settings with Hermes' keys: the bot token (`DISCORD_BOT_TOKEN`), whether
//! it runs (`platforms.discord.enabled`) and the REST API's base URL
//! (`platforms.discord.extra.api_base`; the Gateway's websocket URL comes from its
//! `GET /gateway/bot`), how the command menu becomes application commands
//! (`DISCORD_COMMAND_SYNC_POLICY`: `safe` or `bulk` register it, `off` leaves Discord's list
//! alone; hermesd's own `DISCORD_COMMAND_GUILD_ID` / `platforms.discord.extra.command_guild_id`
//! registers them in one guild, where they show at once) and the largest attachment taken
//! (`platforms.discord.extra.max_attachment_bytes`, else `DISCORD_MAX_ATTACHMENT_BYTES`;
//! 32 MiB by default, 0 for no limit but the gateway's own), and Hermes' automatic threads: an
//! answered message in a server channel is answered in a new thread on it unless
//! `DISCORD_AUTO_THREAD` (else config.yaml's `discord.auto_thread`) reads otherwise than `true`,
//! `1` or `yes`, as Hermes reads it (on when neither is set; a blank variable counts as unset),
//! or the channel is one of `DISCORD_NO_THREAD_CHANNELS` (else `discord.no_thread_channels`:
//! ids, names or `#names`). Who may talk and where are the platform's rules
//! (`platform_rules.rs`).

use hermes_proto::env::Env;

use serde_yaml::Value;

use super::read::{Reader, comma_list};

/// Discord's REST API.
pub const DISCORD_API_BASE: &str = "https://discord.com/api/v10";

/// Discord's settings; present only when it runs.
#[derive(Clone, PartialEq)]
pub struct DiscordSettings {
    /// `DISCORD_BOT_TOKEN`; never printed.
    pub token: String,
    /// `platforms.discord.extra.api_base`, without a trailing `/`.
    pub api_base: String,
    /// Whether the command menu is registered as application commands
    /// (`DISCORD_COMMAND_SYNC_POLICY` is not `off`).
    pub sync_commands: bool,
    /// The guild the application commands are registered in; empty: globally.
    pub command_guild: String,
    /// The largest attachment fetched, in bytes (`0`: only the gateway's own cap).
    pub max_attachment_bytes: u64,
    /// Whether an answered message in a server channel is answered in a new thread on it
    /// (`DISCORD_AUTO_THREAD`, else `discord.auto_thread`; default true).
    pub auto_thread: bool,
    /// Channels (ids, names or `#names`) answered in the channel itself
    /// (`DISCORD_NO_THREAD_CHANNELS`, else `discord.no_thread_channels`).
    pub no_thread_channels: Vec<String>,
}

/// Hermes' default cap on an attachment.
pub const DEFAULT_MAX_ATTACHMENT_BYTES: u64 = 32 * 1024 * 1024;

impl std::fmt::Debug for DiscordSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscordSettings")
            .field("token", &"<hidden>")
            .field("api_base", &self.api_base)
            .field("sync_commands", &self.sync_commands)
            .field("command_guild", &self.command_guild)
            .field("max_attachment_bytes", &self.max_attachment_bytes)
            .field("auto_thread", &self.auto_thread)
            .field("no_thread_channels", &self.no_thread_channels)
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
        let policy = env
            .get("DISCORD_COMMAND_SYNC_POLICY")
            .map(|p| p.trim().to_lowercase())
            .unwrap_or_default();
        if !matches!(policy.as_str(), "" | "safe" | "bulk" | "off") {
            r.notice_raw(format!(
                "DISCORD_COMMAND_SYNC_POLICY={policy:?} is not safe, bulk or off; using safe"
            ));
        }
        let mut command_guild = env
            .get("DISCORD_COMMAND_GUILD_ID")
            .map(str::trim)
            .unwrap_or_default()
            .to_string();
        if command_guild.is_empty() {
            command_guild = r.text("platforms.discord.extra.command_guild_id");
        }
        if !command_guild.bytes().all(|b| b.is_ascii_digit()) {
            r.notice_raw(format!(
                "the Discord command guild {command_guild:?} is not a guild id; registering globally"
            ));
            command_guild.clear();
        }
        // As in Hermes, the configuration's `extra.max_attachment_bytes` before the variable.
        let configured = r.whole_opt("platforms.discord.extra.max_attachment_bytes", "32 MiB");
        let from_env = env
            .get("DISCORD_MAX_ATTACHMENT_BYTES")
            .map(str::trim)
            .filter(|raw| !raw.is_empty())
            .map(|raw| {
                raw.parse().unwrap_or_else(|_| {
                    r.notice_raw(format!(
                        "DISCORD_MAX_ATTACHMENT_BYTES={raw:?} is not a number; using 32 MiB"
                    ));
                    DEFAULT_MAX_ATTACHMENT_BYTES
                })
            });
        let max_attachment_bytes = configured
            .or(from_env)
            .unwrap_or(DEFAULT_MAX_ATTACHMENT_BYTES);
        let settings = Self {
            token: token.to_string(),
            api_base: api_base.trim_end_matches('/').to_string(),
            sync_commands: policy != "off",
            command_guild,
            max_attachment_bytes,
            auto_thread: auto_thread(r, env),
            no_thread_channels: no_thread_channels(r, env),
        };
        (Some(settings), false)
    }
}

/// Whether Hermes reads `value` as on: `true`, `1` or `yes`, in any case (not `on`).
fn hermes_on(value: &str) -> bool {
    matches!(value.trim().to_lowercase().as_str(), "true" | "1" | "yes")
}

/// `DISCORD_AUTO_THREAD` (not blank), else `discord.auto_thread`, as Hermes reads them: on for
/// `true`, `1` or `yes`, off for anything else; on when neither is set.
fn auto_thread(r: &mut Reader<'_>, env: &Env) -> bool {
    let key = "discord.auto_thread";
    let words = ["true", "1", "yes", "false", "0", "no"];
    let known = |raw: &str| words.contains(&raw.trim().to_lowercase().as_str());
    if let Some(raw) = env
        .get("DISCORD_AUTO_THREAD")
        .filter(|raw| !raw.trim().is_empty())
    {
        if !known(raw) {
            r.notice_raw(format!(
                "DISCORD_AUTO_THREAD={raw:?} is not true or false; off, as Hermes reads it"
            ));
        }
        return hermes_on(raw);
    }
    let raw = match r.get(key) {
        None => return true,
        Some(Value::Bool(on)) => return *on,
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(other) => {
            r.notice(
                key,
                other,
                "is not true or false",
                &"off, as Hermes reads it",
            );
            return false;
        }
    };
    if !known(&raw) {
        r.notice_raw(format!(
            "{key}: {raw:?} is not true or false; off, as Hermes reads it"
        ));
    }
    hermes_on(&raw)
}

/// `DISCORD_NO_THREAD_CHANNELS` (comma-separated, not blank), else `discord.no_thread_channels`
/// (a list of ids or names, or one comma-separated string).
fn no_thread_channels(r: &mut Reader<'_>, env: &Env) -> Vec<String> {
    let key = "discord.no_thread_channels";
    if let Some(raw) = env
        .get("DISCORD_NO_THREAD_CHANNELS")
        .filter(|raw| !raw.trim().is_empty())
    {
        return comma_list(raw);
    }
    match r.get(key) {
        None => Vec::new(),
        Some(Value::String(s)) => comma_list(s),
        Some(Value::Number(n)) => vec![n.to_string()],
        Some(Value::Sequence(items)) => {
            let mut channels = Vec::new();
            for item in items {
                match item {
                    Value::String(s) if !s.trim().is_empty() => channels.push(s.trim().to_string()),
                    Value::Number(n) => channels.push(n.to_string()),
                    other => r.notice(key, other, "is not a channel", &"the other items"),
                }
            }
            channels
        }
        Some(other) => {
            r.notice(key, other, "is not a list of channels", &"none");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str, vars: &[(&str, &str)]) -> (Option<DiscordSettings>, bool) {
        let root: Value = serde_yaml::from_str(yaml).unwrap();
        let env = Env::from_pairs(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        DiscordSettings::read(&mut Reader::new(&root), &env)
    }

    #[test]
    fn the_token_the_api_base_and_the_command_and_attachment_settings() {
        assert_eq!(read("{}", &[]), (None, false));
        let off = read(
            "platforms:\n  discord:\n    enabled: false",
            &[("DISCORD_BOT_TOKEN", "t")],
        );
        assert_eq!(off, (None, true));
        let (on, _) = read("{}", &[("DISCORD_BOT_TOKEN", " t ")]);
        let on = on.unwrap();
        assert_eq!(
            (on.token.as_str(), on.api_base.as_str()),
            ("t", DISCORD_API_BASE)
        );
        assert!(on.sync_commands && on.command_guild.is_empty());
        assert_eq!(on.max_attachment_bytes, DEFAULT_MAX_ATTACHMENT_BYTES);
        let yaml = "platforms:\n  discord:\n    extra:\n      api_base: http://127.0.0.1:9/api/v10/\n      command_guild_id: '55'\n      max_attachment_bytes: 100";
        let (set, _) = read(
            yaml,
            &[
                ("DISCORD_BOT_TOKEN", "t"),
                ("DISCORD_COMMAND_SYNC_POLICY", "off"),
                ("DISCORD_MAX_ATTACHMENT_BYTES", "7"),
            ],
        );
        let set = set.unwrap();
        assert_eq!(set.api_base, "http://127.0.0.1:9/api/v10");
        assert_eq!(set.command_guild, "55");
        assert!(!set.sync_commands);
        assert_eq!(
            set.max_attachment_bytes, 100,
            "the configuration wins, as in Hermes"
        );
        let (env_only, _) = read(
            "{}",
            &[
                ("DISCORD_BOT_TOKEN", "t"),
                ("DISCORD_MAX_ATTACHMENT_BYTES", "7"),
                ("DISCORD_COMMAND_GUILD_ID", "x1"),
            ],
        );
        let env_only = env_only.unwrap();
        assert_eq!(env_only.max_attachment_bytes, 7);
        assert!(env_only.command_guild.is_empty(), "not a guild id");
    }

    #[test]
    fn auto_thread_and_no_thread_channels_as_hermes_reads_them() {
        let token = ("DISCORD_BOT_TOKEN", "t");
        let get = |yaml: &str, vars: &[(&str, &str)]| {
            let mut all = vec![token];
            all.extend_from_slice(vars);
            read(yaml, &all).0.unwrap()
        };
        let plain = get("{}", &[]);
        assert!(plain.auto_thread, "on by default");
        assert!(plain.no_thread_channels.is_empty());
        assert!(!get("discord:\n  auto_thread: false", &[]).auto_thread);
        assert!(get("discord:\n  auto_thread: 'Yes'", &[]).auto_thread);
        assert!(
            !get("discord:\n  auto_thread: 'on'", &[]).auto_thread,
            "Hermes: not on"
        );
        // The variable wins over config.yaml; a blank one counts as unset.
        let env_wins = get(
            "discord:\n  auto_thread: false",
            &[("DISCORD_AUTO_THREAD", "TRUE")],
        );
        assert!(env_wins.auto_thread);
        assert!(!get("{}", &[("DISCORD_AUTO_THREAD", "0")]).auto_thread);
        assert!(get("{}", &[("DISCORD_AUTO_THREAD", " ")]).auto_thread);
        let listed = get("discord:\n  no_thread_channels: [123, '#lounge', ' ']", &[]);
        assert_eq!(listed.no_thread_channels, ["123", "#lounge"]);
        let from_env = get(
            "discord:\n  no_thread_channels: [123]",
            &[("DISCORD_NO_THREAD_CHANNELS", "9, general,")],
        );
        assert_eq!(from_env.no_thread_channels, ["9", "general"]);
        let one = get("discord:\n  no_thread_channels: '5,6'", &[]);
        assert_eq!(one.no_thread_channels, ["5", "6"]);
    }
}
