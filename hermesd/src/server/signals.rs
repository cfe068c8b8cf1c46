//! Signals: SIGTERM and SIGINT stop the daemon gracefully; SIGHUP reloads the configuration.

use std::sync::Arc;

use tokio::signal::unix::{SignalKind, signal};

use crate::state::DaemonState;

/// Start the signal-handling task.
pub fn spawn(state: Arc<DaemonState>) {
    tokio::spawn(async move {
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) else {
            tracing::error!(
                "cannot install signal handlers; stop hermesd with `hermesctl daemon stop`"
            );
            return;
        };
        loop {
            tokio::select! {
                _ = term.recv() => { tracing::info!("SIGTERM received"); break; }
                _ = int.recv() => { tracing::info!("SIGINT received"); break; }
                _ = hup.recv() => {
                    let state = Arc::clone(&state);
                    let result = tokio::task::spawn_blocking(move || state.reload()).await;
                    match result {
                        Ok(Ok(_)) => {}
                        Ok(Err(e)) => tracing::warn!(error = %e, "SIGHUP reload refused; keeping the running configuration"),
                        Err(e) => tracing::error!(error = %e, "reload task failed"),
                    }
                }
                _ = state.shutdown.cancelled() => return,
            }
        }
        state.shutdown.cancel();
    });
}
