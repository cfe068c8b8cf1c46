//! Hermes' session-reset policy for chat conversations: `session_reset` (else
//! `gateway.session_reset`) with `mode` (none | idle | daily | both; default none, as upstream
//! now), `at_hour` (local, default 4), `idle_minutes` (default 1440), `notify`,
//! `notify_exclude_platforms` and `bg_process_max_age_hours`; overrides per chat type
//! (`reset_by_type.<dm|group|thread|channel>`) and per platform (`reset_by_platform.<name>`),
//! the platform's winning; `SESSION_IDLE_MINUTES` and `SESSION_RESET_HOUR` override the default.

use std::collections::BTreeMap;

use hermes_proto::env::Env;
use serde_yaml::Value;

use super::read::{Reader, Verdict};

/// The longest idle time a policy may name (10 years).
const MAX_IDLE_MINUTES: u64 = 5_256_000;

/// When a chat's conversation starts over by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResetMode {
    #[default]
    None,
    Idle,
    Daily,
    Both,
}

impl ResetMode {
    fn parse(word: &str) -> Option<Self> {
        Some(match word.trim().to_ascii_lowercase().as_str() {
            "none" | "off" | "never" => Self::None,
            "idle" => Self::Idle,
            "daily" => Self::Daily,
            "both" => Self::Both,
            _ => return None,
        })
    }

    pub fn idle(self) -> bool {
        matches!(self, Self::Idle | Self::Both)
    }

    pub fn daily(self) -> bool {
        matches!(self, Self::Daily | Self::Both)
    }
}

/// One policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetPolicy {
    pub mode: ResetMode,
    /// The local hour (0–23) a daily reset happens at.
    pub at_hour: u32,
    pub idle_minutes: u64,
    /// Tell the chat when its conversation was reset.
    pub notify: bool,
    pub notify_exclude_platforms: Vec<String>,
}

impl Default for ResetPolicy {
    fn default() -> Self {
        Self {
            mode: ResetMode::None,
            at_hour: 4,
            idle_minutes: 1440,
            notify: true,
            notify_exclude_platforms: vec!["api_server".into(), "webhook".into()],
        }
    }
}

/// The policies in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionResetSection {
    pub default: ResetPolicy,
    pub by_type: BTreeMap<String, ResetPolicy>,
    pub by_platform: BTreeMap<String, ResetPolicy>,
    /// `bg_process_max_age_hours` (default 24; 0: any age): a running background process of the
    /// conversation younger than this keeps it from being reset.
    pub bg_process_max_age_hours: u64,
}

impl Default for SessionResetSection {
    fn default() -> Self {
        Self {
            default: ResetPolicy::default(),
            by_type: BTreeMap::new(),
            by_platform: BTreeMap::new(),
            bg_process_max_age_hours: 24,
        }
    }
}

impl SessionResetSection {
    pub fn read(r: &mut Reader<'_>, env: &Env) -> Self {
        let root = if r.get("session_reset").is_some() {
            "session_reset"
        } else {
            "gateway.session_reset"
        };
        let d = Self::default();
        let mut default = policy(r, root, &d.default);
        if let Some(minutes) = env
            .get("SESSION_IDLE_MINUTES")
            .and_then(|m| m.trim().parse::<u64>().ok())
        {
            default.idle_minutes = if minutes == 0 {
                1440
            } else {
                minutes.min(MAX_IDLE_MINUTES)
            };
        }
        if let Some(hour) = env
            .get("SESSION_RESET_HOUR")
            .and_then(|h| h.trim().parse::<u32>().ok())
        {
            default.at_hour = if hour < 24 { hour } else { 4 };
        }
        let mut overrides = |key: &str| {
            let names: Vec<String> = match r.get(&format!("{root}.{key}")) {
                Some(Value::Mapping(map)) => map
                    .keys()
                    .filter_map(|k| k.as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            };
            names
                .into_iter()
                .map(|name| {
                    let at = format!("{root}.{key}.{name}");
                    (name.to_ascii_lowercase(), policy(r, &at, &default))
                })
                .collect::<BTreeMap<_, _>>()
        };
        let by_type = overrides("reset_by_type");
        let by_platform = overrides("reset_by_platform");
        Self {
            bg_process_max_age_hours: r.whole(
                &format!("{root}.bg_process_max_age_hours"),
                d.bg_process_max_age_hours,
                0,
                87_600,
            ),
            default,
            by_type,
            by_platform,
        }
    }

    /// The policy of a conversation on `platform` in a chat of `kind` (dm, group, channel;
    /// `thread` when it is a thread): the platform's, else the chat type's, else the default.
    pub fn policy_for(&self, platform: &str, kind: &str, in_thread: bool) -> &ResetPolicy {
        let kind = if in_thread { "thread" } else { kind };
        self.by_platform
            .get(platform)
            .or_else(|| self.by_type.get(kind))
            .unwrap_or(&self.default)
    }
}

/// The policy under `at`, each key falling back to `base`'s.
fn policy(r: &mut Reader<'_>, at: &str, base: &ResetPolicy) -> ResetPolicy {
    let key = |name: &str| format!("{at}.{name}");
    let mode = r.value(&key("mode"), base.mode, &"none", |value| {
        match value.as_str().and_then(ResetMode::parse) {
            Some(mode) => Verdict::Use(mode),
            None => Verdict::Bad("is not one of none, idle, daily, both".into()),
        }
    });
    let at_hour = r.value(&key("at_hour"), base.at_hour, &4, |value| {
        match value.as_u64().filter(|h| *h < 24) {
            Some(hour) => Verdict::Use(hour as u32),
            None => Verdict::Bad("is not an hour from 0 to 23".into()),
        }
    });
    let idle_minutes = r.value(
        &key("idle_minutes"),
        base.idle_minutes,
        &1440,
        |value| match value.as_u64().filter(|m| *m > 0) {
            Some(minutes) if minutes > MAX_IDLE_MINUTES => Verdict::Clamp(
                MAX_IDLE_MINUTES,
                format!("is above {MAX_IDLE_MINUTES} (10 years); using it"),
            ),
            Some(minutes) => Verdict::Use(minutes),
            None => Verdict::Bad("is not a number of minutes above 0".into()),
        },
    );
    let exclude = if r.get(&key("notify_exclude_platforms")).is_some() {
        r.list(&key("notify_exclude_platforms"), &[])
    } else {
        base.notify_exclude_platforms.clone()
    };
    ResetPolicy {
        mode,
        at_hour,
        idle_minutes,
        notify: r.flag(&key("notify"), base.notify),
        notify_exclude_platforms: exclude,
    }
}
