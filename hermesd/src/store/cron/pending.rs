//! Cron deliveries waiting for their platform (`cron_pending`): one row per run and target that
//! could not be delivered because the platform was not configured or not connected. A row is
//! taken in the transaction that records its message in the outbox, so it is delivered once;
//! a row waits at most [`PENDING_MAX_AGE_MS`], and at most [`PENDING_MAX_ROWS`] wait in all.
//! A row goes with its run (`ON DELETE CASCADE`). Rows carried over from older builds (no
//! text) are not aged out: their platform never had a chance to connect, and the runs'
//! retention (`cron.keep_days`) bounds them.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::super::StoreError;

/// How long a delivery waits for its platform (7 days).
pub const PENDING_MAX_AGE_MS: i64 = 7 * 24 * 3600 * 1000;
/// Deliveries that wait at once; the oldest beyond this give up.
pub const PENDING_MAX_ROWS: usize = 10_000;

/// Migration 11. Runs recorded before it as `pending: no <platform> adapter (for <target>)`
/// become rows without a text: their message is rebuilt from the run when it goes.
pub const PENDING_MIGRATION: &str = r#"
    CREATE TABLE cron_pending (
        run_id     TEXT NOT NULL REFERENCES cron_runs(id) ON DELETE CASCADE,
        target     TEXT NOT NULL,
        platform   TEXT NOT NULL,
        text       TEXT,
        reason     TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, target)
    ) WITHOUT ROWID;
    CREATE INDEX cron_pending_waiting ON cron_pending (platform, created_at);
    INSERT OR IGNORE INTO cron_pending (run_id, target, platform, text, reason, created_at)
    SELECT id,
           substr(delivery, instr(delivery, '(for ') + 5,
                  length(delivery) - instr(delivery, '(for ') - 5),
           substr(delivery, 13, instr(delivery, ' adapter (for ') - 13),
           NULL,
           substr(delivery, 10, instr(delivery, ' (for ') - 10),
           coalesce(ended_at, started_at, slot)
      FROM cron_runs
     WHERE delivery LIKE 'pending: no % adapter (for %)';
"#;

/// A delivery that waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDelivery {
    pub run_id: String,
    /// Where it goes, resolved: `platform`, `platform:chat` or `platform:chat:thread`.
    pub target: String,
    pub platform: String,
    /// The message; `None` for a run recorded before deliveries waited (rebuild it).
    pub text: Option<String>,
    pub reason: String,
    pub created_at: i64,
}

/// Keep a delivery waiting (replacing one for the same run and target).
pub fn add_pending_delivery(
    tx: &Transaction<'_>,
    pending: &PendingDelivery,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT OR REPLACE INTO cron_pending (run_id, target, platform, text, reason, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            pending.run_id,
            pending.target,
            pending.platform,
            pending.text,
            pending.reason,
            pending.created_at
        ],
    )
    .map_err(StoreError::sql("keep a cron delivery pending"))?;
    Ok(())
}

/// Up to `limit` deliveries waiting for `platform`, oldest first, after `after`
/// (`(created_at, run_id, target)` of the last one seen).
pub fn pending_deliveries(
    conn: &Connection,
    platform: &str,
    after: Option<&(i64, String, String)>,
    limit: usize,
) -> Result<Vec<PendingDelivery>, StoreError> {
    let (at, run, target) = after
        .cloned()
        .unwrap_or((i64::MIN, String::new(), String::new()));
    let mut stmt = conn
        .prepare_cached(
            "SELECT run_id, target, platform, text, reason, created_at FROM cron_pending
              WHERE platform = ?1 AND (created_at, run_id, target) > (?2, ?3, ?4)
              ORDER BY created_at, run_id, target LIMIT ?5",
        )
        .map_err(StoreError::sql("list pending cron deliveries"))?;
    let rows = stmt
        .query_map(
            params![
                platform,
                at,
                run,
                target,
                limit.min(i64::MAX as usize) as i64
            ],
            |row| {
                Ok(PendingDelivery {
                    run_id: row.get(0)?,
                    target: row.get(1)?,
                    platform: row.get(2)?,
                    text: row.get(3)?,
                    reason: row.get(4)?,
                    created_at: row.get(5)?,
                })
            },
        )
        .map_err(StoreError::sql("list pending cron deliveries"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(StoreError::sql("list pending cron deliveries"))?;
    Ok(rows)
}

/// Every platform with deliveries waiting.
pub fn pending_platforms(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT DISTINCT platform FROM cron_pending ORDER BY platform")
        .map_err(StoreError::sql("list pending cron deliveries"))?;
    let rows = stmt
        .query_map([], |row| row.get(0))
        .map_err(StoreError::sql("list pending cron deliveries"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(StoreError::sql("list pending cron deliveries"))?;
    Ok(rows)
}

/// Take a waiting delivery and say in its run's record what became of it: the run's clause for
/// `target` becomes `said`. Refused when the row is gone (taken already), so a message recorded
/// in the same transaction is never recorded twice.
pub fn take_pending_delivery(
    tx: &Transaction<'_>,
    run_id: &str,
    target: &str,
    said: &str,
) -> Result<(), StoreError> {
    let taken = tx
        .execute(
            "DELETE FROM cron_pending WHERE run_id = ?1 AND target = ?2",
            params![run_id, target],
        )
        .map_err(StoreError::sql("take a pending cron delivery"))?;
    if taken == 0 {
        return Err(StoreError::Refused(format!(
            "the delivery of run {run_id} to {target} is not pending"
        )));
    }
    edit_run_delivery(tx, run_id, |record| rewrite_clause(record, target, said))
}

/// Give up the deliveries that waited too long (or beyond the row bound), saying so in their
/// runs' records. Returns how many gave up.
pub fn expire_pending_deliveries(tx: &Transaction<'_>, now: i64) -> Result<usize, StoreError> {
    let mut stmt = tx
        .prepare_cached(
            "DELETE FROM cron_pending
              WHERE (created_at < ?1 AND text IS NOT NULL)
                 OR (run_id, target) NOT IN (SELECT run_id, target FROM cron_pending
                                             ORDER BY created_at DESC LIMIT ?2)
             RETURNING run_id, target, platform",
        )
        .map_err(StoreError::sql("expire pending cron deliveries"))?;
    let gone = stmt
        .query_map(
            params![now - PENDING_MAX_AGE_MS, PENDING_MAX_ROWS as i64],
            |row| Ok((row.get::<_, String>(0)?, row.get(1)?, row.get(2)?)),
        )
        .map_err(StoreError::sql("expire pending cron deliveries"))?
        .collect::<Result<Vec<(String, String, String)>, _>>()
        .map_err(StoreError::sql("expire pending cron deliveries"))?;
    drop(stmt);
    for (run_id, target, platform) in &gone {
        let said =
            format!("not delivered: {platform} did not connect within 7 days (for {target})");
        edit_run_delivery(tx, run_id, |record| rewrite_clause(record, target, &said))?;
    }
    Ok(gone.len())
}

/// Change one clause of a run's delivery record (a delivery taken, then refused by the
/// platform).
pub fn amend_cron_delivery(
    tx: &Transaction<'_>,
    run_id: &str,
    from: &str,
    to: &str,
) -> Result<(), StoreError> {
    edit_run_delivery(tx, run_id, |record| record.replacen(from, to, 1))
}

/// Rewrite a run's delivery record with `edit` (nothing when the run is gone).
fn edit_run_delivery(
    tx: &Transaction<'_>,
    run_id: &str,
    edit: impl FnOnce(&str) -> String,
) -> Result<(), StoreError> {
    let delivery: Option<Option<String>> = tx
        .query_row(
            "SELECT delivery FROM cron_runs WHERE id = ?1",
            params![run_id],
            |row| row.get(0),
        )
        .optional()
        .map_err(StoreError::sql("read a cron run's delivery"))?;
    let Some(delivery) = delivery else {
        return Ok(());
    };
    tx.execute(
        "UPDATE cron_runs SET delivery = ?2 WHERE id = ?1",
        params![run_id, edit(delivery.as_deref().unwrap_or_default())],
    )
    .map_err(StoreError::sql("record a cron run's delivery"))?;
    Ok(())
}

/// What a run recorded before deliveries waited needs to rebuild its message: the job's id and
/// name, the run's status and error, and the run session's last answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunForDelivery {
    pub job_id: String,
    pub job_name: String,
    pub status: String,
    pub error: Option<String>,
    pub answer: String,
}

/// The run behind a waiting delivery, if it is still kept.
pub fn run_for_delivery(
    conn: &Connection,
    run_id: &str,
) -> Result<Option<RunForDelivery>, StoreError> {
    conn.query_row(
        "SELECT j.id, j.name, r.status, r.error,
                coalesce((SELECT m.content FROM messages m
                           WHERE m.session_id = r.session_id AND m.role = 'assistant'
                             AND m.content != ''
                           ORDER BY m.id DESC LIMIT 1), '')
           FROM cron_runs r JOIN cron_jobs j ON j.id = r.job_id
          WHERE r.id = ?1",
        params![run_id],
        |row| {
            Ok(RunForDelivery {
                job_id: row.get(0)?,
                job_name: row.get(1)?,
                status: row.get(2)?,
                error: row.get(3)?,
                answer: row.get(4)?,
            })
        },
    )
    .optional()
    .map_err(StoreError::sql("read a cron run for its delivery"))
}

/// `record` with its `pending: … (for <target>)` clause replaced by `said` (or `said` added).
/// A reason may itself hold "; ", so the clause runs from the last `pending: ` before the
/// target's marker to the marker's end.
fn rewrite_clause(record: &str, target: &str, said: &str) -> String {
    let marker = format!("(for {target})");
    let found = record.match_indices(&marker).find_map(|(at, _)| {
        let end = at + marker.len();
        let ends_clause = record[end..].is_empty() || record[end..].starts_with("; ");
        let start = record[..at].rfind("pending: ")?;
        let starts_clause = start == 0 || record[..start].ends_with("; ");
        (ends_clause && starts_clause).then_some((start, end))
    });
    match found {
        Some((start, end)) => format!("{}{said}{}", &record[..start], &record[end..]),
        None if record.is_empty() => said.to_string(),
        None => format!("{record}; {said}"),
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite_clause;

    #[test]
    fn only_the_targets_pending_clause_is_rewritten() {
        let record = "delivered to telegram:1; pending: telegram is not connected (retrying) \
                      (for telegram:2)";
        assert_eq!(
            rewrite_clause(record, "telegram:2", "delivered to telegram:2 later"),
            "delivered to telegram:1; delivered to telegram:2 later"
        );
        assert_eq!(
            rewrite_clause("local: x", "telegram", "delivered to telegram:9"),
            "local: x; delivered to telegram:9"
        );
        let reason_with_semicolons = "pending: telegram is not connected (retrying; last error: \
                                      refused); see `hermesctl gateway status` (for telegram:2)";
        assert_eq!(
            rewrite_clause(reason_with_semicolons, "telegram:2", "delivered"),
            "delivered"
        );
    }
}
