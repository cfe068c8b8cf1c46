//! The layers of the configuration tree and how they combine.

use std::path::Path;

use hermes_proto::{env::Env, place::expand_vars};
use serde_yaml::{Mapping, Value};

use super::{ConfigError, FlagOverrides};

const DEFAULTS: &str = include_str!("defaults.yaml");

/// Environment variables that override a configuration key (`.env` overlays the process env first).
const ENV_KEYS: &[(&str, &str)] = &[
    ("HERMES_SOCKET", "daemon.socket"),
    ("HERMES_LOG_LEVEL", "logging.level"),
    ("HERMES_INFERENCE_MODEL", "model.default"),
    ("HERMES_INFERENCE_PROVIDER", "model.provider"),
    ("HERMES_TIMEZONE", "timezone"),
];

/// Top-level keys of the Python Hermes config.yaml (and hermesd's own), so others get a notice.
const KNOWN_TOP_LEVEL: &[&str] = &[
    "_config_version",
    "agent",
    "approvals",
    "auxiliary",
    "bedrock",
    "browser",
    "checkpoints",
    "code_execution",
    "command_allowlist",
    "compression",
    "computer_use",
    "context",
    "credential_pool_strategies",
    "cron",
    "curator",
    "custom_providers",
    "daemon",
    "dashboard",
    "delegation",
    "desktop",
    "discord",
    "display",
    "fallback_providers",
    "file_read_max_chars",
    "gateway",
    "goals",
    "group_sessions_per_user",
    "honcho",
    "hooks",
    "human_delay",
    "kanban",
    "logging",
    "lsp",
    "matrix",
    "mattermost",
    "max_concurrent_sessions",
    "max_live_sessions",
    "max_turns",
    "mcp_discovery_timeout",
    "mcp_servers",
    "memory",
    "model",
    "model_catalog",
    "moa",
    "network",
    "openrouter",
    "personalities",
    "platform_hints",
    "platform_toolsets",
    "platforms",
    "privacy",
    "prompt_caching",
    "provider",
    "providers",
    "quick_commands",
    "require_mention",
    "secrets",
    "security",
    "session_reset",
    "sessions",
    "skills",
    "slack",
    "streaming",
    "stt",
    "telegram",
    "terminal",
    "timezone",
    "tool_loop_guardrails",
    "tool_output",
    "tool_results",
    "tools",
    "toolsets",
    "tts",
    "unauthorized_dm_behavior",
    "updates",
    "vertex",
    "voice",
    "web",
    "whatsapp",
    "x_search",
];

pub fn defaults() -> Result<Value, ConfigError> {
    serde_yaml::from_str(DEFAULTS).map_err(|e| ConfigError::Defaults(e.to_string()))
}

/// Parse the user's config.yaml; an empty file is an empty mapping.
pub fn parse_user_file(path: &Path, text: &str) -> Result<Value, ConfigError> {
    let value: Value = serde_yaml::from_str(text).map_err(|e| ConfigError::Syntax {
        path: path.display().to_string(),
        line: e.location().map(|l| l.line()),
        column: e.location().map(|l| l.column()),
        message: e.to_string(),
    })?;
    match value {
        Value::Null => Ok(Value::Mapping(Mapping::new())),
        Value::Mapping(_) => Ok(value),
        _ => Err(ConfigError::Syntax {
            path: path.display().to_string(),
            line: Some(1),
            column: None,
            message: "the top level must be a mapping of keys (like `model:`)".into(),
        }),
    }
}

pub fn unknown_key_notices(user: &Value) -> Vec<String> {
    let Some(map) = user.as_mapping() else {
        return Vec::new();
    };
    map.keys()
        .filter_map(Value::as_str)
        .filter(|key| !KNOWN_TOP_LEVEL.contains(key))
        .map(|key| format!("config key `{key}` is not used by hermesd; kept and ignored"))
        .collect()
}

/// Move legacy root keys where Hermes moved them: `max_turns` → `agent.max_turns`,
/// `provider` → `model.provider`; a string `model` becomes `model.default`.
pub fn normalize_legacy(mut user: Value, notices: &mut Vec<String>) -> Value {
    let Some(map) = user.as_mapping_mut() else {
        return user;
    };
    if let Some(Value::String(name)) = map.get("model").cloned() {
        set_path(&mut user, &["model", "default"], Value::String(name));
    }
    for (old, new) in [
        ("max_turns", ["agent", "max_turns"]),
        ("provider", ["model", "provider"]),
    ] {
        if let Some(value) = user.as_mapping_mut().and_then(|m| m.remove(old)) {
            notices.push(format!("legacy key `{old}` read as `{}`", new.join(".")));
            set_path(&mut user, &new, value);
        }
    }
    user
}

/// Merge `over` into `base`: mappings recursively, anything else replaced.
pub fn deep_merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Mapping(base), Value::Mapping(over)) => {
            for (key, value) in over {
                match base.get_mut(&key) {
                    Some(slot) => deep_merge(slot, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (slot, over) => *slot = over,
    }
}

pub fn apply_env(tree: &mut Value, env: &Env) {
    for (var, key) in ENV_KEYS {
        if let Some(value) = env.get(var) {
            let path: Vec<&str> = key.split('.').collect();
            set_path(tree, &path, Value::String(value.to_string()));
        }
    }
}

pub fn apply_flags(tree: &mut Value, flags: &FlagOverrides) -> Result<(), ConfigError> {
    for (key, raw) in &flags.pairs {
        let path: Vec<&str> = key.split('.').collect();
        if path.iter().any(|segment| segment.is_empty()) {
            return Err(ConfigError::Flag(format!("{key}={raw}")));
        }
        let value = serde_yaml::from_str(raw).unwrap_or_else(|_| Value::String(raw.clone()));
        set_path(tree, &path, value);
    }
    Ok(())
}

/// Expand `${VAR}` in every string value (keys are left alone; unknown names stay literal).
pub fn expand(tree: &mut Value, env: &Env) {
    match tree {
        Value::String(s) if s.contains("${") => *s = expand_vars(s, env),
        Value::Mapping(map) => map.values_mut().for_each(|v| expand(v, env)),
        Value::Sequence(seq) => seq.iter_mut().for_each(|v| expand(v, env)),
        _ => {}
    }
}

/// Set a dotted path, creating mappings on the way (a scalar in the way is replaced).
pub fn set_path(tree: &mut Value, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = tree;
    for key in parents {
        if !node.is_mapping() {
            *node = Value::Mapping(Mapping::new());
        }
        let Value::Mapping(map) = node else { return };
        node = map
            .entry(Value::String((*key).into()))
            .or_insert_with(|| Value::Mapping(Mapping::new()));
    }
    if !node.is_mapping() {
        *node = Value::Mapping(Mapping::new());
    }
    if let Value::Mapping(map) = node {
        map.insert(Value::String((*last).into()), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(s: &str) -> Value {
        serde_yaml::from_str(s).unwrap()
    }

    #[test]
    fn merge_keeps_unset_defaults_and_unknown_keys() {
        let mut base = yaml("a: {x: 1, y: 2}\nb: 3");
        deep_merge(&mut base, yaml("a: {y: 5}\nzzz: kept"));
        assert_eq!(base, yaml("a: {x: 1, y: 5}\nb: 3\nzzz: kept"));
    }

    #[test]
    fn legacy_keys_move() {
        let mut notices = Vec::new();
        let user = normalize_legacy(
            yaml("model: gpt-4o\nprovider: openai\nmax_turns: 5"),
            &mut notices,
        );
        assert_eq!(
            user,
            yaml("model: {default: gpt-4o, provider: openai}\nagent: {max_turns: 5}")
        );
        assert_eq!(notices.len(), 2);
    }

    #[test]
    fn expansion_reaches_nested_strings_only() {
        let env = Env::from_pairs([("K", "v")]);
        let mut tree = yaml("a: [\"${K}\", 1]\nb: {c: \"x${K}\", \"${K}\": \"${NOPE}\"}");
        expand(&mut tree, &env);
        assert_eq!(tree, yaml("a: [v, 1]\nb: {c: xv, \"${K}\": \"${NOPE}\"}"));
    }

    #[test]
    fn env_then_flags_override() {
        let mut tree = defaults().unwrap();
        apply_env(&mut tree, &Env::from_pairs([("HERMES_LOG_LEVEL", "debug")]));
        assert_eq!(tree["logging"]["level"], Value::from("debug"));
        let flags = FlagOverrides {
            pairs: vec![
                ("logging.level".into(), "warn".into()),
                ("daemon.drain_timeout".into(), "3".into()),
            ],
        };
        apply_flags(&mut tree, &flags).unwrap();
        assert_eq!(tree["logging"]["level"], Value::from("warn"));
        assert_eq!(tree["daemon"]["drain_timeout"], Value::from(3));
        let bad = FlagOverrides {
            pairs: vec![("a..b".into(), "1".into())],
        };
        assert!(apply_flags(&mut tree, &bad).is_err());
    }

    #[test]
    fn syntax_error_names_line() {
        let err = parse_user_file(
            Path::new("/h/config.yaml"),
            "model:\n  default: x\n bad: [\n",
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("/h/config.yaml line "), "{text}");
    }
}
