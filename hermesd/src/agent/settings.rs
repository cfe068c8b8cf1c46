//! What one turn runs with, taken from the configuration's typed sections when it starts.

use std::time::Duration;

use crate::config::{
    Settings,
    settings::{CronMode, Enforcement},
};

/// Settings of one turn.
#[derive(Debug, Clone)]
pub struct TurnSettings {
    /// `agent.max_turns` (`agent.review_max_turns` for a review): model calls per turn.
    pub max_iterations: u32,
    /// `agent.loop_guard`: identical consecutive calls before a warning (stop at twice as many).
    pub loop_guard: u32,
    /// `approvals.mode` is `off`.
    pub approvals_off: bool,
    /// `approvals.cron_mode` is `approve`: cron runs execute dangerous commands unasked.
    pub cron_approve: bool,
    /// `approvals.timeout`.
    pub approval_timeout: Duration,
    /// `command_allowlist`: pattern keys approved forever in config.
    pub allowlist: Vec<String>,
    /// `terminal.timeout`.
    pub terminal_timeout: Duration,
    /// `terminal.cwd`: the working directory of sessions without one.
    pub default_cwd: String,
    /// `agent.system_prompt`.
    pub system_message: Option<String>,
    pub enforcement: Enforcement,
    /// `agent.reasoning_effort`.
    pub reasoning_effort: Option<String>,
    /// `prompt_caching.cache_ttl` is `1h`.
    pub cache_ttl_1h: bool,
}

impl TurnSettings {
    pub fn new(settings: &Settings) -> Self {
        let (agent, approvals) = (&settings.agent, &settings.approvals);
        Self {
            max_iterations: agent.max_turns,
            loop_guard: agent.loop_guard,
            approvals_off: approvals.off(),
            cron_approve: approvals.cron_mode == CronMode::Approve,
            approval_timeout: approvals.timeout,
            allowlist: approvals.command_allowlist.clone(),
            terminal_timeout: settings.terminal.timeout,
            default_cwd: settings.terminal.cwd.clone(),
            system_message: agent.system_prompt.clone(),
            enforcement: agent.tool_use_enforcement.clone(),
            reasoning_effort: agent.reasoning_effort.clone(),
            cache_ttl_1h: settings.llm.cache_ttl_1h,
        }
    }
}
