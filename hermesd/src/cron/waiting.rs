//! Results that waited for their platform: when a platform connects (or a run leaves a delivery
//! waiting while it is connected), each waiting delivery for it is sent once, oldest first. A
//! delivery is taken in the transaction that records its message in the outbox, so a crash or
//! a second pass never sends it twice; one the platform refuses for good is recorded with the
//! reason. Deliveries that wait longer than 7 days, or beyond 10,000, give up, hourly.

use std::{sync::Arc, time::Duration};

use super::{Cron, delivery};
use crate::store::{self, PendingDelivery, StoreError};
use crate::tools::messenger::{AlsoStore, Destination, Messenger, SendError};

/// Waiting deliveries read at a time.
const BATCH: usize = 64;
/// How often deliveries that waited too long give up.
const EXPIRY_EVERY: Duration = Duration::from_secs(3600);

/// Deliver waiting results until the daemon stops.
pub async fn run(state: Arc<Cron>) {
    let messenger = state.runner.tool_services.messenger();
    let mut connections = messenger.connections();
    let mut connections_open = true;
    let mut expiry = tokio::time::interval(EXPIRY_EVERY);
    loop {
        tokio::select! {
            changed = connections.changed(), if connections_open => {
                connections_open = changed.is_ok();
            }
            () = state.control.deliveries_added() => {}
            _ = expiry.tick() => expire(&state).await,
            () = state.runner.shutdown.cancelled() => return,
        }
        deliver_waiting(&state, messenger.as_ref()).await;
    }
}

async fn expire(state: &Cron) {
    let now = chrono::Utc::now().timestamp_millis();
    match state
        .runner
        .store
        .write(move |tx| store::expire_pending_deliveries(tx, now))
        .await
    {
        Ok(0) => {}
        Ok(gone) => tracing::warn!(gone, "cron: deliveries that waited too long gave up"),
        Err(e) => tracing::warn!(error = %e, "cron: cannot expire waiting deliveries"),
    }
}

/// One pass: every waiting delivery of every connected platform. Returns how many went.
pub async fn deliver_waiting(state: &Cron, messenger: &dyn Messenger) -> usize {
    let waiting = match state.runner.store.read(store::pending_platforms).await {
        Ok(platforms) => platforms,
        Err(e) => {
            tracing::warn!(error = %e, "cron: cannot read waiting deliveries");
            return 0;
        }
    };
    if waiting.is_empty() {
        return 0;
    }
    let connected: Vec<String> = messenger
        .targets()
        .await
        .into_iter()
        .filter(|p| p.connected)
        .map(|p| p.platform)
        .collect();
    let mut sent = 0;
    for platform in waiting.iter().filter(|p| connected.contains(p)) {
        sent += deliver_platform(state, messenger, platform).await;
    }
    sent
}

async fn deliver_platform(state: &Cron, messenger: &dyn Messenger, platform: &str) -> usize {
    let mut after: Option<(i64, String, String)> = None;
    let mut sent = 0;
    loop {
        let (wanted, cursor) = (platform.to_string(), after.clone());
        let rows = state
            .runner
            .store
            .read(move |conn| store::pending_deliveries(conn, &wanted, cursor.as_ref(), BATCH))
            .await;
        let rows = match rows {
            Ok(rows) if rows.is_empty() => return sent,
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!(platform, error = %e, "cron: cannot read waiting deliveries");
                return sent;
            }
        };
        for row in rows {
            after = Some((row.created_at, row.run_id.clone(), row.target.clone()));
            match deliver_one(state, messenger, row).await {
                Step::Sent => sent += 1,
                Step::Skipped => {}
                // The platform went away again: the rest waits for the next connection.
                Step::Unavailable => return sent,
            }
        }
    }
}

enum Step {
    Sent,
    Skipped,
    Unavailable,
}

async fn deliver_one(state: &Cron, messenger: &dyn Messenger, row: PendingDelivery) -> Step {
    let Some(text) = text_of(state, &row).await else {
        give_up(state, &row, "the run is no longer kept", None).await;
        return Step::Skipped;
    };
    let to = match Destination::parse(&row.target) {
        Ok(to) => to,
        Err(e) => {
            give_up(state, &row, &e, None).await;
            return Step::Skipped;
        }
    };
    let platform = to.platform.clone();
    let said = format!("delivered to {} once {platform} connected", row.target);
    let (run_id, target, taken) = (row.run_id.clone(), row.target.clone(), said.clone());
    let also: AlsoStore =
        Box::new(move |tx| store::take_pending_delivery(tx, &run_id, &target, &taken));
    match messenger.send(&to, &text, Some(also)).await {
        Ok(_) => {
            tracing::info!(run = %row.run_id, target = %row.target, "cron: a waiting result was delivered");
            Step::Sent
        }
        Err(SendError::Unavailable(_)) => Step::Unavailable,
        Err(SendError::Refused(why)) => {
            // Refused before it was recorded (the row still waits) or by the platform after
            // (the row was taken with the clause `said`, which now says why it did not go).
            give_up(state, &row, &why, Some(&said)).await;
            Step::Skipped
        }
    }
}

/// The message: as stored, or rebuilt from a run recorded before deliveries waited.
async fn text_of(state: &Cron, row: &PendingDelivery) -> Option<String> {
    if let Some(text) = &row.text {
        return Some(text.clone());
    }
    let run_id = row.run_id.clone();
    let run = state
        .runner
        .store
        .read(move |conn| store::run_for_delivery(conn, &run_id))
        .await
        .ok()??;
    let job = delivery::Job {
        id: &run.job_id,
        name: &run.job_name,
        deliver: "",
        origin: None,
        wrap: state.control.settings().wrap_response,
    };
    let outcome = delivery::Outcome {
        ok: run.status == "ok",
        answer: &run.answer,
        error: run.error.as_deref(),
    };
    Some(delivery::message(job, outcome))
}

/// Stop waiting and record why; when the row was already taken with the clause `taken`, that
/// clause is corrected instead.
async fn give_up(state: &Cron, row: &PendingDelivery, why: &str, taken: Option<&str>) {
    let (run_id, target) = (row.run_id.clone(), row.target.clone());
    let failed = format!("not delivered: {why} (for {target})");
    let taken = taken.map(str::to_string);
    let recorded = state
        .runner
        .store
        .write(
            move |tx| match store::take_pending_delivery(tx, &run_id, &target, &failed) {
                Err(StoreError::Refused(_)) if taken.is_some() => {
                    let taken = taken.unwrap_or_default();
                    store::amend_cron_delivery(tx, &run_id, &taken, &failed)
                }
                other => other,
            },
        )
        .await;
    if let Err(e) = recorded {
        tracing::warn!(run = %row.run_id, error = %e, "cron: cannot record a delivery given up");
    }
}
