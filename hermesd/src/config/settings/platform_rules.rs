//! One chat platform's rules, read the same way for every platform from Hermes' keys with the
//! platform's prefix: who may talk (`<PLATFORM>_ALLOWED_USERS`, `<platform>.allow_from`,
//! `GATEWAY_ALLOWED_USERS`, `<PLATFORM>_GROUP_ALLOWED_USERS` / `_CHATS`, the allow-all
//! switches), when a group message is for the agent and what a stranger gets (`group_rules.rs`),
//! and the home channel (`<PLATFORM>_HOME_CHANNEL`, with `_THREAD_ID` and `_NAME`).
//!
//! On the platforms that say `channels` (Discord, Slack), `<PLATFORM>_ALLOWED_CHANNELS` is where
//! the agent listens; as in Hermes, when no user allowlist is set it also lets everyone in those
//! channels talk (never in direct messages), and when one is set it opens nothing.

use hermes_proto::env::Env;

use super::{
    AccessSettings, GroupRules, StrangerDm,
    group_rules::{PlatformKeys, stranger_dm},
    read::{Reader, comma_list, truthy},
};

/// A platform's home channel from its `*_HOME_CHANNEL` variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HomeChannel {
    pub chat_id: String,
    /// Empty: the chat itself.
    pub thread_id: String,
    pub name: String,
}

/// Who may talk through a platform, when its group messages are for the agent, what a
/// stranger gets, and its home channel.
#[derive(Debug, Clone, PartialEq)]
pub struct PlatformRules {
    pub access: AccessSettings,
    pub groups: GroupRules,
    pub strangers: StrangerDm,
    pub home_channel: Option<HomeChannel>,
}

impl Default for PlatformRules {
    fn default() -> Self {
        Self {
            access: AccessSettings::default(),
            groups: GroupRules::default(),
            strangers: StrangerDm::Pair,
            home_channel: None,
        }
    }
}

impl PlatformRules {
    /// The rules of a platform nothing in the configuration mentions.
    pub fn defaults(keys: &PlatformKeys) -> Self {
        Self {
            groups: GroupRules {
                require_mention: keys.require_mention,
                ..GroupRules::default()
            },
            ..Self::default()
        }
    }
}

fn ids(value: Option<&str>) -> Vec<String> {
    comma_list(value.unwrap_or_default())
}

impl PlatformRules {
    pub fn read(r: &mut Reader<'_>, env: &Env, keys: &PlatformKeys) -> Self {
        let var = |suffix: &str| env.get(&format!("{}_{suffix}", keys.env));
        let name = keys.name;
        let mut allowed = ids(var("ALLOWED_USERS"));
        for key in [
            format!("{name}.allow_from"),
            format!("platforms.{name}.allow_from"),
            format!("platforms.{name}.extra.allow_from"),
        ] {
            allowed.extend(r.list(&key, &[]));
        }
        // Chat ids (Telegram's start with `-`) that Hermes' older releases took in the user list.
        let (chat_ids, group_users): (Vec<String>, Vec<String>) = ids(var("GROUP_ALLOWED_USERS"))
            .into_iter()
            .partition(|id| id.starts_with('-'));
        if !chat_ids.is_empty() {
            r.notice_raw(format!(
                "{env}_GROUP_ALLOWED_USERS holds chat ids ({}); they are taken as \
                 {env}_GROUP_ALLOWED_CHATS, where they belong",
                chat_ids.join(", "),
                env = keys.env,
            ));
        }
        let mut group_chats = ids(var("GROUP_ALLOWED_CHATS"));
        group_chats.extend(chat_ids);
        let gateway_allowed = ids(env.get("GATEWAY_ALLOWED_USERS"));
        let groups = GroupRules::read(r, env, keys);
        let no_user_list = allowed.is_empty() && gateway_allowed.is_empty();
        if keys.noun == "channels" && no_user_list {
            group_chats.extend(groups.allowed_chats.iter().cloned());
        }
        let access = AccessSettings {
            allowed,
            gateway_allowed,
            group_users,
            group_chats,
            allow_all: truthy(var("ALLOW_ALL_USERS")),
            gateway_allow_all: truthy(env.get("GATEWAY_ALLOW_ALL_USERS")),
        };
        let allowlisted = [
            &access.allowed,
            &access.gateway_allowed,
            &access.group_users,
            &access.group_chats,
        ]
        .iter()
        .any(|list| !list.is_empty());
        let text = |suffix: &str| var(suffix).map(str::trim).unwrap_or_default().to_string();
        let home_channel = Some(text("HOME_CHANNEL"))
            .filter(|chat| !chat.is_empty())
            .map(|chat_id| HomeChannel {
                chat_id,
                thread_id: text("HOME_CHANNEL_THREAD_ID"),
                name: Some(text("HOME_CHANNEL_NAME"))
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| "Home".into()),
            });
        Self {
            strangers: stranger_dm(r, keys, allowlisted),
            access,
            groups,
            home_channel,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_yaml::Value;

    use super::*;
    use crate::config::settings::group_rules::{DISCORD, TELEGRAM};

    fn read(keys: &PlatformKeys, yaml: &str, vars: &[(&str, &str)]) -> PlatformRules {
        let root: Value = serde_yaml::from_str(yaml).unwrap();
        let env = Env::from_pairs(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        PlatformRules::read(&mut Reader::new(&root), &env, keys)
    }

    #[test]
    fn each_platform_reads_its_own_variables() {
        let vars = [
            ("TELEGRAM_ALLOWED_USERS", "1"),
            ("DISCORD_ALLOWED_USERS", "2,3"),
            ("DISCORD_HOME_CHANNEL", "99"),
            ("GATEWAY_ALLOWED_USERS", "7"),
        ];
        let discord = read(&DISCORD, "discord:\n  allow_from: ['4']", &vars);
        assert_eq!(discord.access.allowed, ["2", "3", "4"]);
        assert_eq!(discord.access.gateway_allowed, ["7"]);
        let home = discord.home_channel.unwrap();
        assert_eq!((home.chat_id.as_str(), home.name.as_str()), ("99", "Home"));
        let telegram = read(&TELEGRAM, "{}", &vars);
        assert_eq!(telegram.access.allowed, ["1"]);
        assert!(telegram.home_channel.is_none());
        assert_eq!(
            telegram.strangers,
            StrangerDm::Ignore,
            "an allowlist is set"
        );
    }

    #[test]
    fn allowed_channels_let_everyone_in_only_without_a_user_list() {
        let open = read(&DISCORD, "{}", &[("DISCORD_ALLOWED_CHANNELS", "5")]);
        assert_eq!(open.access.group_chats, ["5"]);
        assert_eq!(open.groups.allowed_chats, ["5"]);
        let listed = read(
            &DISCORD,
            "{}",
            &[
                ("DISCORD_ALLOWED_CHANNELS", "5"),
                ("DISCORD_ALLOWED_USERS", "2"),
            ],
        );
        assert!(listed.access.group_chats.is_empty(), "{listed:?}");
        assert_eq!(listed.groups.allowed_chats, ["5"], "still where it listens");
        let telegram = read(&TELEGRAM, "{}", &[("TELEGRAM_ALLOWED_CHATS", "-5")]);
        assert!(
            telegram.access.group_chats.is_empty(),
            "Telegram's list only listens"
        );
    }
}
