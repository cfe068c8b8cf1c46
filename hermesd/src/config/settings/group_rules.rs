//! Each chat platform's group rules and strangers' direct messages, with Hermes' keys. When a
//! group message is for the agent: `require_mention` (then only a mention, a reply to the bot, a
//! `mention_patterns` wake word, a `free_response_<chats>` / `free_response_topics` chat, or a
//! thread the bot is in unless `thread_require_mention`); where it listens: `allowed_<chats>`
//! (with `guest_mode` letting a mention through from other groups), `ignored_<chats>`,
//! `allowed_topics`, `ignored_threads`; `exclusive_bot_mentions` (default on) leaves a message
//! naming only other bots to them. `<chats>` is what the platform calls a group (Telegram's
//! `chats`, Discord's and Slack's `channels`). Each is read from `<PLATFORM>_<KEY>` in the
//! environment (blank counts as unset), else from the first of `<platform>.<key>`,
//! `platforms.<platform>.<key>`, `gateway.platforms.<platform>.<key>` and
//! `platforms.<platform>.extra.<key>` in config.yaml (a top-level `require_mention` last). Hermes
//! lets the environment win for some of these keys and config.yaml for others; here it wins
//! for all, as for every other setting.
//! `unauthorized_dm_behavior` (`pair` or `ignore`) decides whether a stranger's direct message
//! gets a pairing code; as in Hermes, a configured allowlist makes `ignore` the default.

use hermes_proto::env::Env;
use serde_yaml::Value;

use super::read::{Reader, comma_list, show};

/// How a chat platform names its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlatformKeys {
    /// `telegram`: config.yaml's `telegram.<key>`, `platforms.telegram.<key>`, …
    pub name: &'static str,
    /// `TELEGRAM`: the environment's `TELEGRAM_<KEY>`.
    pub env: &'static str,
    /// What the platform calls a group in its keys: `chats` or `channels`.
    pub noun: &'static str,
    /// `require_mention` when nothing sets it (Hermes: off on Telegram, on elsewhere).
    pub require_mention: bool,
    /// The platform's own name for `thread_require_mention`, read after it (Slack's
    /// `strict_mention`).
    pub thread_mention_alias: Option<&'static str>,
}

pub const TELEGRAM: PlatformKeys = PlatformKeys {
    name: "telegram",
    env: "TELEGRAM",
    noun: "chats",
    require_mention: false,
    thread_mention_alias: None,
};
pub const DISCORD: PlatformKeys = PlatformKeys {
    name: "discord",
    env: "DISCORD",
    noun: "channels",
    require_mention: true,
    thread_mention_alias: None,
};
pub const SLACK: PlatformKeys = PlatformKeys {
    name: "slack",
    env: "SLACK",
    noun: "channels",
    require_mention: true,
    thread_mention_alias: Some("strict_mention"),
};

/// The chat platforms the gateway can connect, in the order their rows are shown.
pub const CHAT_PLATFORMS: [PlatformKeys; 3] = [TELEGRAM, DISCORD, SLACK];

/// The config.yaml places of a platform's key, in the order they are read.
fn places(keys: &PlatformKeys) -> [String; 4] {
    let name = keys.name;
    [
        name.to_string(),
        format!("platforms.{name}"),
        format!("gateway.platforms.{name}"),
        format!("platforms.{name}.extra"),
    ]
}

/// Wake-word regular expressions (case-insensitive), compared by their source.
#[derive(Debug, Clone, Default)]
pub struct MentionPatterns(pub Vec<regex::Regex>);

impl PartialEq for MentionPatterns {
    fn eq(&self, other: &Self) -> bool {
        let sources = |p: &Self| {
            p.0.iter()
                .map(|r| r.as_str().to_string())
                .collect::<Vec<_>>()
        };
        sources(self) == sources(other)
    }
}

impl MentionPatterns {
    pub fn any_match(&self, text: &str) -> bool {
        !text.is_empty() && self.0.iter().any(|pattern| pattern.is_match(text))
    }
}

/// When a message in a group (a channel, on Discord and Slack) is for the agent.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupRules {
    pub require_mention: bool,
    pub mention_patterns: MentionPatterns,
    /// Chat ids where every message is for the agent.
    pub free_response_chats: Vec<String>,
    /// `chat:topic` pairs where every message is for the agent (no topic: `1`, General).
    pub free_response_topics: Vec<String>,
    /// When not empty, the only groups the agent answers in.
    pub allowed_chats: Vec<String>,
    /// When not empty, the only forum topics it answers in.
    pub allowed_topics: Vec<String>,
    pub ignored_threads: Vec<String>,
    /// Groups where nothing is for the agent (Discord's and Slack's `ignored_channels`).
    pub ignored_chats: Vec<String>,
    /// In a thread the bot is in, a mention is still needed (Discord's
    /// `thread_require_mention`, default off).
    pub thread_require_mention: bool,
    pub exclusive_bot_mentions: bool,
    pub guest_mode: bool,
}

impl Default for GroupRules {
    fn default() -> Self {
        Self {
            require_mention: false,
            mention_patterns: MentionPatterns::default(),
            free_response_chats: Vec::new(),
            free_response_topics: Vec::new(),
            allowed_chats: Vec::new(),
            allowed_topics: Vec::new(),
            ignored_threads: Vec::new(),
            ignored_chats: Vec::new(),
            thread_require_mention: false,
            exclusive_bot_mentions: true,
            guest_mode: false,
        }
    }
}

/// What a stranger's direct message gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrangerDm {
    /// A pairing code the owner can approve.
    Pair,
    /// Nothing.
    Ignore,
}

impl GroupRules {
    pub fn read(r: &mut Reader<'_>, env: &Env, keys: &PlatformKeys) -> Self {
        let d = Self::default();
        let top_level = r.flag_opt("require_mention", "false");
        let noun = keys.noun;
        Self {
            require_mention: flag(r, env, keys, "require_mention")
                .or(top_level)
                .unwrap_or(keys.require_mention),
            mention_patterns: patterns(r, env, keys),
            free_response_chats: ids(r, env, keys, &format!("free_response_{noun}")),
            free_response_topics: ids(r, env, keys, "free_response_topics"),
            allowed_chats: ids(r, env, keys, &format!("allowed_{noun}")),
            allowed_topics: ids(r, env, keys, "allowed_topics"),
            ignored_threads: ids(r, env, keys, "ignored_threads"),
            ignored_chats: ids(r, env, keys, &format!("ignored_{noun}")),
            thread_require_mention: flag(r, env, keys, "thread_require_mention")
                .or_else(|| {
                    let alias = keys.thread_mention_alias?;
                    flag(r, env, keys, alias)
                })
                .unwrap_or(d.thread_require_mention),
            exclusive_bot_mentions: flag(r, env, keys, "exclusive_bot_mentions")
                .unwrap_or(d.exclusive_bot_mentions),
            guest_mode: flag(r, env, keys, "guest_mode").unwrap_or(d.guest_mode),
        }
    }
}

/// `unauthorized_dm_behavior`: the platform's own (`telegram.…`, `platforms.telegram.…`) wins;
/// else a global `ignore` (the top-level key, else `gateway.…`); else `ignore` when an
/// allowlist is configured (`allowlisted`), as Hermes does, so strangers are not answered with
/// codes; else `pair`. A value that is neither word gets a notice and that default.
pub fn stranger_dm(r: &mut Reader<'_>, keys: &PlatformKeys, allowlisted: bool) -> StrangerDm {
    let words = [("pair", StrangerDm::Pair), ("ignore", StrangerDm::Ignore)];
    let default = if allowlisted {
        StrangerDm::Ignore
    } else {
        StrangerDm::Pair
    };
    if let Some(key) = place(r, keys, "unauthorized_dm_behavior") {
        return r.word(&key, default, &words);
    }
    let global = [
        "unauthorized_dm_behavior",
        "gateway.unauthorized_dm_behavior",
    ]
    .into_iter()
    .find(|key| r.get(key).is_some());
    match global {
        Some(key) if r.word(key, default, &words) == StrangerDm::Ignore => StrangerDm::Ignore,
        _ => default,
    }
}

impl std::fmt::Display for StrangerDm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Pair => "pair",
            Self::Ignore => "ignore",
        })
    }
}

fn env_name(keys: &PlatformKeys, key: &str) -> String {
    format!("{}_{}", keys.env, key.to_ascii_uppercase())
}

/// The first config.yaml place holding `key`.
fn place(r: &Reader<'_>, keys: &PlatformKeys, key: &str) -> Option<String> {
    places(keys)
        .iter()
        .map(|place| format!("{place}.{key}"))
        .find(|full| r.get(full).is_some())
}

/// `<PLATFORM>_<KEY>`, unless blank.
fn from_env<'e>(env: &'e Env, keys: &PlatformKeys, key: &str) -> Option<&'e str> {
    env.get(&env_name(keys, key))
        .filter(|v| !v.trim().is_empty())
}

/// A switch: the environment's word (`true`, `1`, `yes`, `on`; anything else is off), else
/// config.yaml's.
fn flag(r: &mut Reader<'_>, env: &Env, keys: &PlatformKeys, key: &str) -> Option<bool> {
    if let Some(value) = from_env(env, keys, key) {
        return Some(super::read::truthy(Some(value)));
    }
    let full = place(r, keys, key)?;
    r.flag_opt(&full, "the default")
}

/// A list of ids: the environment's comma-separated value, else a YAML sequence of numbers or
/// strings, or one comma-separated string.
fn ids(r: &mut Reader<'_>, env: &Env, keys: &PlatformKeys, key: &str) -> Vec<String> {
    if let Some(value) = from_env(env, keys, key) {
        return comma_list(value);
    }
    let Some(full) = place(r, keys, key) else {
        return Vec::new();
    };
    let Some(value) = r.get(&full) else {
        return Vec::new();
    };
    match value {
        Value::Sequence(items) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
                Value::Number(n) => Some(n.to_string()),
                other => {
                    r.notice(&full, other, "is not an id", &"the other items");
                    None
                }
            })
            .collect(),
        Value::String(s) => comma_list(s),
        Value::Number(n) => vec![n.to_string()],
        other => {
            r.notice(&full, other, "is not a list of ids", &"none");
            Vec::new()
        }
    }
}

/// `mention_patterns`: `<PLATFORM>_MENTION_PATTERNS` (a JSON list, else one per line, else
/// comma-separated) or a YAML list or string. A pattern that does not compile is left out with a
/// notice.
fn patterns(r: &mut Reader<'_>, env: &Env, keys: &PlatformKeys) -> MentionPatterns {
    let key = "mention_patterns";
    let sources: Vec<String> = match from_env(env, keys, key) {
        Some(raw) => {
            let raw = raw.trim();
            match serde_json::from_str::<Vec<String>>(raw) {
                Ok(list) => list,
                Err(_) if raw.contains('\n') => raw.lines().map(str::to_string).collect(),
                Err(_) => comma_list(raw),
            }
        }
        None => match place(r, keys, key) {
            Some(full) => r.list(&full, &[]),
            None => Vec::new(),
        },
    };
    let mut compiled = Vec::new();
    for source in sources.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        match regex::RegexBuilder::new(source)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
        {
            Ok(pattern) => compiled.push(pattern),
            Err(e) => r.notice_raw(format!(
                "{}.{key}: {} is not a pattern this build reads ({}); it is left out",
                keys.name,
                show(&Value::String(source.to_string())),
                e.to_string().lines().last().unwrap_or_default().trim()
            )),
        }
    }
    MentionPatterns(compiled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str, vars: &[(&str, &str)]) -> (GroupRules, Vec<String>) {
        let root: Value = serde_yaml::from_str(yaml).unwrap();
        let env = Env::from_pairs(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut r = Reader::new(&root);
        let rules = GroupRules::read(&mut r, &env, &TELEGRAM);
        (rules, r.into_notices())
    }

    #[test]
    fn defaults_answer_every_group_message() {
        let (rules, notices) = read("{}", &[]);
        assert_eq!(rules, GroupRules::default());
        assert!(rules.exclusive_bot_mentions && !rules.require_mention);
        assert!(notices.is_empty());
    }

    #[test]
    fn places_and_the_environment() {
        let (rules, _) = read("require_mention: true", &[]);
        assert!(rules.require_mention, "the top-level key");
        let (rules, _) = read(
            "require_mention: true\ntelegram:\n  require_mention: false",
            &[],
        );
        assert!(!rules.require_mention, "telegram's own wins");
        let (rules, _) = read(
            "telegram:\n  require_mention: false",
            &[("TELEGRAM_REQUIRE_MENTION", "true")],
        );
        assert!(rules.require_mention, "the environment wins");
        let (rules, _) = read(
            "platforms:\n  telegram:\n    extra:\n      free_response_chats: [-100123, \"-5\"]\n\
             telegram:\n  allowed_chats: \"-1, -2\"\n  ignored_threads: [7]",
            &[("TELEGRAM_ALLOWED_TOPICS", "3, 4")],
        );
        assert_eq!(rules.free_response_chats, ["-100123", "-5"]);
        assert_eq!(rules.allowed_chats, ["-1", "-2"]);
        assert_eq!(rules.ignored_threads, ["7"]);
        assert_eq!(rules.allowed_topics, ["3", "4"]);
        let (rules, _) = read(
            "telegram:\n  allowed_chats: [-1]\nplatforms:\n  telegram:\n    extra:\n      allowed_chats: [-2]",
            &[("TELEGRAM_ALLOWED_CHATS", "  ")],
        );
        assert_eq!(
            rules.allowed_chats,
            ["-1"],
            "a blank variable is unset; telegram's own first"
        );
    }

    #[test]
    fn discord_and_slack_say_channels_and_require_a_mention_by_default() {
        let read_as = |keys: &PlatformKeys, yaml: &str, vars: &[(&str, &str)]| {
            let root: Value = serde_yaml::from_str(yaml).unwrap();
            let env = Env::from_pairs(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
            GroupRules::read(&mut Reader::new(&root), &env, keys)
        };
        let rules = read_as(
            &DISCORD,
            "discord:\n  ignored_channels: [9]\n  thread_require_mention: true",
            &[
                ("DISCORD_FREE_RESPONSE_CHANNELS", "1,2"),
                ("DISCORD_ALLOWED_CHANNELS", "3"),
                ("TELEGRAM_ALLOWED_CHATS", "-1"),
            ],
        );
        assert!(rules.require_mention && rules.thread_require_mention);
        assert_eq!(rules.free_response_chats, ["1", "2"]);
        assert_eq!(rules.allowed_chats, ["3"], "Telegram's list is Telegram's");
        assert_eq!(rules.ignored_chats, ["9"]);
        let rules = read_as(&SLACK, "{}", &[("SLACK_REQUIRE_MENTION", "false")]);
        assert!(!rules.require_mention);
        assert!(!rules.thread_require_mention);
        let strict = read_as(&SLACK, "{}", &[("SLACK_STRICT_MENTION", "true")]);
        assert!(
            strict.thread_require_mention,
            "Hermes' name for it on Slack"
        );
        let strict = read_as(&SLACK, "slack:\n  strict_mention: true", &[]);
        assert!(strict.thread_require_mention);
        assert!(read_as(&SLACK, "{}", &[]).require_mention);
        assert!(!read_as(&TELEGRAM, "{}", &[]).require_mention);
    }

    #[test]
    fn patterns_compile_case_insensitive_and_bad_ones_are_named() {
        let (rules, notices) = read(
            "telegram:\n  mention_patterns: ['^hey hermes', '(?<=x)y', 'chef\\b']",
            &[],
        );
        assert_eq!(rules.mention_patterns.0.len(), 2);
        assert!(rules.mention_patterns.any_match("Hey Hermes, the news"));
        assert!(rules.mention_patterns.any_match("ask the CHEF now"));
        assert!(!rules.mention_patterns.any_match("chefs"));
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(notices[0].contains("(?<=x)y"), "{notices:?}");
        let (rules, _) = read("{}", &[("TELEGRAM_MENTION_PATTERNS", r#"["^bot,", "yo"]"#)]);
        assert!(rules.mention_patterns.any_match("bot, hi"));
        assert!(rules.mention_patterns.any_match("YO"));
    }

    #[test]
    fn strangers_get_a_code_only_without_an_allowlist() {
        let behaviour = |yaml: &str, allowlisted: bool| {
            let root: Value = serde_yaml::from_str(yaml).unwrap();
            stranger_dm(&mut Reader::new(&root), &TELEGRAM, allowlisted)
        };
        assert_eq!(behaviour("{}", false), StrangerDm::Pair);
        assert_eq!(behaviour("{}", true), StrangerDm::Ignore);
        assert_eq!(
            behaviour("unauthorized_dm_behavior: pair", true),
            StrangerDm::Ignore,
            "a global pair does not undo the allowlist's default"
        );
        assert_eq!(
            behaviour("unauthorized_dm_behavior: ignore", false),
            StrangerDm::Ignore
        );
        assert_eq!(
            behaviour("telegram:\n  unauthorized_dm_behavior: pair", true),
            StrangerDm::Pair,
            "the platform's own wins"
        );
        assert_eq!(
            behaviour(
                "unauthorized_dm_behavior: ignore\nplatforms:\n  telegram:\n    unauthorized_dm_behavior: PAIR",
                false
            ),
            StrangerDm::Pair
        );
        assert_eq!(
            behaviour(
                "unauthorized_dm_behavior: pair\ngateway:\n  unauthorized_dm_behavior: ignore",
                false
            ),
            StrangerDm::Pair,
            "the top-level key first"
        );
        assert_eq!(
            behaviour("gateway:\n  unauthorized_dm_behavior: ignore", false),
            StrangerDm::Ignore
        );
    }
}
