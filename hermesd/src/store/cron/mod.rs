//! Cron jobs and their runs (`cron_jobs`, `cron_runs`). A run row is written — and so leased —
//! before the run starts: `(job_id, slot)` is unique, so a slot can never run twice, and a row
//! still `running` when the daemon starts is a run a crash interrupted.

use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

use super::{StoreError, now_ms};

mod pending;
mod progress;

pub use pending::{
    PENDING_MAX_AGE_MS, PENDING_MAX_ROWS, PENDING_MIGRATION, PendingDelivery, RunForDelivery,
    add_pending_delivery, amend_cron_delivery, expire_pending_deliveries, pending_deliveries,
    pending_platforms, run_for_delivery, take_pending_delivery,
};

pub use progress::{
    Advance, advance_cron_job, cron_run_started, finish_cron_job_run, link_cron_run_session,
    mark_cron_job_running, recover_cron_runs, running_cron_run,
};

/// A job as stored.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CronJobRow {
    pub id: String,
    pub name: String,
    pub prompt: String,
    /// As the user wrote it.
    pub schedule: String,
    /// The parsed schedule, as the scheduler stores it (JSON).
    pub schedule_json: String,
    /// IANA zone; empty means the configured or system zone.
    pub timezone: String,
    pub skills: Vec<String>,
    pub model: String,
    pub toolsets: Vec<String>,
    pub workdir: String,
    /// local | origin | <platform>:<chat>
    pub deliver: String,
    /// Where the job was created from (JSON), for `origin` delivery.
    pub origin: Option<String>,
    /// 0 = forever.
    pub repeat_times: i64,
    pub repeat_completed: i64,
    /// scheduled | paused | running | completed
    pub state: String,
    pub paused_reason: Option<String>,
    /// skip | once | all
    pub missed_policy: String,
    pub next_run_at: Option<i64>,
    pub last_run_at: Option<i64>,
    pub last_status: Option<String>,
    pub last_error: Option<String>,
    pub failure_streak: i64,
    pub created_at: i64,
    /// A pre-run script, relative to `$HERMES_HOME/scripts/`; empty: none.
    pub script: String,
    /// The script's output is the result (no model call).
    pub no_agent: bool,
    /// The job's own provider and server; empty: the configured ones.
    pub provider: String,
    pub base_url: String,
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CronRunRow {
    pub id: String,
    pub job_id: String,
    /// The slot it ran for (epoch ms): unique per job.
    pub slot: i64,
    /// ok | failed | timed_out | missed | skipped | interrupted | running
    pub status: String,
    pub started_at: Option<i64>,
    pub ended_at: Option<i64>,
    pub error: Option<String>,
    pub output_path: Option<String>,
    pub session_id: Option<String>,
    pub delivery: Option<String>,
}

const JOB_COLUMNS: &str = "id, name, prompt, schedule, schedule_json, timezone, skills, model, \
    toolsets, workdir, deliver, origin, repeat_times, repeat_completed, state, paused_reason, \
    missed_policy, next_run_at, last_run_at, last_status, last_error, failure_streak, created_at, \
    script, no_agent, provider, base_url";

/// Migration 12: a job's pre-run script, its no-agent mode, and its own provider and server.
pub const SCRIPT_MIGRATION: &str = r#"
ALTER TABLE cron_jobs ADD COLUMN script TEXT NOT NULL DEFAULT '';
ALTER TABLE cron_jobs ADD COLUMN no_agent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cron_jobs ADD COLUMN provider TEXT NOT NULL DEFAULT '';
ALTER TABLE cron_jobs ADD COLUMN base_url TEXT NOT NULL DEFAULT '';
"#;

const RUN_COLUMNS: &str =
    "id, job_id, slot, status, started_at, ended_at, error, output_path, session_id, delivery";

fn list(text: String) -> Vec<String> {
    serde_json::from_str(&text).unwrap_or_default()
}

fn job_from_row(row: &Row<'_>) -> rusqlite::Result<CronJobRow> {
    Ok(CronJobRow {
        id: row.get(0)?,
        name: row.get(1)?,
        prompt: row.get(2)?,
        schedule: row.get(3)?,
        schedule_json: row.get(4)?,
        timezone: row.get(5)?,
        skills: list(row.get(6)?),
        model: row.get(7)?,
        toolsets: list(row.get(8)?),
        workdir: row.get(9)?,
        deliver: row.get(10)?,
        origin: row.get(11)?,
        repeat_times: row.get(12)?,
        repeat_completed: row.get(13)?,
        state: row.get(14)?,
        paused_reason: row.get(15)?,
        missed_policy: row.get(16)?,
        next_run_at: row.get(17)?,
        last_run_at: row.get(18)?,
        last_status: row.get(19)?,
        last_error: row.get(20)?,
        failure_streak: row.get(21)?,
        created_at: row.get(22)?,
        script: row.get(23)?,
        no_agent: row.get(24)?,
        provider: row.get(25)?,
        base_url: row.get(26)?,
    })
}

fn run_from_row(row: &Row<'_>) -> rusqlite::Result<CronRunRow> {
    Ok(CronRunRow {
        id: row.get(0)?,
        job_id: row.get(1)?,
        slot: row.get(2)?,
        status: row.get(3)?,
        started_at: row.get(4)?,
        ended_at: row.get(5)?,
        error: row.get(6)?,
        output_path: row.get(7)?,
        session_id: row.get(8)?,
        delivery: row.get(9)?,
    })
}

fn json_list(items: &[String]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".into())
}

/// A job's fields in the order of the INSERT and UPDATE statements (`?1`..`?27`, the last
/// being the time of the write, which is also a new job's `created_at`).
fn job_values(job: &CronJobRow, now: i64) -> Vec<rusqlite::types::Value> {
    use rusqlite::types::Value;
    vec![
        job.id.clone().into(),
        job.name.clone().into(),
        job.prompt.clone().into(),
        job.schedule.clone().into(),
        job.schedule_json.clone().into(),
        job.timezone.clone().into(),
        json_list(&job.skills).into(),
        job.model.clone().into(),
        json_list(&job.toolsets).into(),
        job.workdir.clone().into(),
        job.deliver.clone().into(),
        job.origin.clone().into(),
        job.repeat_times.into(),
        job.repeat_completed.into(),
        job.state.clone().into(),
        job.paused_reason.clone().into(),
        job.missed_policy.clone().into(),
        job.next_run_at.into(),
        job.last_run_at.into(),
        job.last_status.clone().into(),
        job.last_error.clone().into(),
        job.failure_streak.into(),
        job.script.clone().into(),
        Value::Integer(i64::from(job.no_agent)),
        job.provider.clone().into(),
        job.base_url.clone().into(),
        Value::Integer(now),
    ]
}

/// Store a new job (its id chosen by the caller); `created_at` is now.
pub fn insert_cron_job(tx: &Transaction<'_>, job: &CronJobRow) -> Result<CronJobRow, StoreError> {
    let now = now_ms();
    tx.execute(
        &format!(
            "INSERT INTO cron_jobs ({JOB_COLUMNS}, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                     ?18, ?19, ?20, ?21, ?22, ?27, ?23, ?24, ?25, ?26, ?27)"
        ),
        rusqlite::params_from_iter(job_values(job, now)),
    )
    .map_err(|e| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::ConstraintViolation) => {
            StoreError::Refused(format!("a cron job `{}` exists already", job.id))
        }
        _ => StoreError::Sql {
            context: "add cron job",
            source: e,
        },
    })?;
    cron_job(tx, &job.id)
}

/// The job `id` (or the one named so).
pub fn cron_job(conn: &Connection, id: &str) -> Result<CronJobRow, StoreError> {
    conn.query_row(
        &format!(
            "SELECT {JOB_COLUMNS} FROM cron_jobs WHERE id = ?1 OR name = ?1
             ORDER BY id = ?1 DESC, created_at DESC LIMIT 1"
        ),
        [id],
        job_from_row,
    )
    .optional()
    .map_err(StoreError::sql("read cron job"))?
    .ok_or_else(|| StoreError::Refused(format!("no cron job `{id}` (see `hermesctl cron list`)")))
}

/// Every job, soonest next run first (paused and completed ones last).
pub fn cron_jobs(conn: &Connection) -> Result<Vec<CronJobRow>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {JOB_COLUMNS} FROM cron_jobs
             ORDER BY next_run_at IS NULL, next_run_at, created_at"
        ))
        .map_err(StoreError::sql("list cron jobs"))?;
    let rows = stmt
        .query_map([], job_from_row)
        .map_err(StoreError::sql("list cron jobs"))?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("list cron jobs"))
}

/// Replace a job's stored fields with `job`'s (the id stays).
pub fn update_cron_job(tx: &Transaction<'_>, job: &CronJobRow) -> Result<CronJobRow, StoreError> {
    let changed = tx
        .execute(
            "UPDATE cron_jobs SET name = ?2, prompt = ?3, schedule = ?4, schedule_json = ?5,
                 timezone = ?6, skills = ?7, model = ?8, toolsets = ?9, workdir = ?10,
                 deliver = ?11, origin = ?12, repeat_times = ?13, repeat_completed = ?14,
                 state = ?15, paused_reason = ?16, missed_policy = ?17, next_run_at = ?18,
                 last_run_at = ?19, last_status = ?20, last_error = ?21, failure_streak = ?22,
                 script = ?23, no_agent = ?24, provider = ?25, base_url = ?26, updated_at = ?27
             WHERE id = ?1",
            rusqlite::params_from_iter(job_values(job, now_ms())),
        )
        .map_err(StoreError::sql("update cron job"))?;
    if changed == 0 {
        return Err(StoreError::Refused(format!("no cron job `{}`", job.id)));
    }
    cron_job(tx, &job.id)
}

/// Remove a job and its run records; false when there was none.
pub fn delete_cron_job(tx: &Transaction<'_>, id: &str) -> Result<bool, StoreError> {
    tx.execute("DELETE FROM cron_jobs WHERE id = ?1", [id])
        .map(|n| n > 0)
        .map_err(StoreError::sql("remove cron job"))
}

/// The soonest next run of a scheduled job, if any (what the scheduler's timer waits for).
pub fn next_cron_due(conn: &Connection) -> Result<Option<i64>, StoreError> {
    conn.query_row(
        "SELECT min(next_run_at) FROM cron_jobs WHERE state = 'scheduled'",
        [],
        |row| row.get(0),
    )
    .map_err(StoreError::sql("find the next cron run"))
}

/// Scheduled jobs due at `now` (next run at or before it), soonest first.
pub fn due_cron_jobs(conn: &Connection, now: i64) -> Result<Vec<CronJobRow>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {JOB_COLUMNS} FROM cron_jobs
             WHERE state = 'scheduled' AND next_run_at <= ?1 ORDER BY next_run_at"
        ))
        .map_err(StoreError::sql("find due cron jobs"))?;
    let rows = stmt
        .query_map([now], job_from_row)
        .map_err(StoreError::sql("find due cron jobs"))?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("find due cron jobs"))
}

/// Lease the run of `job_id` for `slot`: a `running` row, written before the run starts.
/// `None` when that slot has a run already (it never runs twice).
pub fn lease_cron_run(
    tx: &Transaction<'_>,
    run_id: &str,
    job_id: &str,
    slot: i64,
) -> Result<Option<CronRunRow>, StoreError> {
    let inserted = tx
        .execute(
            "INSERT OR IGNORE INTO cron_runs (id, job_id, slot, status, started_at)
             VALUES (?1, ?2, ?3, 'running', ?4)",
            params![run_id, job_id, slot, now_ms()],
        )
        .map_err(StoreError::sql("lease cron run"))?;
    if inserted == 0 {
        return Ok(None);
    }
    cron_run(tx, run_id).map(Some)
}

/// Record a slot that did not run (missed, skipped) without a lease.
pub fn record_cron_run(tx: &Transaction<'_>, run: &CronRunRow) -> Result<bool, StoreError> {
    tx.execute(
        "INSERT OR IGNORE INTO cron_runs
           (id, job_id, slot, status, started_at, ended_at, error, output_path, session_id, delivery)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            run.id,
            run.job_id,
            run.slot,
            run.status,
            run.started_at,
            run.ended_at,
            run.error,
            run.output_path,
            run.session_id,
            run.delivery
        ],
    )
    .map(|n| n > 0)
    .map_err(StoreError::sql("record cron run"))
}

/// Close a leased run with its outcome.
pub fn finish_cron_run(tx: &Transaction<'_>, run: &CronRunRow) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE cron_runs SET status = ?2, ended_at = ?3, error = ?4, output_path = ?5,
             session_id = ?6, delivery = ?7
         WHERE id = ?1",
        params![
            run.id,
            run.status,
            run.ended_at.unwrap_or_else(now_ms),
            run.error,
            run.output_path,
            run.session_id,
            run.delivery
        ],
    )
    .map_err(StoreError::sql("finish cron run"))?;
    Ok(())
}

/// Runs still `running` (at start-up: runs a crash or restart cut short) become `interrupted`;
/// returns them.
pub fn interrupt_leased_runs(tx: &Transaction<'_>) -> Result<Vec<CronRunRow>, StoreError> {
    let leased: Vec<CronRunRow> = {
        let mut stmt = tx
            .prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM cron_runs WHERE status = 'running'"
            ))
            .map_err(StoreError::sql("find leased cron runs"))?;
        let rows = stmt
            .query_map([], run_from_row)
            .map_err(StoreError::sql("find leased cron runs"))?;
        rows.collect::<Result<_, _>>()
            .map_err(StoreError::sql("find leased cron runs"))?
    };
    tx.execute(
        "UPDATE cron_runs SET status = 'interrupted', ended_at = ?1,
             error = 'the daemon stopped while this run was in progress; it was not run again'
         WHERE status = 'running'",
        [now_ms()],
    )
    .map_err(StoreError::sql("mark interrupted cron runs"))?;
    Ok(leased)
}

/// One run.
pub fn cron_run(conn: &Connection, id: &str) -> Result<CronRunRow, StoreError> {
    conn.query_row(
        &format!("SELECT {RUN_COLUMNS} FROM cron_runs WHERE id = ?1"),
        [id],
        run_from_row,
    )
    .optional()
    .map_err(StoreError::sql("read cron run"))?
    .ok_or_else(|| StoreError::Refused(format!("no cron run `{id}`")))
}

/// The latest runs of a job, newest first; `limit` 0 means 20.
pub fn cron_runs(
    conn: &Connection,
    job_id: &str,
    limit: u32,
) -> Result<Vec<CronRunRow>, StoreError> {
    let limit = if limit == 0 { 20 } else { i64::from(limit) };
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {RUN_COLUMNS} FROM cron_runs WHERE job_id = ?1
             ORDER BY slot DESC, started_at DESC LIMIT ?2"
        ))
        .map_err(StoreError::sql("list cron runs"))?;
    let rows = stmt
        .query_map(params![job_id, limit], run_from_row)
        .map_err(StoreError::sql("list cron runs"))?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("list cron runs"))
}

/// The table definitions (schema migration 7).
#[rustfmt::skip]
pub const CRON_MIGRATION: &str = r#"
    CREATE TABLE cron_jobs (
        id               TEXT PRIMARY KEY,
        name             TEXT NOT NULL,
        prompt           TEXT NOT NULL,
        schedule         TEXT NOT NULL,
        schedule_json    TEXT NOT NULL,
        timezone         TEXT NOT NULL DEFAULT '',
        skills           TEXT NOT NULL DEFAULT '[]',
        model            TEXT NOT NULL DEFAULT '',
        toolsets         TEXT NOT NULL DEFAULT '[]',
        workdir          TEXT NOT NULL DEFAULT '',
        deliver          TEXT NOT NULL DEFAULT 'local',
        origin           TEXT,
        repeat_times     INTEGER NOT NULL DEFAULT 0,
        repeat_completed INTEGER NOT NULL DEFAULT 0,
        state            TEXT NOT NULL DEFAULT 'scheduled'
                         CHECK (state IN ('scheduled', 'paused', 'running', 'completed')),
        paused_reason    TEXT,
        missed_policy    TEXT NOT NULL DEFAULT 'skip' CHECK (missed_policy IN ('skip', 'once', 'all')),
        next_run_at      INTEGER,
        last_run_at      INTEGER,
        last_status      TEXT,
        last_error       TEXT,
        failure_streak   INTEGER NOT NULL DEFAULT 0,
        created_at       INTEGER NOT NULL,
        updated_at       INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX cron_jobs_due ON cron_jobs (next_run_at) WHERE state = 'scheduled';

    CREATE TABLE cron_runs (
        id          TEXT PRIMARY KEY,
        job_id      TEXT NOT NULL REFERENCES cron_jobs(id) ON DELETE CASCADE,
        slot        INTEGER NOT NULL,
        status      TEXT NOT NULL CHECK (status IN
                    ('ok', 'failed', 'timed_out', 'missed', 'skipped', 'interrupted', 'running')),
        started_at  INTEGER,
        ended_at    INTEGER,
        error       TEXT,
        output_path TEXT,
        session_id  TEXT,
        delivery    TEXT,
        UNIQUE (job_id, slot)
    ) WITHOUT ROWID;
    CREATE INDEX cron_runs_running ON cron_runs (status) WHERE status = 'running';
"#;

/// A run pruned by [`prune_cron_runs`]: what it left outside its row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrunedRun {
    pub output_path: Option<String>,
    pub session_id: Option<String>,
}

/// Delete the finished runs of `job_id` (every job when `None`) beyond the newest `keep` of
/// each job (0: no count bound) or that ended before `ended_before_ms` (0: no age bound).
/// Running runs are never touched. Returns what the deleted runs left: output files, sessions.
pub fn prune_cron_runs(
    tx: &Transaction<'_>,
    job_id: Option<&str>,
    keep: usize,
    ended_before_ms: i64,
) -> Result<Vec<PrunedRun>, StoreError> {
    let keep = if keep == 0 {
        -1
    } else {
        keep.min(i64::MAX as usize) as i64
    };
    let mut stmt = tx
        .prepare_cached(
            "DELETE FROM cron_runs AS r
              WHERE r.status != 'running' AND (?1 IS NULL OR r.job_id = ?1)
                AND ((?3 > 0 AND coalesce(r.ended_at, r.started_at, r.slot) < ?3)
                     OR (?2 >= 0 AND r.id NOT IN (
                         SELECT k.id FROM cron_runs k WHERE k.job_id = r.job_id
                          ORDER BY k.slot DESC, k.id DESC LIMIT ?2)))
             RETURNING output_path, session_id",
        )
        .map_err(StoreError::sql("prune cron runs"))?;
    let pruned = stmt
        .query_map(params![job_id, keep, ended_before_ms], |row| {
            Ok(PrunedRun {
                output_path: row.get(0)?,
                session_id: row.get(1)?,
            })
        })
        .map_err(StoreError::sql("prune cron runs"))?
        .collect::<Result<_, _>>()
        .map_err(StoreError::sql("prune cron runs"))?;
    Ok(pruned)
}

#[cfg(test)]
mod tests;
