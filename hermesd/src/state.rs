//! What every part of the running daemon shares: where it lives, its store, its current config,
//! and the shutdown signal.

use std::{
    path::PathBuf,
    sync::{Arc, OnceLock, RwLock},
    time::{Instant, SystemTime},
};

use hermes_proto::{env::Env, place::Home};
use tokio_util::sync::CancellationToken;

use crate::{
    config::{Config, ConfigError, FlagOverrides},
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
    config: RwLock<Arc<Config>>,
    process_env: Env,
    flags: FlagOverrides,
    /// Built on the first model call, so start-up stays small.
    http: OnceLock<crate::llm::HttpClient>,
    /// Context windows learned from endpoints.
    pub model_metadata: crate::llm::MetadataCache,
    /// Sessions loaded in memory, and the tasks working on them: the one way into a session.
    pub hub: crate::hub::Hub,
    /// Every tool the daemon has.
    pub registry: crate::tools::Registry,
    /// What tools share: the store, task lists, background processes.
    pub tool_services: Arc<crate::tools::ToolServices>,
    /// Cron: settings, the scheduler's wake-up, the run permits (shared with the tools).
    pub cron: Arc<crate::cron::Control>,
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
        let hermes_home = home.dir.clone();
        let (cron_settings, notices) = cron_settings(&config);
        for notice in notices {
            tracing::warn!("{notice}");
        }
        let cron = Arc::new(crate::cron::Control::new(cron_settings));
        let tool_services = Arc::new(crate::tools::ToolServices::new(
            store.clone(),
            hermes_home,
            Arc::clone(&cron),
        ));
        tool_services.apply_config(&config.tree);
        Self {
            home,
            socket,
            store: store.clone(),
            started: Instant::now(),
            started_at: SystemTime::now(),
            shutdown: CancellationToken::new(),
            config: RwLock::new(Arc::new(config)),
            process_env,
            flags,
            http: OnceLock::new(),
            model_metadata: crate::llm::MetadataCache::default(),
            hub: crate::hub::Hub::new(store.clone()),
            registry: crate::tools::Registry::builtin(),
            tool_services,
            cron,
        }
    }

    /// The shared HTTP client for model calls. Building it reads the system's CA certificates,
    /// so the first call does that on the blocking pool.
    pub async fn http_client(&self) -> Result<crate::llm::HttpClient, String> {
        if let Some(client) = self.http.get() {
            return Ok(client.clone());
        }
        let timing = crate::llm::timing(&self.config().tree).map_err(|e| e.to_string())?;
        let client = tokio::task::spawn_blocking(move || crate::llm::http_client(&timing))
            .await
            .map_err(|e| format!("cannot build the HTTP client: {e}"))??;
        Ok(self.http.get_or_init(|| client).clone())
    }

    /// The configuration in force now.
    pub fn config(&self) -> Arc<Config> {
        match self.config.read() {
            Ok(guard) => Arc::clone(&guard),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Re-read `.env` and `config.yaml` (blocking file I/O: call off the runtime). On error the
    /// running configuration stays. Returns the notices of the new configuration.
    pub fn reload(&self) -> Result<Vec<String>, ConfigError> {
        let env = self.home.env(self.process_env.clone())?;
        let config = Config::load(&self.home, &env, &self.flags)?;
        let mut notices = config.notices.clone();
        let old = self.config();
        if old.logging.level != config.logging.level {
            notices.push("logging.level changes take effect when hermesd restarts".into());
        }
        if old.socket() != config.socket() {
            notices.push("daemon.socket changes take effect when hermesd restarts".into());
        }
        self.tool_services.apply_config(&config.tree);
        let (cron, cron_notices) = cron_settings(&config);
        notices.extend(cron_notices);
        self.cron.apply(cron);
        match self.config.write() {
            Ok(mut guard) => *guard = Arc::new(config),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(config),
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let services = Arc::clone(&self.tool_services);
            runtime.spawn(async move { services.refresh_login_env().await });
        }
        tracing::info!("configuration reloaded");
        Ok(notices)
    }
}

/// The cron settings of `config` (`HERMES_CRON_TIMEOUT` from its environment), with notices.
fn cron_settings(config: &Config) -> (crate::cron::CronSettings, Vec<String>) {
    crate::cron::CronSettings::from_config(&config.tree, config.env.get("HERMES_CRON_TIMEOUT"))
}
