//! The turn runner: everything a turn needs — the store, the configuration in force, the HTTP
//! client for model calls, the hub, the tools — and nothing else. The server, cron and (later)
//! the gateway start turns through one `TurnRunner`; none of them reaches the daemon's state.

use std::sync::{Arc, OnceLock};

use hermes_proto::place::Home;
use tokio_util::sync::CancellationToken;

use crate::{
    auth::Credentials,
    config::{Config, SharedConfig},
    hub::Hub,
    llm::{self, HttpClient, MetadataCache},
    store::Store,
    tools::{Registry, ToolServices},
};

/// What turns run with; one per daemon.
#[derive(Debug)]
pub struct TurnRunner {
    pub home: Home,
    pub store: Store,
    config: Arc<SharedConfig>,
    /// Built on the first model call, so start-up stays small.
    http: OnceLock<HttpClient>,
    /// Context windows learned from endpoints.
    pub model_metadata: MetadataCache,
    /// Every provider's credential pool (read again on reload).
    pub credentials: Arc<Credentials>,
    /// Sessions loaded in memory, and the tasks working on them: the one way into a session.
    pub hub: Hub,
    /// Every tool the daemon has.
    pub registry: Registry,
    /// What tools share: the store, the skills, background processes, the cron handle.
    pub tool_services: Arc<ToolServices>,
    /// Cancelled when the daemon stops (work derived from it ends with it).
    pub shutdown: CancellationToken,
}

impl TurnRunner {
    pub fn new(
        home: Home,
        store: Store,
        config: Arc<SharedConfig>,
        tool_services: Arc<ToolServices>,
        shutdown: CancellationToken,
    ) -> Self {
        let credentials = {
            let config = config.get();
            let strategies = crate::auth::strategies(&config.settings.llm);
            Arc::new(Credentials::load(&home.dir, &config.env, &strategies))
        };
        Self {
            credentials,
            home,
            hub: Hub::new(store.clone()),
            store,
            config,
            http: OnceLock::new(),
            model_metadata: MetadataCache::default(),
            registry: Registry::builtin(),
            tool_services,
            shutdown,
        }
    }

    /// The configuration in force now.
    pub fn config(&self) -> Arc<Config> {
        self.config.get()
    }

    /// The shared HTTP client for model calls. Building it reads the system's CA certificates,
    /// so the first call does that on the blocking pool.
    pub async fn http_client(&self) -> Result<HttpClient, String> {
        if let Some(client) = self.http.get() {
            return Ok(client.clone());
        }
        let timing = self.config().settings.llm.timing;
        let client = tokio::task::spawn_blocking(move || llm::http_client(&timing))
            .await
            .map_err(|e| format!("cannot build the HTTP client: {e}"))??;
        Ok(self.http.get_or_init(|| client).clone())
    }
}
