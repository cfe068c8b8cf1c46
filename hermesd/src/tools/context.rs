//! What a tool call runs with: the session, its working directory, cancellation, the turn it
//! belongs to (output, approvals, questions) and the daemon services tools share.

use std::{path::PathBuf, sync::Arc, time::Duration};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::policy::{command::CommandPolicy, paths::PathPolicy};
use crate::{
    config::{
        Settings,
        settings::{EnvPassthrough, SkillsSection},
    },
    exec::{LoginEnv, ProcessRegistry, RegistryConfig, capture_login_env},
    memory::MemorySettings,
    policy::SecretMasker,
    skills::SkillsLibrary,
    store::Store,
};

/// A dangerous action waiting for the user's word.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// What will run, as the user should see it.
    pub command: String,
    /// Stable key of the rule that matched ("approve for the session" remembers it).
    pub pattern_key: String,
    /// Why it is dangerous.
    pub reason: String,
}

/// The answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    Approved,
    /// Denied, with the reason the model is told.
    Denied(String),
}

/// The chat a `cronjob` call came from (a job made there is delivered back to it).
#[derive(Debug, Clone)]
pub struct CronOrigin {
    pub platform: String,
    pub session_id: String,
}

/// Cron as the `cronjob` tool reaches it: one call per tool call, the model's arguments in, the
/// result the model reads out. Cron implements it (`cron/tool.rs`); tools never see cron.
#[async_trait]
pub trait CronHandle: Send + Sync {
    async fn cronjob(
        &self,
        args: serde_json::Value,
        origin: CronOrigin,
    ) -> Result<serde_json::Value, super::ToolError>;
}

/// One task of a `delegate_task` call, as the model gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelegatedTask {
    pub goal: String,
    pub context: Option<String>,
    /// `orchestrator` keeps `delegate_task` (one level more); anything else is a leaf.
    pub orchestrator: bool,
}

/// Where the agent making a call sits in a delegation tree: depth 0 is the user's agent; a
/// child's approvals are asked of the clients of `root`, the conversation the user talks to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DelegationPlace {
    pub depth: u32,
    /// The user's conversation (its first segment's id); empty at depth 0 (the caller's own).
    pub root: String,
    /// How the user is shown this agent (`subagent 2/3: goal…`); empty at depth 0.
    pub label: String,
}

/// Delegation as the `delegate_task` tool reaches it: the agent layer implements it
/// (`agent/delegation/`); tools never see turns.
#[async_trait]
pub trait DelegateHandle: Send + Sync {
    /// Start `tasks` as child agents of the calling session; the result the model reads.
    async fn delegate(
        &self,
        tasks: Vec<DelegatedTask>,
        ctx: &super::ToolContext,
    ) -> Result<serde_json::Value, super::ToolError>;
}

/// The auxiliary vision model as `vision_analyze` reaches it (`auxiliary.vision.*`): the agent
/// layer implements it (`agent/vision.rs`); tools never see models.
#[async_trait]
pub trait VisionHandle: Send + Sync {
    /// The vision model's answer to `prompt` about `image`; `Ok(None)` when no auxiliary vision
    /// model is configured.
    async fn analyze(
        &self,
        image: crate::llm::Image,
        prompt: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, String>;
    /// How long an image URL may take to download (`auxiliary.vision.download_timeout`).
    fn download_timeout(&self) -> Duration;
}

/// The turn a tool call belongs to, as the tool sees it.
#[async_trait]
pub trait TurnPort: Send + Sync {
    /// Progress output of a long-running call (becomes a `ToolOutput` event).
    fn tool_output(&self, call_id: &str, chunk: &str);
    /// Ask the user to approve a dangerous action; waits for the answer or the timeout.
    async fn approve(&self, request: ApprovalRequest) -> ApprovalDecision;
    /// Ask the user a question; `Err` says why no answer can come (no client, timeout).
    async fn clarify(&self, question: &str, choices: &[String]) -> Result<String, String>;
}

/// Settings tools read, taken from the configuration when the turn starts.
#[derive(Debug, Clone)]
pub struct ToolSettings {
    /// Default foreground timeout of `terminal`.
    pub terminal_timeout: Duration,
    /// Where results too large for the model are written.
    pub spill_dir: PathBuf,
    /// The turn is a background review: skill writes are limited to skills the agent created.
    pub background_review: bool,
    /// What decides which skills the session is offered.
    pub skills: Arc<SessionSkills>,
    /// `code_execution.*`: the limits of an `execute_code` script.
    pub code_execution: crate::config::settings::CodeExecutionSection,
    /// Where this agent sits in a delegation tree.
    pub delegation: DelegationPlace,
    /// The turn's model takes images: `vision_analyze` can hand it the image itself.
    pub main_sees_images: bool,
}

/// Sources of sessions that receive no message after their turn: a cron run, a webhook delivery
/// and an API request have their answer taken once, when the turn ends; a subagent takes no
/// input. (The gateway's `webhook::SOURCE` and `api::turn::SOURCE`, and the agent's
/// `SUBAGENT_SOURCE`; tools do not reach up to them.)
const NO_LATER_MESSAGES: [&str; 4] = ["cron", "webhook", "api_server", "subagent"];

impl ToolSettings {
    /// Whether the session can be told something after this turn — a background delegation's
    /// results, a background process's report (as Hermes' `async_delivery_supported`).
    pub fn receives_later_messages(&self) -> bool {
        !NO_LATER_MESSAGES.contains(&self.skills.platform.as_str())
    }
}

/// The session's side of skill activation: its platform and the tools it has.
#[derive(Debug, Clone, Default)]
pub struct SessionSkills {
    /// The session's source (cli, telegram, cron, …), for `skills.platform_disabled`.
    pub platform: String,
    pub tools: std::collections::HashSet<String>,
    pub toolsets: std::collections::HashSet<String>,
}

impl SessionSkills {
    /// What decides which skills this session is offered, under `settings`.
    pub fn activation<'a>(
        &'a self,
        settings: &'a SkillsSection,
    ) -> crate::skills::ActivationContext<'a> {
        crate::skills::ActivationContext {
            os: crate::skills::current_os(),
            platform: Some(self.platform.as_str()),
            available_tools: &self.tools,
            available_toolsets: &self.toolsets,
            disabled: &settings.disabled,
            platform_disabled: &settings.platform_disabled,
        }
    }
}

/// One todo item of a session's task list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TodoItem {
    pub id: String,
    pub content: String,
    pub status: String,
}

/// What a tool call's conversation owns: its `todo` list (kept while the conversation is
/// loaded, as Hermes keeps it per agent, and dropped with it) and its view of the background
/// processes (only its own).
#[derive(Clone)]
pub struct SessionScope {
    /// The conversation's key (its first segment's id).
    pub conversation: String,
    pub todos: Arc<std::sync::Mutex<Vec<TodoItem>>>,
    pub processes: ProcessRegistry,
}

impl std::fmt::Debug for SessionScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionScope")
            .field("conversation", &self.conversation)
            .finish_non_exhaustive()
    }
}

/// Daemon-wide services shared by every tool call.
pub struct ToolServices {
    pub store: Store,
    /// `HERMES_HOME` as the daemon was given it.
    pub hermes_home: PathBuf,
    /// What the agent may read and write: every path a tool touches is decided here.
    pub paths: PathPolicy,
    /// What the agent may run (with the user's `approvals.deny`), replaced on reload.
    commands: std::sync::RwLock<Arc<CommandPolicy>>,
    /// Background processes started by `terminal`, every conversation's: tools reach them
    /// only through their [`SessionScope`].
    pub processes: ProcessRegistry,
    /// The user's login environment, captured once per start and on reload.
    login_env: tokio::sync::RwLock<Option<Arc<LoginEnv>>>,
    /// `terminal.env_passthrough`, set on start and reload; the login environment carries it.
    env_passthrough: std::sync::RwLock<Arc<[EnvPassthrough]>>,
    /// Settings tools read outside a turn (whether they are offered), set on start and reload.
    memory_settings: std::sync::RwLock<MemorySettings>,
    skills_settings: std::sync::RwLock<Arc<SkillsSection>>,
    /// The skills on disk and what hermesd knows about them.
    pub skills: SkillsLibrary,
    /// Cron as the `cronjob` tool reaches it.
    pub cron: Arc<dyn CronHandle>,
    /// The chat platforms, once the gateway is built (`send_message`, cron delivery).
    messenger: std::sync::OnceLock<Arc<dyn super::messenger::Messenger>>,
    /// What masks secrets in every result and output event; replaced on each reload.
    masker: std::sync::RwLock<Arc<SecretMasker>>,
    /// The MCP servers, whose tools join a session's (set once as the daemon is built).
    mcp: std::sync::OnceLock<Arc<crate::mcp::Mcp>>,
    /// Child agents for `delegate_task` (set once as the daemon is built).
    delegation: std::sync::OnceLock<Arc<dyn DelegateHandle>>,
    /// The auxiliary vision model for `vision_analyze` (set once as the daemon is built).
    vision: std::sync::OnceLock<Arc<dyn VisionHandle>>,
    /// The conversations' browsers (nothing runs until the first `browser_navigate`).
    pub browsers: crate::browser::Browsers,
    /// The web tools' settings and HTTP clients (built on first use).
    pub web: super::web::WebServices,
    /// Speech settings and the speech endpoints' client (built on first use).
    pub voice: crate::voice::Voice,
}

impl std::fmt::Debug for ToolServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolServices").finish_non_exhaustive()
    }
}

impl ToolServices {
    pub fn new(store: Store, paths: PathPolicy, cron: Arc<dyn CronHandle>) -> Self {
        let hermes_home = paths.hermes_home().to_path_buf();
        let browsers = crate::browser::Browsers::new(&hermes_home);
        let processes = ProcessRegistry::new(RegistryConfig {
            record: Some(hermes_home.join(crate::exec::PROCESS_RECORD_FILE)),
            ..RegistryConfig::default()
        });
        Self {
            store,
            hermes_home,
            commands: std::sync::RwLock::new(Arc::new(CommandPolicy::new(paths.clone(), &[]).0)),
            paths,
            processes,
            login_env: tokio::sync::RwLock::new(None),
            env_passthrough: std::sync::RwLock::new(Arc::from([])),
            memory_settings: std::sync::RwLock::new(MemorySettings::default()),
            skills_settings: std::sync::RwLock::new(Arc::default()),
            skills: SkillsLibrary::default(),
            cron,
            messenger: std::sync::OnceLock::new(),
            masker: std::sync::RwLock::new(Arc::default()),
            mcp: std::sync::OnceLock::new(),
            delegation: std::sync::OnceLock::new(),
            vision: std::sync::OnceLock::new(),
            browsers,
            web: super::web::WebServices::default(),
            voice: crate::voice::Voice::default(),
        }
    }

    /// Connect delegation (once, as the daemon is built).
    pub fn set_delegation(&self, handle: Arc<dyn DelegateHandle>) {
        if self.delegation.set(handle).is_err() {
            tracing::warn!("delegation was connected to the tools twice; the first stays");
        }
    }

    /// Delegation, once the daemon is built.
    pub fn delegation(&self) -> Option<&Arc<dyn DelegateHandle>> {
        self.delegation.get()
    }

    /// Connect the auxiliary vision model (once, as the daemon is built).
    pub fn set_vision(&self, handle: Arc<dyn VisionHandle>) {
        if self.vision.set(handle).is_err() {
            tracing::warn!("the vision model was connected to the tools twice; the first stays");
        }
    }

    /// The auxiliary vision model, once the daemon is built.
    pub fn vision(&self) -> Option<&Arc<dyn VisionHandle>> {
        self.vision.get()
    }

    /// Connect the MCP servers (once, as the daemon is built).
    pub fn set_mcp(&self, mcp: Arc<crate::mcp::Mcp>) {
        if self.mcp.set(mcp).is_err() {
            tracing::warn!("the MCP servers were connected to the tools twice; the first stays");
        }
    }

    /// The MCP servers, once the daemon is built.
    pub fn mcp(&self) -> Option<&Arc<crate::mcp::Mcp>> {
        self.mcp.get()
    }

    /// Connect the chat platforms (once, as the daemon is built).
    pub fn set_messenger(&self, messenger: Arc<dyn super::messenger::Messenger>) {
        if self.messenger.set(messenger).is_err() {
            tracing::warn!("the chat platforms were connected to the tools twice; the first stays");
        }
    }

    /// The chat platforms ([`super::messenger::NoPlatforms`] until the gateway is built).
    pub fn messenger(&self) -> Arc<dyn super::messenger::Messenger> {
        match self.messenger.get() {
            Some(messenger) => Arc::clone(messenger),
            None => Arc::new(super::messenger::NoPlatforms),
        }
    }

    /// Put `masker` in force for the calls that start from now on (start and reload).
    pub fn set_masker(&self, masker: Arc<SecretMasker>) {
        match self.masker.write() {
            Ok(mut slot) => *slot = masker,
            Err(poisoned) => *poisoned.into_inner() = masker,
        }
    }

    /// The secret masker in force.
    pub fn masker(&self) -> Arc<SecretMasker> {
        match self.masker.read() {
            Ok(slot) => Arc::clone(&slot),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Take the settings tools depend on from the configuration (start and reload).
    pub fn apply_config(&self, settings: &Settings) {
        self.processes
            .set_max_per_owner(settings.terminal.max_background);
        if let Ok(mut passthrough) = self.env_passthrough.write() {
            *passthrough = Arc::from(settings.terminal.env_passthrough.as_slice());
        }
        for notice in self.set_denied_commands(&settings.approvals.deny) {
            tracing::warn!("{notice}");
        }
        if let Ok(mut memory) = self.memory_settings.write() {
            *memory = MemorySettings::new(&settings.memory);
        }
        if let Ok(mut skills) = self.skills_settings.write() {
            *skills = Arc::new(settings.skills.clone());
        }
        self.browsers
            .apply(&settings.browser, settings.security.allow_private_urls);
        self.web
            .apply(&settings.web, settings.security.allow_private_urls);
        self.voice.apply(&settings.stt, &settings.tts);
    }

    /// The command rules in force.
    pub fn commands(&self) -> Arc<CommandPolicy> {
        match self.commands.read() {
            Ok(c) => Arc::clone(&c),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Put the user's `approvals.deny` globs in force; returns notices for those that do not
    /// parse.
    pub fn set_denied_commands(&self, deny: &[String]) -> Vec<String> {
        let (policy, notices) = CommandPolicy::new(self.paths.clone(), deny);
        match self.commands.write() {
            Ok(mut c) => *c = Arc::new(policy),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(policy),
        }
        notices
    }

    /// The `skills` section of the configuration in force.
    pub fn skills_settings(&self) -> Arc<SkillsSection> {
        self.skills_settings
            .read()
            .map(|s| Arc::clone(&s))
            .unwrap_or_default()
    }

    /// The `memory` section of the configuration in force.
    pub fn memory_settings(&self) -> MemorySettings {
        self.memory_settings.read().map(|s| *s).unwrap_or_default()
    }

    /// `terminal.env_passthrough` in force.
    fn env_passthrough(&self) -> Arc<[EnvPassthrough]> {
        match self.env_passthrough.read() {
            Ok(p) => Arc::clone(&p),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Capture the login environment again (daemon start and reload); never per command.
    pub async fn refresh_login_env(&self) {
        let mut slot = self.login_env.write().await;
        let captured = capture_login_env().await;
        *slot = Some(Arc::new(captured.with_passthrough(self.env_passthrough())));
    }

    /// The captured login environment with `terminal.env_passthrough` in force, capturing it
    /// now if start-up has not yet.
    pub async fn login_env(&self) -> Arc<LoginEnv> {
        let passthrough = self.env_passthrough();
        if let Some(env) = self.login_env.read().await.as_ref()
            && *env.passthrough() == *passthrough
        {
            return Arc::clone(env);
        }
        let mut slot = self.login_env.write().await;
        let env = match slot.as_ref() {
            Some(env) if *env.passthrough() == *passthrough => return Arc::clone(env),
            // A reload changed the list; the capture itself still holds.
            Some(env) => env.with_passthrough(passthrough),
            None => capture_login_env().await.with_passthrough(passthrough),
        };
        let env = Arc::new(env);
        *slot = Some(Arc::clone(&env));
        env
    }
}

/// Everything one call gets.
#[derive(Clone)]
pub struct ToolContext {
    pub session_id: String,
    /// What the call's conversation owns (task list, background processes).
    pub scope: SessionScope,
    pub call_id: String,
    /// The session's working directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// Cancelled when the turn is interrupted.
    pub cancel: CancellationToken,
    pub turn: Arc<dyn TurnPort>,
    pub services: Arc<ToolServices>,
    pub settings: Arc<ToolSettings>,
    /// The session's tools (a script run by `execute_code` calls them).
    pub toolbox: super::Toolbox,
}

impl ToolContext {
    /// Whether the session's toolbox has the tool `name` (so a result may point the model to it).
    pub fn has_tool(&self, name: &str) -> bool {
        self.settings.skills.tools.contains(name)
    }

    /// A path argument resolved against the session's cwd, with `~` expanded.
    pub fn resolve_path(&self, path: &str) -> PathBuf {
        self.services.paths.resolve(path, &self.cwd)
    }
}
