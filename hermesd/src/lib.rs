//! hermesd: the Hermes agent daemon. `main.rs` parses flags and calls [`startup::main`]; [`run`]
//! serves a prepared daemon on a listener until it is told to stop.

pub mod agent;
pub mod auth;
pub mod browser;
pub mod cli;
pub mod config;
pub mod confine;
pub mod cron;
pub mod exec;
pub mod export;
pub mod gateway;
pub mod hub;
pub mod ids;
pub mod llm;
pub mod lockfile;
pub mod logging;
pub mod maintenance;
pub mod mcp;
pub mod memory;
pub mod policy;
pub mod residency;
pub mod server;
pub mod skills;
pub mod startup;
pub mod state;
pub mod store;
pub mod tools;
pub mod voice;

use std::sync::Arc;

pub use server::{Listener, ServeError};
pub use state::DaemonState;

/// How long after start-up's release the daemon releases unused memory once more.
const SETTLED_RELEASE_AFTER: std::time::Duration = std::time::Duration::from_secs(20);

/// Serve `state` on `listener` until `state.shutdown` is cancelled (signal, Shutdown RPC, or the
/// caller), then drain. Tells systemd READY once the socket answers.
pub async fn run(state: Arc<DaemonState>, listener: Listener) -> Result<(), ServeError> {
    // Signal handlers first: a SIGTERM right after READY must find them installed.
    server::spawn_signal_handler(Arc::clone(&state));
    // Background processes a killed predecessor left running are stopped before READY.
    state.runner.tool_services.processes.recover_orphans().await;
    let serving = server::serve(Arc::clone(&state), listener);
    // The listener is already bound: connections queue in the backlog until the server accepts,
    // so the socket answers from here on.
    let _ = sd_notify::notify(false, &[sd_notify::NotifyState::Ready]);
    tracing::info!(
        pid = std::process::id(),
        socket = %state.socket.display(),
        home = %state.home.dir.display(),
        "hermesd ready"
    );
    // The login environment for `terminal` is captured once per start, off the start-up path;
    // then start-up's pages go back to the system.
    let services = Arc::clone(&state.runner.tool_services);
    let settling = Arc::clone(&state.gateway);
    tokio::spawn(async move {
        services.refresh_login_env().await;
        // Connecting a chat platform runs more start-up code (the skills for its command
        // menu, the Bot API's types): released with the rest once it is done.
        settling.settled(std::time::Duration::from_secs(20)).await;
        if let Ok(released) = tokio::task::spawn_blocking(residency::release_unused_memory).await {
            tracing::debug!(?released, "start-up memory released");
        }
        // The platforms' first batches and handshakes (a Gateway's READY, command registration,
        // recovery) run once more after that: their pages go back once the daemon settled.
        tokio::time::sleep(SETTLED_RELEASE_AFTER).await;
        if let Ok(released) = tokio::task::spawn_blocking(residency::release_unused_memory).await {
            tracing::debug!(?released, "settled: unused memory released");
        }
    });
    tokio::spawn(agent::evict_idle_sessions(Arc::clone(&state.runner)));
    tokio::spawn(agent::deliver_process_reports(Arc::clone(&state.runner)));
    tokio::spawn(maintenance::auto_prune(Arc::clone(&state.runner)));
    tokio::spawn(maintenance::merge_indexes(Arc::clone(&state.runner)));
    tokio::spawn(maintenance::age_tool_results(Arc::clone(&state.runner)));
    tokio::spawn(cron::scheduler::run(Arc::clone(&state.cron)));
    tokio::spawn(cron::waiting::run(Arc::clone(&state.cron)));
    tokio::spawn(cron::retention::sweep(Arc::clone(&state.cron)));
    // MCP servers connect in the background, after READY: a slow or broken one delays nothing.
    if let Some(mcp) = state.runner.tool_services.mcp() {
        mcp.apply(&state.config().settings.mcp);
    }
    // Each platform connects in its own task: none delays READY or the others.
    let gateway = Arc::clone(&state.gateway);
    tokio::spawn(async move { gateway.start().await });
    if let Some(requests) = state.take_cron_requests() {
        tokio::spawn(cron::ops::serve(Arc::clone(&state.cron), requests));
    }
    let served = serving.await;
    if let Some(mcp) = state.runner.tool_services.mcp() {
        mcp.shutdown().await;
    }
    let browsers = state.runner.tool_services.browsers.close_all().await;
    if browsers > 0 {
        tracing::info!(browsers, "browsers closed");
    }
    let killed = state.runner.tool_services.processes.kill_all().await;
    if killed > 0 {
        tracing::info!(killed, "background processes stopped");
    }
    served
}
