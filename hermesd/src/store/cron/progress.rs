//! A job's runs as they happen: the scheduler advancing a due job (and leasing its runs in the
//! same transaction), a run starting, getting its session and finishing, and recovery at start.

use rusqlite::{OptionalExtension, Transaction, params};

use super::{CronRunRow, cron_run};
use crate::store::{StoreError, now_ms};

/// What the scheduler decided for a due job, written at once.
#[derive(Debug, Clone, Default)]
pub struct Advance {
    pub job_id: String,
    /// The slot it was due for (guards against a concurrent change).
    pub due: i64,
    pub next_run_at: Option<i64>,
    /// scheduled | running | completed
    pub state: String,
    /// Set when slots were missed and nothing runs.
    pub last_status: Option<String>,
    pub last_error: Option<String>,
}

/// Apply `advance` if the job is still scheduled for the slot it was due at; false otherwise (it
/// was paused, edited or removed meanwhile, and nothing is written).
pub fn advance_cron_job(tx: &Transaction<'_>, advance: &Advance) -> Result<bool, StoreError> {
    let changed = tx
        .execute(
            "UPDATE cron_jobs SET next_run_at = ?3, state = ?4,
                 last_status = coalesce(?5, last_status), last_error = coalesce(?6, last_error),
                 last_run_at = CASE WHEN ?5 IS NULL THEN last_run_at ELSE ?7 END, updated_at = ?7
             WHERE id = ?1 AND state = 'scheduled' AND next_run_at = ?2",
            params![
                advance.job_id,
                advance.due,
                advance.next_run_at,
                advance.state,
                advance.last_status,
                advance.last_error,
                now_ms()
            ],
        )
        .map_err(StoreError::sql("advance cron job"))?;
    Ok(changed == 1)
}

/// Mark a scheduled job as running (a run started by hand); other states stay.
pub fn mark_cron_job_running(tx: &Transaction<'_>, job_id: &str) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE cron_jobs SET state = 'running', updated_at = ?2
         WHERE id = ?1 AND state = 'scheduled'",
        params![job_id, now_ms()],
    )
    .map_err(StoreError::sql("mark cron job running"))?;
    Ok(())
}

/// The run of `job_id` in progress, if any.
pub fn running_cron_run(
    conn: &rusqlite::Connection,
    job_id: &str,
) -> Result<Option<String>, StoreError> {
    conn.query_row(
        "SELECT id FROM cron_runs WHERE job_id = ?1 AND status = 'running' LIMIT 1",
        [job_id],
        |row| row.get(0),
    )
    .optional()
    .map_err(StoreError::sql("find the running cron run"))
}

/// A leased run got its permit and starts now.
pub fn cron_run_started(tx: &Transaction<'_>, run_id: &str) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE cron_runs SET started_at = ?2 WHERE id = ?1",
        params![run_id, now_ms()],
    )
    .map_err(StoreError::sql("mark cron run started"))?;
    Ok(())
}

/// A run's session exists: link it, so `runs` shows it while the run goes on.
pub fn link_cron_run_session(
    tx: &Transaction<'_>,
    run_id: &str,
    session_id: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE cron_runs SET session_id = ?2 WHERE id = ?1",
        params![run_id, session_id],
    )
    .map_err(StoreError::sql("link cron run to its session"))?;
    Ok(())
}

/// A run ended: close its record and update its job — last run, status, error, failure streak,
/// repeat count (when it `counts`), and, for the last run of a batch, the job's state (a job
/// that was `running` goes back to `scheduled`, or `completed` when its repeats are used up or
/// its schedule has no next run). Returns the closed run.
pub fn finish_cron_job_run(
    tx: &Transaction<'_>,
    run: &CronRunRow,
    counts: bool,
    last_of_batch: bool,
) -> Result<Option<CronRunRow>, StoreError> {
    super::finish_cron_run(tx, run)?;
    let counted = i64::from(counts);
    tx.execute(
        "UPDATE cron_jobs SET
             last_run_at = ?2, last_status = ?3, last_error = ?4,
             failure_streak = CASE WHEN ?3 = 'ok' THEN 0 ELSE failure_streak + 1 END,
             repeat_completed = repeat_completed + ?5,
             state = CASE
                 WHEN state <> 'running' OR NOT ?6 THEN state
                 WHEN (repeat_times > 0 AND repeat_completed + ?5 >= repeat_times)
                      OR next_run_at IS NULL THEN 'completed'
                 ELSE 'scheduled' END,
             next_run_at = CASE
                 WHEN repeat_times > 0 AND repeat_completed + ?5 >= repeat_times THEN NULL
                 ELSE next_run_at END,
             updated_at = ?7
         WHERE id = ?1",
        params![
            run.job_id,
            run.started_at.unwrap_or_else(now_ms),
            run.status,
            run.error,
            counted,
            last_of_batch,
            now_ms()
        ],
    )
    .map_err(StoreError::sql("record the cron run on its job"))?;
    cron_run(tx, &run.id).map(Some).or_else(|e| match e {
        StoreError::Refused(_) => Ok(None),
        other => Err(other),
    })
}

/// At start: runs still leased become `interrupted` (never run again) and their jobs leave the
/// `running` state. Returns the interrupted runs.
pub fn recover_cron_runs(tx: &Transaction<'_>) -> Result<Vec<CronRunRow>, StoreError> {
    let interrupted = super::interrupt_leased_runs(tx)?;
    for run in &interrupted {
        tx.execute(
            "UPDATE cron_jobs SET last_status = 'interrupted', last_error = ?2,
                 failure_streak = failure_streak + 1
             WHERE id = ?1",
            params![
                run.job_id,
                "hermesd stopped while this job was running; the run was not repeated"
            ],
        )
        .map_err(StoreError::sql("record an interrupted cron run"))?;
    }
    tx.execute(
        "UPDATE cron_jobs SET state = CASE
             WHEN (repeat_times > 0 AND repeat_completed >= repeat_times) OR next_run_at IS NULL
             THEN 'completed' ELSE 'scheduled' END
         WHERE state = 'running'",
        [],
    )
    .map_err(StoreError::sql("reset running cron jobs"))?;
    Ok(interrupted)
}
