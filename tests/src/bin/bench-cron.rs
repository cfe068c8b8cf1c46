//! Cron benchmark against the real daemon: `hermesctl cron add` and `cron list` as whole
//! processes with the daemon warm (Python Hermes: 0.634 s and 0.443 s), the daemon's RSS
//! before and after 10,000 scheduled jobs, and the scheduling drift (lease time minus slot) of
//! one-shots due at the same second with those 10,000 jobs in the database.
//!
//! `cargo build --release --workspace --bins && target/release/bench-cron [RUNS]` (RUNS: samples
//! of each whole-process timing, default 20; the drift takes min(RUNS, 3) rounds).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hermes_proto::pb;
use hermes_tests::{
    TestHome,
    daemon::connect,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    report::{Row, print},
};

const SAMPLES: usize = 20;
const JOBS: usize = 10_000;
const DUE_TOGETHER: usize = 16;
const ROUNDS: usize = 3;
const BIG_LIST_SAMPLES: usize = 5;

fn whole_process(home: &TestHome, args: &[&str]) -> Duration {
    let started = Instant::now();
    home.ctl(args).ok();
    started.elapsed()
}

#[tokio::main]
async fn main() {
    let samples: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(SAMPLES)
        .max(1);
    let rounds = samples.min(ROUNDS);
    let replies = (0..DUE_TOGETHER * rounds)
        .map(|_| Reply::text("ok"))
        .collect();
    let server = FakeLlm::start(replies).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "cron: {max_parallel_jobs: 32}");
    home.ctl(&["status"]).ok();

    let mut add: Vec<Duration> = (0..samples)
        .map(|i| {
            let prompt = format!("bench job {i}");
            whole_process(
                &home,
                &[
                    "cron",
                    "add",
                    "--schedule",
                    "every 30m",
                    "--prompt",
                    &prompt,
                ],
            )
        })
        .collect();
    let mut list: Vec<Duration> = (0..samples)
        .map(|_| whole_process(&home, &["cron", "list"]))
        .collect();

    let mut cron = pb::cron_client::CronClient::new(connect(&home.socket()).await);
    let before = home.daemon_rss_mib();
    for i in 0..JOBS {
        cron.add(pb::AddCronJobRequest {
            job: Some(pb::CronJob {
                schedule: format!("{} {} * * *", i % 60, i % 24),
                prompt: format!("scheduled job {i}: summarise the day"),
                ..pb::CronJob::default()
            }),
        })
        .await
        .unwrap();
    }
    let after = home.daemon_rss_mib();
    let mut list_big: Vec<Duration> = (0..samples.min(BIG_LIST_SAMPLES))
        .map(|_| whole_process(&home, &["cron", "list", "--json"]))
        .collect();

    let mut drift = Vec::new();
    for _ in 0..rounds {
        // One-shots due together, three seconds from now.
        let at = hermes_tests::iso_in(3);
        let mut ids = Vec::new();
        for i in 0..DUE_TOGETHER {
            let job = cron
                .add(pb::AddCronJobRequest {
                    job: Some(pb::CronJob {
                        schedule: at.clone(),
                        prompt: format!("due together {i}"),
                        ..pb::CronJob::default()
                    }),
                })
                .await
                .unwrap()
                .into_inner()
                .job
                .unwrap();
            ids.push(job.id);
        }
        for id in &ids {
            let leased = loop {
                let runs = cron
                    .list_runs(pb::ListCronRunsRequest {
                        job_id: id.clone(),
                        limit: 1,
                    })
                    .await
                    .unwrap()
                    .into_inner()
                    .runs;
                if let Some(run) = runs.into_iter().find(|r| r.ended_at.is_some()) {
                    break run;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            };
            let conn = rusqlite::Connection::open(home.path().join("hermesd.db")).unwrap();
            let (slot_ms, leased_ms): (i64, i64) = conn
                .query_row(
                    "SELECT slot, started_at FROM cron_runs WHERE id = ?1",
                    [&leased.id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            drift.push(Duration::from_millis((leased_ms - slot_ms).max(0) as u64));
        }
    }
    let rows = vec![
        Row::from_samples(
            "`hermesctl cron add` (whole process, warm)".into(),
            &mut add,
            "< 10 ms",
        ),
        Row::from_samples(
            format!("`hermesctl cron list` ({samples} jobs)"),
            &mut list,
            "< 10 ms",
        ),
        Row::from_samples(
            format!("`hermesctl cron list --json` ({} jobs)", JOBS + samples),
            &mut list_big,
            "-",
        ),
        Row::from_samples(
            format!(
                "drift: run start − slot ({DUE_TOGETHER} due together × {rounds}, {JOBS} jobs stored)"
            ),
            &mut drift,
            "< 1 s",
        ),
    ];
    print("bench-cron", &rows);
    println!();
    println!(
        "daemon RSS: {before:.1} MiB before, {after:.1} MiB after {JOBS} jobs (+{:.1} MiB; target < 20 MiB)",
        after - before
    );
}
