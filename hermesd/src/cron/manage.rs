//! What users (through the Cron service) and the agent (through the `cronjob` tool) do to jobs:
//! add, edit, pause, resume, remove, run now — each a transaction that wakes the scheduler.

use super::Cron;
use std::sync::Arc;

use chrono::Utc;

use super::{
    jobs::{self, JobError, JobSpec},
    run::{self, Batch},
};
use crate::{
    ids,
    store::{self, CronJobRow, CronRunRow, Store, StoreError},
};

/// Why an operation on jobs failed.
#[derive(Debug, thiserror::Error)]
pub enum CronError {
    /// The request was wrong (bad schedule, unknown field, …): the user can fix it.
    #[error("{0}")]
    Invalid(#[from] JobError),
    /// No such job (or run).
    #[error("{0}")]
    NotFound(String),
    /// The job is busy (a run is in progress).
    #[error("{0}")]
    Busy(String),
    #[error("{0}")]
    Store(StoreError),
    /// The daemon is stopping.
    #[error("hermesd is stopping")]
    Stopping,
}

impl From<StoreError> for CronError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Refused(why) => Self::NotFound(why),
            other => Self::Store(other),
        }
    }
}

/// Store a new job and wake the scheduler.
pub async fn add(state: &Cron, spec: JobSpec) -> Result<CronJobRow, CronError> {
    let settings = state.control.settings();
    // On the blocking pool with the insert: checking the workdir touches the file system.
    let stored = state
        .runner
        .store
        .write(move |tx| {
            match jobs::new_job(&pinned(tx, spec), ids::hex12(), Utc::now(), &settings) {
                Ok(job) => store::insert_cron_job(tx, &job).map(Ok),
                Err(e) => Ok(Err(e)),
            }
        })
        .await??;
    tracing::info!(job = %stored.id, schedule = %stored.schedule, "cron job added");
    state.control.changed();
    Ok(stored)
}

/// The spec with its origin's chat written in (see [`super::delivery::pin_origin`]).
fn pinned(conn: &rusqlite::Connection, mut spec: JobSpec) -> JobSpec {
    spec.origin = spec
        .origin
        .map(|origin| super::delivery::pin_origin(conn, &origin));
    spec
}

/// The job `id` (or the newest one named so).
pub async fn get(store: &Store, id: &str) -> Result<CronJobRow, CronError> {
    let id = id.trim().to_string();
    Ok(store.read(move |conn| store::cron_job(conn, &id)).await?)
}

/// Change the named fields of a job.
pub async fn edit(
    state: &Cron,
    id: &str,
    spec: JobSpec,
    fields: Vec<String>,
) -> Result<CronJobRow, CronError> {
    let settings = state.control.settings();
    let id = id.trim().to_string();
    let edited = state
        .runner
        .store
        .write(move |tx| {
            let mut job = store::cron_job(tx, &id)?;
            if let Err(e) = jobs::apply_edit(&mut job, &spec, &fields, Utc::now(), &settings) {
                return Ok(Err(e));
            }
            store::update_cron_job(tx, &job).map(Ok)
        })
        .await??;
    state.control.changed();
    Ok(edited)
}

/// Pause a job (its runs in progress finish); `reason` is kept with it.
pub async fn pause(state: &Cron, id: &str, reason: &str) -> Result<CronJobRow, CronError> {
    let id = id.trim().to_string();
    let reason = Some(reason.trim().to_string()).filter(|r| !r.is_empty());
    let paused = state
        .runner
        .store
        .write(move |tx| {
            let mut job = store::cron_job(tx, &id)?;
            if job.state == "completed" {
                return Ok(job);
            }
            job.state = "paused".into();
            job.paused_reason = reason.or_else(|| Some("paused by the user".into()));
            // Resuming computes the next run from then.
            job.next_run_at = None;
            store::update_cron_job(tx, &job)
        })
        .await?;
    state.control.changed();
    Ok(paused)
}

/// Resume a paused job from the next slot after now.
pub async fn resume(state: &Cron, id: &str) -> Result<CronJobRow, CronError> {
    let settings = state.control.settings();
    let id = id.trim().to_string();
    let resumed = state
        .runner
        .store
        .write(move |tx| {
            let mut job = store::cron_job(tx, &id)?;
            if let Err(e) = jobs::resume(&mut job, Utc::now().timestamp_millis(), &settings) {
                return Ok(Err(e));
            }
            store::update_cron_job(tx, &job).map(Ok)
        })
        .await??;
    state.control.changed();
    Ok(resumed)
}

/// Remove a job and its run records (a run in progress finishes; its output file stays).
pub async fn remove(state: &Arc<Cron>, id: &str) -> Result<CronJobRow, CronError> {
    let job = get(&state.runner.store, id).await?;
    // Its finished runs go first, with their sessions and output files; a running run keeps
    // its row until the job row's removal cascades.
    super::retention::prune(state, super::retention::Scope::Everything(&job.id)).await?;
    let id = job.id;
    let removed = state
        .runner
        .store
        .write(move |tx| {
            let job = store::cron_job(tx, &id)?;
            store::delete_cron_job(tx, &job.id)?;
            Ok(job)
        })
        .await?;
    tracing::info!(job = %removed.id, "cron job removed");
    state.control.changed();
    Ok(removed)
}

/// The latest runs of a job.
pub async fn runs(store: &Store, id: &str, limit: u32) -> Result<Vec<CronRunRow>, CronError> {
    let job = get(store, id).await?;
    Ok(store
        .read(move |conn| store::cron_runs(conn, &job.id, limit))
        .await?)
}

/// Run a job now (paused and completed ones too), outside its schedule and its repeat count.
/// Returns the leased run, or with `wait` the closed one. The run belongs to the daemon: a
/// caller that goes away does not stop it.
pub async fn run_now(state: &Arc<Cron>, id: &str, wait: bool) -> Result<CronRunRow, CronError> {
    let id = id.trim().to_string();
    let run_id = format!("run_{}", ids::hex12());
    let leased = state
        .runner
        .store
        .write(move |tx| {
            let job = store::cron_job(tx, &id)?;
            if let Some(running) = store::running_cron_run(tx, &job.id)? {
                return Ok(Err(CronError::Busy(format!(
                    "job {} is running already (run {running}); see `hermesctl cron runs {}`",
                    job.id, job.id
                ))));
            }
            let slot = Utc::now().timestamp_millis();
            let run = store::lease_cron_run(tx, &run_id, &job.id, slot)?;
            store::mark_cron_job_running(tx, &job.id)?;
            Ok(run
                .map(|run| (job, run))
                .ok_or_else(|| CronError::Busy("a run was started this millisecond".into())))
        })
        .await??;
    let (job, run) = leased;
    tracing::info!(job = %job.id, run = %run.id, "cron run started by request");
    let batch = Batch {
        job,
        runs: vec![run.clone()],
        counts: false,
    };
    // A daemon that is stopping takes no new run; the leased row is closed as interrupted at
    // the next start, like any run the daemon stopped during.
    let Some(task) = state
        .runner
        .hub
        .spawn(run::execute(Arc::clone(state), batch))
    else {
        return Err(CronError::Stopping);
    };
    if !wait {
        return Ok(run);
    }
    let closed = task.await.map_err(|_| CronError::Stopping)?;
    closed.into_iter().next().ok_or(CronError::Stopping)
}
