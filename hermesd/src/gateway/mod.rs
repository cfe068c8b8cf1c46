//! The gateway: the daemon's chat-platform connections. Each platform is an [`Adapter`]
//! (built in `platforms.rs`, the one place naming them) supervised by its own task
//! (`supervisor.rs`: machine-wide lock, connect, long poll under a watchdog, backoff); what
//! arrives is judged (`access.rs`, `pairing.rs`) by the platform's own rules, stored and routed
//! to a conversation (`inbound.rs`, `routing.rs`), and each chat's messages run in order through
//! the hub like any client's (`chats.rs`), answered by a streamed message that is edited as the
//! answer grows (`reply.rs`) and delivered through the outbox (`outbox.rs`), which a restart
//! finishes (`recovery.rs`). What it keeps is bounded (`retention.rs`). Voice messages are
//! transcribed and replies spoken (`voice.rs`); files an answer names go after it (`media.rs`);
//! a group message is answered in a thread of its own where the adapter opens one
//! (`threads.rs`).
//! No file here names a platform: what differs is the adapter's, and its
//! [`adapter::Capabilities`].

pub mod access;
pub mod adapter;
pub mod api;
mod approvals;
mod chats;
mod commands;
pub mod discord;
mod files;
mod inbound;
pub mod lock;
pub mod markup;
mod media;
mod messenger;
mod outbox;
pub mod pairing;
mod platforms;
mod recovery;
mod reply;
mod reset;
mod retention;
pub mod routing;
pub mod secret;
pub mod slack;
pub mod split;
pub mod status;
mod supervisor;
pub mod telegram;
mod threads;
mod triggers;
mod voice;
mod voice_mode;
pub mod webhook;
pub mod websocket;

use std::{path::PathBuf, sync::Arc};

pub use adapter::{Adapter, PlatformError};
pub use commands::{Offered, list as commands_offered};
pub use messenger::{GatewayMessenger, HomeSource, home_with_source};
pub use status::{LinkState, PlatformStatus, StatusCell};
use tokio_util::sync::CancellationToken;

use crate::agent::TurnRunner;

/// The platforms whose clients call in over HTTP; nothing is sent to them.
pub const HTTP_PLATFORMS: &[&str] = &["api_server", "webhook"];

/// One platform: its adapter and status.
pub struct Link {
    pub adapter: Arc<dyn Adapter>,
    pub status: StatusCell,
}

impl Link {
    pub fn platform(&self) -> &'static str {
        self.adapter.platform()
    }
}

/// Every platform connection and the chats they serve.
pub struct Gateway {
    pub(crate) runner: Arc<TurnRunner>,
    home: PathBuf,
    runtime_dir: Option<String>,
    shutdown: CancellationToken,
    statuses: std::sync::Mutex<Vec<StatusCell>>,
    chats: chats::Chats,
    approvals: approvals::Pending,
    /// True once every platform made its first connection attempt (start-up is over).
    settled: tokio::sync::watch::Sender<bool>,
    /// The platforms whose first connection attempt is still to come.
    unsettled: std::sync::atomic::AtomicUsize,
    /// The platforms started, for sending outside a chat's reply (`send_message`, cron).
    links: std::sync::Mutex<Vec<Arc<Link>>>,
    /// Counts connections made, so senders waiting for a platform learn it came up.
    connections: tokio::sync::watch::Sender<u64>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway").finish_non_exhaustive()
    }
}

impl Gateway {
    pub fn new(
        runner: Arc<TurnRunner>,
        home: PathBuf,
        runtime_dir: Option<String>,
        shutdown: CancellationToken,
    ) -> Self {
        // Every configured platform shows from the first moment, before its task starts.
        let config = runner.config();
        let settings = &config.settings.gateway;
        let mut statuses = Vec::new();
        let running = settings.running();
        let has_platform = !running.is_empty();
        if settings.api_server.is_some() {
            statuses.push(StatusCell::new("api_server", LinkState::Connecting));
        }
        if settings.webhook.is_some() {
            statuses.push(StatusCell::new("webhook", LinkState::Connecting));
        }
        for keys in crate::config::settings::CHAT_PLATFORMS {
            if settings.disabled.contains(&keys.name) {
                statuses.push(StatusCell::new(keys.name, LinkState::Disabled));
            } else if running.contains(&keys.name) {
                statuses.push(StatusCell::new(keys.name, LinkState::Connecting));
            }
        }
        Self {
            runner,
            home,
            runtime_dir,
            shutdown,
            statuses: std::sync::Mutex::new(statuses),
            chats: chats::Chats::default(),
            approvals: approvals::Pending::default(),
            settled: tokio::sync::watch::Sender::new(!has_platform),
            unsettled: std::sync::atomic::AtomicUsize::new(0),
            links: std::sync::Mutex::new(Vec::new()),
            connections: tokio::sync::watch::Sender::new(0),
        }
    }

    /// Start every configured platform, each in its own task (none delays the others or the
    /// daemon's readiness).
    pub async fn start(self: &Arc<Self>) {
        let config = self.runner.config();
        if let (Some(settings), Some(status)) = (
            config.settings.gateway.api_server.clone(),
            self.cell("api_server"),
        ) {
            tokio::spawn(api::start(Arc::clone(self), settings, status));
        }
        if let (Some(settings), Some(status)) = (
            config.settings.gateway.webhook.clone(),
            self.cell("webhook"),
        ) {
            tokio::spawn(webhook::start(Arc::clone(self), settings, status));
        }
        let running = config.settings.gateway.running();
        if running.is_empty() {
            return;
        }
        tokio::spawn(retention::sweep(Arc::clone(self)));
        let client = match self.runner.http_client().await {
            Ok(client) => client,
            Err(e) => {
                for platform in &running {
                    if let Some(status) = self.cell(platform) {
                        status.fatal(&format!("cannot build the HTTP client: {e}"));
                    }
                }
                self.mark_settled();
                return;
            }
        };
        let mut started = Vec::new();
        for platform in running {
            let adapter = platforms::adapter(platform, &config.settings.gateway, &client);
            let (Some(adapter), Some(status)) = (adapter, self.cell(platform)) else {
                continue;
            };
            started.push(Arc::new(Link { adapter, status }));
        }
        self.settle_after(started.len());
        if let Ok(mut links) = self.links.lock() {
            links.extend(started.iter().cloned());
        }
        for link in started {
            tokio::spawn(supervisor::supervise(Arc::clone(self), link));
        }
    }

    /// Wait until every platform made its first connection attempt, at most `within`.
    pub async fn settled(&self, within: std::time::Duration) {
        let mut settled = self.settled.subscribe();
        let _ = tokio::time::timeout(within, settled.wait_for(|done| *done)).await;
    }

    /// The started platform `platform`.
    fn link(&self, platform: &str) -> Option<Arc<Link>> {
        let links = self.links.lock().ok()?;
        links.iter().find(|l| l.platform() == platform).cloned()
    }

    /// A platform connected (and finished what its last run left).
    fn note_connected(&self) {
        self.connections.send_modify(|n| *n += 1);
    }

    /// Start-up is over once `platforms` platforms made their first connection attempt.
    fn settle_after(&self, platforms: usize) {
        self.unsettled
            .store(platforms, std::sync::atomic::Ordering::SeqCst);
        if platforms == 0 {
            self.settled.send_replace(true);
        }
    }

    /// Note that a platform's first connection attempt is over (later calls change nothing).
    fn mark_settled(&self) {
        use std::sync::atomic::Ordering;
        let left = self
            .unsettled
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if matches!(left, Ok(1) | Err(0)) {
            self.settled.send_replace(true);
        }
    }

    fn cell(&self, platform: &str) -> Option<StatusCell> {
        self.statuses
            .lock()
            .ok()?
            .iter()
            .find(|c| c.get().platform == platform)
            .cloned()
    }

    /// How the chat platforms are doing: the ones messages can be sent to, which have home
    /// channels (not the API server or the webhook platform, whose clients call in).
    pub fn chat_status(&self) -> Vec<PlatformStatus> {
        let mut all = self.status();
        all.retain(|s| !HTTP_PLATFORMS.contains(&s.platform.as_str()));
        all
    }

    /// How every platform is doing.
    pub fn status(&self) -> Vec<PlatformStatus> {
        self.statuses
            .lock()
            .map(|s| s.iter().map(StatusCell::get).collect())
            .unwrap_or_default()
    }
}
