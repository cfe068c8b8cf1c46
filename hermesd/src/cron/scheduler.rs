//! The scheduler: one timer (tokio-cron-scheduler, which checks the wall clock, so a suspended
//! machine is noticed on wake) armed for the earliest `next_run_at` in the database and re-armed
//! after every change. Due jobs are planned (on time, missed, caught up), advanced and leased in
//! one transaction before anything runs — a crash can lose a run, never repeat one — and their
//! runs go off as tasks bounded by the permits.

use super::Cron;
use std::{sync::Arc, time::Duration};

use chrono::Utc;
use tokio_cron_scheduler::{Job, JobScheduler};
use uuid::Uuid;

use super::{
    control::Control,
    jobs::{anchor_of, schedule_of},
    plan::{Missed, MissedPolicy, Plan, plan},
    run::{self, Batch},
};
use crate::{
    ids,
    store::{self, Advance, CronJobRow, CronRunRow, StoreError},
};

/// The timer: at most one one-shot job in tokio-cron-scheduler, for the earliest due time.
struct Timer {
    scheduler: JobScheduler,
    armed: Option<Uuid>,
}

impl Timer {
    async fn start() -> Result<Self, String> {
        let scheduler = JobScheduler::new()
            .await
            .map_err(|e| format!("cannot create the cron timer: {e}"))?;
        scheduler
            .start()
            .await
            .map_err(|e| format!("cannot start the cron timer: {e}"))?;
        Ok(Self {
            scheduler,
            armed: None,
        })
    }

    /// Fire `control`'s wake at `due` (epoch ms); `None` disarms.
    async fn arm(&mut self, due: Option<i64>, control: &Arc<Control>) {
        if let Some(old) = self.armed.take() {
            // A fired one-shot is gone already; removing it again is harmless.
            let _ = self.scheduler.remove(&old).await;
        }
        let Some(due) = due else { return };
        // The timer counts whole seconds from now: round up so it never fires before `due`.
        let wait_ms = (due - Utc::now().timestamp_millis()).max(0);
        let wait = Duration::from_secs(u64::try_from(wait_ms).unwrap_or(0).div_ceil(1000));
        let control = Arc::clone(control);
        let job = Job::new_one_shot_async(wait, move |_id, _scheduler| {
            let control = Arc::clone(&control);
            Box::pin(async move { control.changed() })
        });
        match job {
            Ok(job) => match self.scheduler.add(job).await {
                Ok(id) => self.armed = Some(id),
                Err(e) => tracing::error!(error = %e, "cannot arm the cron timer"),
            },
            Err(e) => tracing::error!(error = %e, "cannot arm the cron timer"),
        }
    }
}

/// Run the scheduler until the daemon stops.
pub async fn run(state: Arc<Cron>) {
    match state.runner.store.write(store::recover_cron_runs).await {
        Ok(interrupted) => {
            for run in &interrupted {
                tracing::warn!(job = %run.job_id, run = %run.id, "cron run interrupted by a restart; not repeated");
            }
        }
        Err(e) => tracing::error!(error = %e, "cannot recover cron runs"),
    }
    let mut timer = match Timer::start().await {
        Ok(timer) => timer,
        Err(e) => {
            tracing::error!(error = %e, "cron jobs will not run");
            return;
        }
    };
    loop {
        let next = match dispatch_due(&state).await {
            Ok(next) => next,
            Err(e) => {
                tracing::error!(error = %e, "cron: cannot read due jobs");
                // Try again in a minute rather than never.
                Some(Utc::now().timestamp_millis() + 60_000)
            }
        };
        timer.arm(next, &state.control).await;
        tokio::select! {
            () = state.runner.shutdown.cancelled() => break,
            () = state.control.woken() => {}
        }
    }
    let _ = timer.scheduler.shutdown().await;
}

/// Start every due job; returns the next due time.
async fn dispatch_due(state: &Arc<Cron>) -> Result<Option<i64>, StoreError> {
    let now = Utc::now().timestamp_millis();
    let due = state
        .runner
        .store
        .read(move |conn| store::due_cron_jobs(conn, now))
        .await?;
    for job in due {
        dispatch(state, job, now).await?;
    }
    state.runner.store.read(store::next_cron_due).await
}

fn time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

/// The record of slots that did not run.
fn missed_run(job: &CronJobRow, missed: &Missed, policy: MissedPolicy, now: i64) -> CronRunRow {
    let count = if missed.more {
        format!("{} or more runs", missed.count)
    } else if missed.count == 1 {
        "1 run".to_string()
    } else {
        format!("{} runs", missed.count)
    };
    let span = if missed.first == missed.last {
        format!("at {}", time(missed.first))
    } else {
        format!("from {} to {}", time(missed.first), time(missed.last))
    };
    CronRunRow {
        id: format!("run_{}", ids::hex12()),
        job_id: job.id.clone(),
        slot: missed.first,
        status: "missed".into(),
        started_at: None,
        ended_at: Some(now),
        error: Some(format!(
            "missed {count} {span}: hermesd was not running or the machine was asleep \
             (missed-run policy {})",
            policy.as_str()
        )),
        ..CronRunRow::default()
    }
}

/// Plan, advance and lease one due job, then start its runs.
async fn dispatch(state: &Arc<Cron>, job: CronJobRow, now: i64) -> Result<(), StoreError> {
    let Some(due) = job.next_run_at else {
        return Ok(());
    };
    let settings = state.control.settings();
    let schedule = match schedule_of(&job) {
        Ok(schedule) => schedule,
        Err(e) => return pause_broken(state, &job, e.to_string()).await,
    };
    let policy = MissedPolicy::parse(&job.missed_policy).unwrap_or(MissedPolicy::Skip);
    let zone = settings.zone_of(&job.timezone);
    let Plan {
        mut run,
        missed,
        next,
    } = plan(
        &schedule,
        zone,
        anchor_of(&job),
        due,
        now,
        policy,
        &settings,
    );
    if job.repeat_times > 0 {
        let left = usize::try_from(job.repeat_times - job.repeat_completed).unwrap_or(0);
        let drop = run.len().saturating_sub(left);
        run.drain(..drop);
    }
    let leases: Vec<CronRunRow> = run
        .iter()
        .map(|&slot| CronRunRow {
            id: format!("run_{}", ids::hex12()),
            job_id: job.id.clone(),
            slot,
            status: "running".into(),
            ..CronRunRow::default()
        })
        .collect();
    let missed_row = missed.as_ref().map(|m| missed_run(&job, m, policy, now));
    let advance = Advance {
        job_id: job.id.clone(),
        due,
        next_run_at: next,
        state: if !leases.is_empty() {
            "running"
        } else if next.is_none() {
            "completed"
        } else {
            "scheduled"
        }
        .into(),
        last_status: missed_row
            .as_ref()
            .filter(|_| leases.is_empty())
            .map(|_| "missed".to_string()),
        last_error: missed_row
            .as_ref()
            .filter(|_| leases.is_empty())
            .and_then(|r| r.error.clone()),
    };
    let to_lease = leases.clone();
    let applied = state
        .runner
        .store
        .write(move |tx| {
            if !store::advance_cron_job(tx, &advance)? {
                return Ok(None);
            }
            if let Some(row) = &missed_row {
                store::record_cron_run(tx, row)?;
            }
            let mut leased = Vec::new();
            for lease in &to_lease {
                if let Some(row) = store::lease_cron_run(tx, &lease.id, &lease.job_id, lease.slot)?
                {
                    leased.push(row);
                }
            }
            Ok(Some(leased))
        })
        .await?;
    let Some(leased) = applied else {
        return Ok(());
    };
    if let Some(m) = &missed {
        tracing::warn!(job = %job.id, missed = m.count, policy = policy.as_str(), "cron slots missed");
    }
    if !leased.is_empty() {
        let batch = Batch {
            job,
            runs: leased,
            counts: true,
        };
        // Tracked by the hub: a stopping daemon interrupts the run and waits for its record.
        drop(
            state
                .runner
                .hub
                .spawn(run::execute(Arc::clone(state), batch)),
        );
    }
    Ok(())
}

/// A job whose stored schedule cannot be read is paused with the reason, not retried forever.
async fn pause_broken(state: &Arc<Cron>, job: &CronJobRow, why: String) -> Result<(), StoreError> {
    tracing::error!(job = %job.id, error = %why, "cron job paused: unreadable schedule");
    let mut paused = job.clone();
    paused.state = "paused".into();
    paused.paused_reason = Some(why.clone());
    paused.last_error = Some(why);
    state
        .runner
        .store
        .write(move |tx| store::update_cron_job(tx, &paused).map(|_| ()))
        .await
}
