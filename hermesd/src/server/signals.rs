//! Signals: SIGTERM and SIGINT stop the daemon gracefully; SIGHUP reloads the configuration.

use std::sync::Arc;

use tokio::signal::unix::{SignalKind, signal};

use crate::state::DaemonState;

/// Reload as systemd's `Type=notify-reload` expects: RELOADING=1 (with the monotonic time), the
/// reload, then READY=1 whether or not the new configuration was accepted.
async fn reload_on_hangup(state: &Arc<DaemonState>) {
    let mut reloading = vec![sd_notify::NotifyState::Reloading];
    if let Ok(now) = sd_notify::NotifyState::monotonic_usec_now() {
        reloading.push(now);
    }
    let _ = sd_notify::notify(false, &reloading);
    let worker = Arc::clone(state);
    match tokio::task::spawn_blocking(move || worker.reload()).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "SIGHUP reload refused; keeping the running configuration");
        }
        Err(e) => tracing::error!(error = %e, "reload task failed"),
    }
    let _ = sd_notify::notify(false, &[sd_notify::NotifyState::Ready]);
}

/// Install the handlers now (so a signal that arrives right after this call is caught) and start
/// the task that acts on them.
pub fn spawn(state: Arc<DaemonState>) {
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
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = term.recv() => { tracing::info!("SIGTERM received"); break; }
                _ = int.recv() => { tracing::info!("SIGINT received"); break; }
                _ = hup.recv() => reload_on_hangup(&state).await,
                _ = state.shutdown.cancelled() => return,
            }
        }
        state.shutdown.cancel();
    });
}
