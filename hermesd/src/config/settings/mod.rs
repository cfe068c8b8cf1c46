//! The settings hermesd reads, as typed sections built once per load from the merged tree with
//! Hermes' key names and hermesd's defaults. Reading is lenient: a value of the wrong type or out
//! of range becomes one notice (key, value, what is used instead) and the default or nearest
//! bound; an absent key is its default without a notice. Every part of the daemon reads these,
//! never the raw tree (`Config::tree` keeps the keys no section reads yet; nothing outside
//! `config` looks at it).

mod agent;
mod api_server;
mod approvals;
mod auxiliary;
mod browser;
mod code_execution;
mod compression;
mod cron;
mod delegation;
mod discord;
mod gateway;
mod group_rules;
mod llm;
mod mcp;
mod memory;
mod named_endpoints;
mod platform_rules;
mod provider;
pub mod read;
mod retention;
mod review;
mod security;
mod session_reset;
mod skills;
mod slack;
mod stt;
mod terminal;
mod toolsets;
mod tts;
mod voice_command;
mod web;
mod webhook;
mod zone;

#[cfg(test)]
mod tests;

pub use agent::{AgentSection, Enforcement, ImageInputMode};
pub use api_server::{ApiServerSettings, MIN_KEY_CHARS};
pub use approvals::{ApprovalMode, ApprovalsSection, CronMode};
pub use auxiliary::{AuxiliarySection, AuxiliaryTask, TaskSettings};
pub use browser::{BrowserSection, DialogPolicy};
pub use code_execution::CodeExecutionSection;
pub use compression::CompressionSection;
pub use cron::CronSection;
pub use delegation::{DelegationSection, MAX_TASKS_PER_CALL};
pub use discord::{DISCORD_API_BASE, DiscordSettings};
pub use gateway::{AccessSettings, GatewaySection, TELEGRAM_BASE_URL, TelegramSettings};
pub use group_rules::{CHAT_PLATFORMS, GroupRules, MentionPatterns, PlatformKeys, StrangerDm};
pub use llm::{LlmSection, Timing};
pub use mcp::{McpSection, McpServerConfig, McpTransport};
pub use memory::MemorySection;
pub use named_endpoints::NamedEndpoint;
pub use platform_rules::{HomeChannel, PlatformRules};
pub use provider::{ApiMode, ProviderEntry};
pub use retention::{SessionsSection, ToolResultsSection};
pub use review::ReviewSection;
pub use security::SecuritySection;
pub use session_reset::{ResetMode, ResetPolicy, SessionResetSection};
pub use skills::SkillsSection;
pub use slack::{SLACK_API_BASE, SlackSettings};
pub use stt::{SttProvider, SttSection};
pub use terminal::{DEFAULT_MAX_BACKGROUND, EnvPassthrough, TerminalSection};
pub use toolsets::ToolsetSelection;
pub use tts::{TtsProvider, TtsSection};
pub use voice_command::CommandProvider;
pub use web::{SearchBackend, WebSection};
pub use webhook::{INSECURE_NO_AUTH, WebhookRoute, WebhookSettings};
pub use zone::{ZONE_HINT, Zone, ZoneOffset, parse_zone};

use hermes_proto::env::Env;
use serde_yaml::Value;

use read::Reader;

/// Top-level keys the sections read that must be mappings when present.
const MAPPINGS: &[&str] = &[
    "agent",
    "approvals",
    "auxiliary",
    "browser",
    "code_execution",
    "compression",
    "cron",
    "delegation",
    "discord",
    "mcp",
    "memory",
    "platforms",
    "streaming",
    "telegram",
    "security",
    "sessions",
    "skills",
    "slack",
    "stt",
    "terminal",
    "tool_results",
    "tts",
    "voice",
    "web",
];

/// Every section hermesd reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    pub agent: AgentSection,
    pub approvals: ApprovalsSection,
    pub terminal: TerminalSection,
    pub toolsets: ToolsetSelection,
    pub compression: CompressionSection,
    pub review: ReviewSection,
    pub memory: MemorySection,
    pub skills: SkillsSection,
    pub cron: CronSection,
    pub sessions: SessionsSection,
    pub tool_results: ToolResultsSection,
    pub llm: LlmSection,
    pub auxiliary: AuxiliarySection,
    pub security: SecuritySection,
    pub gateway: GatewaySection,
    pub mcp: McpSection,
    pub code_execution: CodeExecutionSection,
    pub delegation: DelegationSection,
    pub browser: BrowserSection,
    pub web: WebSection,
    pub stt: SttSection,
    pub tts: TtsSection,
}

impl Settings {
    /// Read every section of `tree`; `env` supplies `HERMES_CRON_TIMEOUT`, `HOME`,
    /// `HERMES_REDACT_SECRETS` and the values of `terminal.env_passthrough`. The notices say
    /// what was not usable and what is used instead.
    pub fn read(tree: &Value, env: &Env) -> (Self, Vec<String>) {
        let mut r = Reader::new(tree);
        for key in MAPPINGS {
            r.expect_mapping(key);
        }
        let approvals = ApprovalsSection::read(&mut r);
        let cron_env = cron::CronEnv {
            timeout: env.get("HERMES_CRON_TIMEOUT"),
            script_timeout: env.get("HERMES_CRON_SCRIPT_TIMEOUT"),
        };
        let cron = CronSection::read(&mut r, cron_env, &approvals);
        let settings = Self {
            agent: AgentSection::read(&mut r),
            terminal: TerminalSection::read(&mut r, env),
            toolsets: ToolsetSelection::read(&mut r),
            compression: CompressionSection::read(&mut r),
            review: ReviewSection::read(&mut r),
            memory: MemorySection::read(&mut r),
            skills: SkillsSection::read(&mut r, env.get("HOME")),
            sessions: SessionsSection::read(&mut r),
            tool_results: ToolResultsSection::read(&mut r),
            llm: LlmSection::read(&mut r),
            auxiliary: AuxiliarySection::read(&mut r),
            security: SecuritySection::read(&mut r, env),
            gateway: GatewaySection::read(&mut r, env),
            mcp: McpSection::read(&mut r, env),
            code_execution: CodeExecutionSection::read(&mut r),
            delegation: DelegationSection::read(&mut r),
            browser: BrowserSection::read(&mut r),
            web: WebSection::read(&mut r, env),
            stt: SttSection::read(&mut r, env),
            tts: TtsSection::read(&mut r, env),
            approvals,
            cron,
        };
        (settings, r.into_notices())
    }
}
