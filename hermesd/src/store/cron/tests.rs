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
