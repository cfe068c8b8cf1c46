//! The composition root: the one place the daemon's parts are built and wired — the store, the
//! configuration, the turn runner (hub and tools inside), cron, the gateway — and what only the daemon itself
//! needs (its home, socket, start time, shutdown signal, reload). Nothing below imports it: the
//! agent, cron and the tools get narrow handles, never this.

use std::{
    path::PathBuf,
    sync::Arc,
    time::{Instant, SystemTime},
};

use hermes_proto::{env::Env, place::Home};
use tokio_util::sync::CancellationToken;

use crate::{
    agent::TurnRunner,
    config::{Config, ConfigError, FlagOverrides, SharedConfig},
    cron::{self, Cron, ops::CronRequests},
    policy::SecretMasker,
    store::Store,
};

/// Shared daemon state; one per process, behind an `Arc`.
#[derive(Debug)]
pub struct DaemonState {
    pub home: Home,
    pub socket: PathBuf,
    pub store: Store,
    pub started: Instant,
    pub started_at: SystemTime,
    /// Cancelled when the daemon should stop (signal or Shutdown RPC).
    pub shutdown: CancellationToken,
    config: Arc<SharedConfig>,
    process_env: Env,
    flags: FlagOverrides,
    /// What turns run with: the one way the server, cron and the gateway start turns.
    pub runner: Arc<TurnRunner>,
    /// Cron: the runner and cron's control (settings, wake-up, permits).
    pub cron: Arc<Cron>,
    /// The chat platforms (Telegram).
    pub gateway: Arc<crate::gateway::Gateway>,
    /// The `cronjob` tool's requests, until `run` starts serving them.
    cron_requests: std::sync::Mutex<Option<CronRequests>>,
}

impl DaemonState {
    pub fn new(
        home: Home,
        socket: PathBuf,
        store: Store,
        config: Config,
        process_env: Env,
        flags: FlagOverrides,
    ) -> Self {
        let control = Arc::new(cron::control::Control::new(config.settings.cron.clone()));
        let (cron_ops, cron_requests) = cron::ops::channel();
        let user_home = process_env.get("HOME").map(PathBuf::from);
        let paths = crate::policy::paths::PathPolicy::new(&home.dir, user_home.as_deref());
        let tool_services = Arc::new(crate::tools::ToolServices::new(
            store.clone(),
            paths,
            Arc::new(cron_ops),
        ));
        tool_services.apply_config(&config.settings);
        install_masker(&tool_services, &config);
        let mcp = crate::mcp::Mcp::new(home.dir.clone());
        tool_services.set_mcp(Arc::clone(&mcp));
        let shutdown = CancellationToken::new();
        let config = Arc::new(SharedConfig::new(config));
        let runner = Arc::new(TurnRunner::new(
            home.clone(),
            store.clone(),
            Arc::clone(&config),
            tool_services,
            shutdown.clone(),
        ));
        let cron = Arc::new(Cron {
            runner: Arc::clone(&runner),
            control,
        });
        let gateway = Arc::new(crate::gateway::Gateway::new(
            Arc::clone(&runner),
            home.dir.clone(),
            process_env.get("XDG_RUNTIME_DIR").map(str::to_string),
            shutdown.clone(),
        ));
        runner
            .tool_services
            .set_delegation(Arc::new(crate::agent::Delegator::new(&runner)));
        runner
            .tool_services
            .set_vision(Arc::new(crate::agent::VisionModel::new(&runner)));
        runner
            .tool_services
            .set_messenger(Arc::new(crate::gateway::GatewayMessenger(Arc::downgrade(
                &gateway,
            ))));
        Self {
            home,
            socket,
            store,
            started: Instant::now(),
            started_at: SystemTime::now(),
            shutdown,
            config,
            process_env,
            flags,
            runner,
            cron,
            gateway,
            cron_requests: std::sync::Mutex::new(Some(cron_requests)),
        }
    }

    /// The `cronjob` tool's request queue, once (taken by `run` to serve it).
    pub fn take_cron_requests(&self) -> Option<CronRequests> {
        self.cron_requests.lock().ok().and_then(|mut r| r.take())
    }

    /// The configuration in force now.
    pub fn config(&self) -> Arc<Config> {
        self.config.get()
    }

    /// Re-read `.env` and `config.yaml` (blocking file I/O: call off the runtime). On error the
    /// running configuration stays. Returns the notices of the new configuration (also logged,
    /// for a reload by SIGHUP).
    pub fn reload(&self) -> Result<Vec<String>, ConfigError> {
        let env = self.home.env(self.process_env.clone())?;
        let config = Config::load(&self.home, &env, &self.flags)?;
        let mut notices = config.notices.clone();
        let old = self.config();
        if old.logging.level != config.logging.level {
            notices.push("logging.level changes take effect when hermesd restarts".into());
        }
        let (was, now) = (&old.settings.gateway, &config.settings.gateway);
        let connections = |g: &crate::config::settings::GatewaySection| {
            (
                g.telegram.clone(),
                g.discord.clone(),
                g.slack.clone(),
                g.disabled.clone(),
            )
        };
        if connections(was) != connections(now) {
            notices.push(
                "chat platform connection changes (tokens, base URLs, poll_timeout, webhook, enabled) take effect when hermesd restarts; allowlists apply now".into(),
            );
        }
        if old.socket() != config.socket() {
            notices.push("daemon.socket changes take effect when hermesd restarts".into());
        }
        self.runner.tool_services.apply_config(&config.settings);
        let strategies = crate::auth::strategies(&config.settings.llm);
        self.runner.credentials.reload(&config.env, &strategies);
        install_masker(&self.runner.tool_services, &config);
        self.cron.control.apply(config.settings.cron.clone());
        if let Some(mcp) = self.runner.tool_services.mcp()
            && tokio::runtime::Handle::try_current().is_ok()
        {
            mcp.apply(&config.settings.mcp);
        }
        self.config.set(config);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let services = Arc::clone(&self.runner.tool_services);
            runtime.spawn(async move { services.refresh_login_env().await });
        }
        for notice in &notices {
            tracing::info!("{notice}");
        }
        tracing::info!("configuration reloaded");
        Ok(notices)
    }
}

/// Put the secret masker of `config` (its environment's keys, `security.redact_secrets`) in
/// force for tool results, output events and the log.
fn install_masker(services: &crate::tools::ToolServices, config: &Config) {
    let masker = Arc::new(SecretMasker::from_config(config));
    if !masker.is_enabled() {
        tracing::warn!(
            "security.redact_secrets is off: keys in tool output reach the model, clients and the log"
        );
    }
    services.set_masker(Arc::clone(&masker));
    crate::logging::set_filter(masker);
}
