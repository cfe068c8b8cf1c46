//! Cron storage on a real database: jobs by id or name, due jobs, leases that never let a slot
//! run twice, and runs a crash interrupted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::store::Store;

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("hermesd.db")).unwrap();
    (dir, store)
}

fn job(id: &str, next: Option<i64>) -> CronJobRow {
    CronJobRow {
        id: id.into(),
        name: format!("job {id}"),
        prompt: "say hello".into(),
        schedule: "every 30m".into(),
        schedule_json: r#"{"every":1800}"#.into(),
        skills: vec!["log-summarising".into()],
        deliver: "local".into(),
        state: "scheduled".into(),
        missed_policy: "skip".into(),
        next_run_at: next,
        ..CronJobRow::default()
    }
}

#[tokio::test]
async fn jobs_are_found_by_id_or_name_and_due_ones_in_order() {
    let (_dir, store) = open();
    store
        .write(|tx| {
            insert_cron_job(tx, &job("a1", Some(3_000)))?;
            insert_cron_job(tx, &job("b2", Some(1_000)))?;
            let mut paused = job("c3", Some(500));
            paused.state = "paused".into();
            insert_cron_job(tx, &paused)?;
            Ok(())
        })
        .await
        .unwrap();
    let dup = store
        .write(|tx| insert_cron_job(tx, &job("a1", None)))
        .await
        .unwrap_err();
    assert!(dup.to_string().contains("exists already"), "{dup}");
    let (by_name, due, next, all) = store
        .read(|c| {
            Ok((
                cron_job(c, "job b2")?,
                due_cron_jobs(c, 2_000)?,
                next_cron_due(c)?,
                cron_jobs(c)?,
            ))
        })
        .await
        .unwrap();
    assert_eq!(by_name.id, "b2");
    assert_eq!(by_name.skills, ["log-summarising"]);
    assert_eq!(
        due.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(),
        ["b2"]
    );
    assert_eq!(next, Some(1_000), "paused jobs are not due");
    assert_eq!(all.len(), 3);
    let mut edited = by_name.clone();
    edited.state = "paused".into();
    edited.paused_reason = Some("away".into());
    let updated = store
        .write(move |tx| update_cron_job(tx, &edited))
        .await
        .unwrap();
    assert_eq!(
        (updated.state.as_str(), updated.paused_reason.as_deref()),
        ("paused", Some("away"))
    );
    assert_eq!(updated.skills, by_name.skills, "the other fields are kept");
    let missing = store.read(|c| cron_job(c, "nope")).await.unwrap_err();
    assert!(
        missing.to_string().contains("hermesctl cron list"),
        "{missing}"
    );
}

#[tokio::test]
async fn a_slot_is_leased_once_and_a_crash_leaves_it_interrupted() {
    let (_dir, store) = open();
    store
        .write(|tx| insert_cron_job(tx, &job("a1", Some(1_000))))
        .await
        .unwrap();
    let first = store
        .write(|tx| lease_cron_run(tx, "r1", "a1", 1_000))
        .await
        .unwrap();
    assert_eq!(first.map(|r| r.status), Some("running".into()));
    let again = store
        .write(|tx| lease_cron_run(tx, "r2", "a1", 1_000))
        .await
        .unwrap();
    assert!(again.is_none(), "the same slot never runs twice");

    // The daemon restarts with r1 still leased.
    let interrupted = store.write(interrupt_leased_runs).await.unwrap();
    assert_eq!(interrupted.len(), 1);
    let runs = store.read(|c| cron_runs(c, "a1", 0)).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, "interrupted");
    assert!(
        runs[0]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("not run again")
    );

    // A finished run keeps its outcome; removing the job removes its runs.
    store
        .write(|tx| {
            lease_cron_run(tx, "r3", "a1", 2_000)?;
            finish_cron_run(
                tx,
                &CronRunRow {
                    id: "r3".into(),
                    status: "ok".into(),
                    output_path: Some("cron/output/a1/x.md".into()),
                    ..CronRunRow::default()
                },
            )?;
            record_cron_run(
                tx,
                &CronRunRow {
                    id: "r4".into(),
                    job_id: "a1".into(),
                    slot: 3_000,
                    status: "missed".into(),
                    ..CronRunRow::default()
                },
            )
        })
        .await
        .unwrap();
    let runs = store.read(|c| cron_runs(c, "a1", 10)).await.unwrap();
    let statuses: Vec<&str> = runs.iter().map(|r| r.status.as_str()).collect();
    assert_eq!(
        statuses,
        ["missed", "ok", "interrupted"],
        "newest slot first"
    );
    assert!(store.write(|tx| delete_cron_job(tx, "a1")).await.unwrap());
    assert!(
        store
            .read(|c| cron_runs(c, "a1", 0))
            .await
            .unwrap()
            .is_empty()
    );
}

fn ended_run(id: &str, job_id: &str, slot: i64, delivery: &str) -> CronRunRow {
    CronRunRow {
        id: id.into(),
        job_id: job_id.into(),
        slot,
        status: "ok".into(),
        ended_at: Some(2_000),
        delivery: Some(delivery.into()),
        ..CronRunRow::default()
    }
}

#[test]
fn runs_recorded_pending_before_deliveries_waited_wait_after_the_upgrade() {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    crate::store::migrations::apply_up_to(&conn, 10).unwrap();
    conn.execute_batch(
        "INSERT INTO cron_jobs (id, name, prompt, schedule, schedule_json, created_at, updated_at)
           VALUES ('j1', 'digest', 'p', 'every 1h', '{}', 0, 0);
         INSERT INTO cron_runs (id, job_id, slot, status, ended_at, delivery) VALUES
           ('r1', 'j1', 1, 'ok', 5, 'pending: no telegram adapter (for telegram:42)'),
           ('r2', 'j1', 2, 'ok', 6, 'local: the output file is the result');",
    )
    .unwrap();
    crate::store::migrations::apply(&conn).unwrap();
    let waiting = pending_deliveries(&conn, "telegram", None, 10).unwrap();
    assert_eq!(
        waiting,
        [PendingDelivery {
            run_id: "r1".into(),
            target: "telegram:42".into(),
            platform: "telegram".into(),
            text: None,
            reason: "no telegram adapter".into(),
            created_at: 5,
        }]
    );
}

#[tokio::test]
async fn a_waiting_delivery_is_taken_once_and_gives_up_after_a_week() {
    let (_dir, store) = open();
    let now = 100 * PENDING_MAX_AGE_MS;
    store
        .write(move |tx| {
            insert_cron_job(tx, &job("j1", None))?;
            for (slot, run, at) in [(1, "r1", now), (2, "r2", now - PENDING_MAX_AGE_MS - 1)] {
                record_cron_run(
                    tx,
                    &ended_run(
                        run,
                        "j1",
                        slot,
                        "pending: telegram is not connected (for telegram:42)",
                    ),
                )?;
                add_pending_delivery(
                    tx,
                    &PendingDelivery {
                        run_id: run.into(),
                        target: "telegram:42".into(),
                        platform: "telegram".into(),
                        text: Some("hello".into()),
                        reason: "telegram is not connected".into(),
                        created_at: at,
                    },
                )?;
            }
            Ok(())
        })
        .await
        .unwrap();
    let gone = store
        .write(move |tx| expire_pending_deliveries(tx, now))
        .await
        .unwrap();
    assert_eq!(gone, 1);
    store
        .write(|tx| take_pending_delivery(tx, "r1", "telegram:42", "delivered to telegram:42"))
        .await
        .unwrap();
    let again = store
        .write(|tx| take_pending_delivery(tx, "r1", "telegram:42", "delivered to telegram:42"))
        .await
        .unwrap_err();
    assert!(again.to_string().contains("not pending"), "{again}");
    let (r1, r2, left) = store
        .read(|c| {
            Ok((
                cron_run(c, "r1")?,
                cron_run(c, "r2")?,
                pending_platforms(c)?,
            ))
        })
        .await
        .unwrap();
    assert_eq!(r1.delivery.as_deref(), Some("delivered to telegram:42"));
    assert_eq!(
        r2.delivery.as_deref(),
        Some("not delivered: telegram did not connect within 7 days (for telegram:42)")
    );
    assert!(left.is_empty());
}
