//! One platform's supervisor: take the machine-wide lock on its identity, connect, then poll
//! under a liveness watchdog (a poll that has not finished within its deadline is abandoned and
//! the connection is made again). Failures back off from 1 s doubling to 5 min, jittered; a
//! refused token is fatal and not retried; a conflict (another poller) is reported and backed
//! off like any failure, never looped on.

use std::{sync::Arc, time::Duration};

use super::{Gateway, Link, PlatformError, inbound, lock, recovery};

const FIRST_DELAY: Duration = Duration::from_secs(1);
const MAX_DELAY: Duration = Duration::from_secs(300);

/// The pause before the next attempt.
#[derive(Debug)]
pub struct Backoff {
    next: Duration,
}

impl Backoff {
    pub fn new() -> Self {
        Self { next: FIRST_DELAY }
    }

    pub fn reset(&mut self) {
        self.next = FIRST_DELAY;
    }

    /// The next pause: the current step, jittered to between half and all of it.
    pub fn next_delay(&mut self) -> Duration {
        let step = self.next;
        self.next = (self.next * 2).min(MAX_DELAY);
        step.mul_f64(0.5 + fastrand::f64() * 0.5)
    }
}

/// Why polling stopped.
enum End {
    Stopped,
    Failed(PlatformError),
    Deaf(Duration),
}

/// Run `link` until the daemon stops or its credentials are refused.
pub async fn supervise(gateway: Arc<Gateway>, link: Arc<Link>) {
    let mut backoff = Backoff::new();
    let mut recovered = false;
    // Start-up waits for each platform's first attempt, once.
    let mut first_attempt = true;
    let mut attempted = |gateway: &Gateway| {
        if std::mem::take(&mut first_attempt) {
            gateway.mark_settled();
        }
    };
    let platform = link.platform();
    let lock_path = lock::lock_path(
        gateway.runtime_dir.as_deref(),
        platform,
        link.adapter.identity(),
    );
    loop {
        if gateway.shutdown.is_cancelled() {
            return;
        }
        link.status.connecting();
        let (path, home) = (lock_path.clone(), gateway.home.clone());
        let taken = tokio::task::spawn_blocking(move || lock::acquire(&path, &home))
            .await
            .unwrap_or_else(|e| Err(format!("the lock task failed: {e}")));
        let held = match taken {
            Ok(held) => held,
            Err(e) => {
                tracing::warn!(platform, "{e}");
                attempted(&gateway);
                link.status.retrying(&e);
                if !pause(&gateway, backoff.next_delay()).await {
                    return;
                }
                continue;
            }
        };
        let commands = super::commands::menu(&gateway).await;
        if let Err(e) = link.adapter.connect(&commands).await {
            let message = e.to_string();
            attempted(&gateway);
            if matches!(e, PlatformError::Fatal(_)) {
                tracing::error!(platform, error = %message, "gateway: not retried until the configuration changes");
                link.status.fatal(&message);
                return;
            }
            tracing::warn!(platform, error = %message, "gateway: cannot connect");
            link.status.retrying(&message);
            drop(held);
            if !pause(&gateway, backoff.next_delay()).await {
                return;
            }
            continue;
        }
        link.status.connected();
        tracing::info!(platform, "gateway: connected");
        if !recovered {
            recovered = true;
            recovery::finish(&gateway, &link).await;
        }
        gateway.note_connected();
        attempted(&gateway);
        let end = poll(&gateway, &link, &mut backoff).await;
        drop(held);
        let message = match end {
            End::Stopped => return,
            End::Failed(PlatformError::Fatal(e)) => {
                link.status.fatal(&e);
                return;
            }
            End::Failed(e) => e.to_string(),
            End::Deaf(limit) => format!(
                "a poll did not finish within {} s; reconnecting",
                limit.as_secs()
            ),
        };
        tracing::warn!(platform, error = %message, "gateway: connection lost");
        link.status.retrying(&message);
        if !pause(&gateway, backoff.next_delay()).await {
            return;
        }
    }
}

/// Sleep `delay` unless the daemon stops first (false).
async fn pause(gateway: &Gateway, delay: Duration) -> bool {
    tokio::select! {
        () = gateway.shutdown.cancelled() => false,
        () = tokio::time::sleep(delay) => true,
    }
}

async fn poll(gateway: &Arc<Gateway>, link: &Arc<Link>, backoff: &mut Backoff) -> End {
    // The platform's own position confirms only what was stored, so it is where to start.
    let mut offset = None;
    let deadline = link.adapter.poll_deadline();
    loop {
        let next = link.adapter.next_batch(offset);
        let batch = tokio::select! {
            () = gateway.shutdown.cancelled() => return End::Stopped,
            polled = tokio::time::timeout(deadline, next) => match polled {
                Err(_) => return End::Deaf(deadline),
                Ok(Err(PlatformError::RateLimited(wait))) => {
                    if !pause(gateway, wait).await {
                        return End::Stopped;
                    }
                    continue;
                }
                Ok(Err(e)) => return End::Failed(e),
                Ok(Ok(batch)) => batch,
            },
        };
        backoff.reset();
        let next_offset = batch.next_offset;
        match inbound::take(gateway, link, batch).await {
            Ok(()) => offset = next_offset.or(offset),
            Err(e) => {
                // Not stored: the offset stays, so the platform delivers the batch again.
                return End::Failed(PlatformError::Unavailable(format!(
                    "the updates could not be stored: {e}"
                )));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_five_minutes_with_jitter() {
        let mut b = Backoff::new();
        let delays: Vec<Duration> = (0..12).map(|_| b.next_delay()).collect();
        assert!(delays[0] >= Duration::from_millis(500) && delays[0] <= FIRST_DELAY);
        assert!(delays[3] >= Duration::from_secs(4) && delays[3] <= Duration::from_secs(8));
        assert!(delays.iter().all(|d| *d <= MAX_DELAY));
        assert!(delays[11] >= MAX_DELAY / 2);
        b.reset();
        assert!(b.next_delay() <= FIRST_DELAY);
    }
}
