//! The agent's settings, read from the configuration when a turn starts.

use std::time::Duration;

use serde_yaml::Value;

use super::prompt::Enforcement;

/// Settings of one turn.
#[derive(Debug, Clone)]
pub struct TurnSettings {
    /// `agent.max_turns`: model calls per turn (Hermes' iteration budget).
    pub max_iterations: u32,
    /// `agent.loop_guard`: identical consecutive calls before a warning (stop at twice as many).
    pub loop_guard: u32,
    /// `approvals.mode` is `off`.
    pub approvals_off: bool,
    /// `approvals.cron_mode` is `approve`: cron runs execute dangerous commands unasked.
    pub cron_approve: bool,
    /// `approvals.timeout` in seconds.
    pub approval_timeout: Duration,
    /// `command_allowlist`: pattern keys approved forever in config.
    pub allowlist: Vec<String>,
    /// `terminal.timeout` in seconds.
    pub terminal_timeout: Duration,
    /// `terminal.cwd`: the working directory of sessions without one.
    pub default_cwd: String,
    /// `agent.system_prompt`.
    pub system_message: Option<String>,
    pub enforcement: Enforcement,
}

fn get<'a>(tree: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(tree, |node, key| node.get(key))
}

fn number(tree: &Value, path: &str, default: u64) -> u64 {
    match get(tree, path) {
        Some(Value::Number(n)) => n.as_u64().unwrap_or(default),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(default),
        _ => default,
    }
}

impl TurnSettings {
    pub fn from_config(tree: &Value) -> Self {
        let mode = get(tree, "approvals.mode")
            .map(|v| match v {
                Value::Bool(false) => "off".to_string(),
                Value::String(s) => s.trim().to_lowercase(),
                _ => String::new(),
            })
            .unwrap_or_default();
        let allowlist = match get(tree, "command_allowlist") {
            Some(Value::Sequence(items)) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        Self {
            max_iterations: number(tree, "agent.max_turns", 90).clamp(1, 10_000) as u32,
            loop_guard: number(tree, "agent.loop_guard", 3).min(1_000) as u32,
            approvals_off: mode == "off",
            cron_approve: get(tree, "approvals.cron_mode")
                .and_then(Value::as_str)
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("approve")),
            approval_timeout: Duration::from_secs(number(tree, "approvals.timeout", 60).max(1)),
            allowlist,
            terminal_timeout: Duration::from_secs(number(tree, "terminal.timeout", 180).max(1)),
            default_cwd: get(tree, "terminal.cwd")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim()
                .to_string(),
            system_message: get(tree, "agent.system_prompt")
                .and_then(Value::as_str)
                .map(str::to_string),
            enforcement: Enforcement::from_config(get(tree, "agent.tool_use_enforcement")),
        }
    }
}
