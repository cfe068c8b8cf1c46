//! Cron when things go wrong around it: a daemon killed while a run is leased, a daemon down
//! across slots (missed runs under `skip` and `once`), a hundred jobs due in the same minute
//! under the concurrency limit, and Python Hermes' jobs.json imported once.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_proto::pb;
use hermes_tests::{
    TestHome,
    daemon::DaemonProcess,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    iso_in, wait,
};
use serde_json::Value;

const HOUR: i64 = 3_600_000;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn db(home: &TestHome) -> rusqlite::Connection {
    rusqlite::Connection::open(home.path().join("hermesd.db")).unwrap()
}

/// The job's runs once `done` holds for them. A run's record changes with no event of its own
/// (a restart closing a leased one, a run's end right after its turn), so callers first wait
/// for what comes before (READY, the model's requests) and this looks for the rest with a
/// deadline.
async fn runs_until(
    home: &TestHome,
    job: &str,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    wait::until(
        &format!("the runs of {job} {what}"),
        Duration::from_secs(20),
        || async {
            let runs = home
                .ctl_async(&["--json", "cron", "runs", job])
                .await
                .json();
            let runs = runs.as_array().cloned().unwrap_or_default();
            done(&runs).then_some(runs)
        },
    )
    .await
}

/// Wait until `n` requests reached the fake model (each a run that started), failing after 60 s.
async fn model_requests(server: &FakeLlm, n: usize) {
    let arrived = server.wait_for_requests(n, Duration::from_secs(60)).await;
    assert!(
        arrived.len() >= n,
        "{} of {n} runs reached the model",
        arrived.len()
    );
}

fn add(home: &TestHome, args: &[&str]) -> String {
    let mut all = vec!["--json", "cron", "add"];
    all.extend_from_slice(args);
    home.ctl(&all).json()["id"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_cut_short_by_sigkill_is_recorded_as_interrupted_and_never_repeated() {
    let server = FakeLlm::start(vec![Reply::stall_before_headers(60_000)]).await;
    let home = TestHome::new();
    home.use_fake_model(&server, "");
    let daemon = DaemonProcess::start(&home, &[]);
    let id = add(&home, &["--schedule", "in 1m", "--prompt", "Long job"]);
    // Bring the one-shot's slot to now: the daemon's timer is re-armed by the edit.
    home.ctl_async(&["cron", "edit", &id, "--schedule", &iso_in(1)])
        .await
        .ok();
    let requests = server.wait_for_requests(1, Duration::from_secs(20)).await;
    assert_eq!(requests.len(), 1, "the run reached the model");
    let running = home
        .ctl_async(&["--json", "cron", "runs", &id])
        .await
        .json();
    assert_eq!(running[0]["status"], "running");
    daemon.kill_hard();

    let _daemon = DaemonProcess::start(&home, &[]);
    let runs = runs_until(&home, &id, "are closed by the restart", |runs| {
        runs.iter().all(|r| r["status"] != "running")
    })
    .await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], "interrupted");
    assert!(
        runs[0]["error"].as_str().unwrap().contains("not run again"),
        "{runs:?}"
    );
    let job = home
        .ctl_async(&["--json", "cron", "show", &id])
        .await
        .json();
    assert_eq!(
        job["job"]["state"], "completed",
        "a one-shot whose run was cut short is done"
    );
    assert_eq!(job["job"]["last_status"], "interrupted");
    assert_eq!(server.chat_requests().len(), 1, "never run twice");
}

#[tokio::test(flavor = "multi_thread")]
async fn slots_missed_while_down_are_recorded_once_runs_one_catch_up_and_all_runs_each() {
    let server = FakeLlm::start(vec![Reply::text("caught up"); 5]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    let skip = add(
        &home,
        &["--schedule", "every 1h", "--prompt", "Hourly check"],
    );
    let once = add(
        &home,
        &[
            "--schedule",
            "every 1h",
            "--prompt",
            "Hourly report",
            "--missed",
            "once",
        ],
    );
    let all = add(
        &home,
        &[
            "--schedule",
            "every 1h",
            "--prompt",
            "Hourly log",
            "--missed",
            "all",
        ],
    );
    let paused = add(
        &home,
        &[
            "--schedule",
            "every 1h",
            "--prompt",
            "On hold",
            "--missed",
            "once",
        ],
    );
    home.ctl(&["cron", "pause", &paused]).ok();
    home.ctl(&["daemon", "stop"]).ok();
    // As if hermesd had been down for the last four slots: the latest was 40 min ago, later than
    // its 30 min grace. (Slots lie on whole seconds, as the daemon computes them.)
    let now = now_ms() / 1000 * 1000;
    db(&home)
        .execute(
            "UPDATE cron_jobs SET created_at = ?1, next_run_at = ?2",
            [now - 10 * HOUR - 40 * 60_000, now - 3 * HOUR - 40 * 60_000],
        )
        .unwrap();

    home.ctl_async(&["daemon", "start"]).await.ok();
    // One catch-up for `once` and four runs for `all` start; then their records close.
    model_requests(&server, 5).await;
    let runs = runs_until(&home, &once, "include a finished catch-up", |runs| {
        runs.iter().any(|r| r["status"] == "ok")
    })
    .await;
    let statuses: Vec<&str> = runs.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses.len(), 2, "{runs:?}");
    assert!(
        statuses.contains(&"ok") && statuses.contains(&"missed"),
        "{runs:?}"
    );
    let missed = runs.iter().find(|r| r["status"] == "missed").unwrap();
    assert!(
        missed["error"].as_str().unwrap().contains("missed 3 runs"),
        "{missed}"
    );

    let runs = runs_until(&home, &skip, "include the missed slots", |runs| {
        !runs.is_empty()
    })
    .await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], "missed");
    let error = runs[0]["error"].as_str().unwrap();
    assert!(
        error.contains("missed 4 runs") && error.contains("policy skip"),
        "{error}"
    );
    let job = home
        .ctl_async(&["--json", "cron", "show", &skip])
        .await
        .json();
    assert_eq!(job["job"]["last_status"], "missed");
    assert_eq!(job["job"]["state"], "scheduled");
    // `all` runs each of the four missed slots, one after another.
    let runs = runs_until(&home, &all, "are four finished ones", |runs| {
        runs.len() == 4 && runs.iter().all(|r| r["status"] == "ok")
    })
    .await;
    assert_eq!(runs.len(), 4, "{runs:?}");
    assert_eq!(
        server.chat_requests().len(),
        5,
        "one catch-up for `once`, four for `all`"
    );

    // The paused job was due in the same pass and did not run; resumed, it waits for its next
    // slot instead of catching up.
    let none = home
        .ctl_async(&["--json", "cron", "runs", &paused])
        .await
        .json();
    assert_eq!(none.as_array().unwrap().len(), 0, "{none}");
    let resumed = home
        .ctl_async(&["--json", "cron", "resume", &paused])
        .await
        .json();
    assert_eq!(resumed["state"], "scheduled");
    let next = resumed["next_run_at"].as_str().unwrap().to_string();
    assert!(next > iso_in(0), "{next}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_jobs_due_in_the_same_minute_all_run_four_at_a_time() {
    let replies = (0..100)
        .map(|i| Reply::text(&format!("done {i}")).with_delay_ms(100))
        .collect();
    let server = FakeLlm::start(replies).await;
    let home = TestHome::new();
    home.use_fake_model(&server, "cron: {max_parallel_jobs: 4}");
    let daemon = DaemonProcess::start(&home, &[]);
    let mut cron = pb::cron_client::CronClient::new(daemon.channel().await);
    for i in 0..100 {
        cron.add(pb::AddCronJobRequest {
            job: Some(pb::CronJob {
                schedule: "every 1h".into(),
                prompt: format!("job {i}"),
                ..pb::CronJob::default()
            }),
        })
        .await
        .unwrap();
    }
    daemon.terminate();
    let due = now_ms() - 20_000;
    db(&home)
        .execute("UPDATE cron_jobs SET next_run_at = ?1", [due])
        .unwrap();
    let _daemon = DaemonProcess::start(&home, &[]);
    model_requests(&server, 100).await;
    let conn = db(&home);
    wait::until(
        "the records of all 100 runs are closed",
        Duration::from_secs(20),
        || async {
            let finished = conn
                .query_row(
                    "SELECT count(*) FROM cron_runs WHERE status <> 'running'",
                    [],
                    |r| r.get::<_, i64>(0),
                )
                .unwrap();
            (finished == 100).then_some(())
        },
    )
    .await;
    let spans: Vec<(i64, i64, String)> = conn
        .prepare("SELECT started_at, ended_at, status FROM cron_runs")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(
        spans.iter().all(|(_, _, status)| status == "ok"),
        "{spans:?}"
    );
    let most = spans
        .iter()
        .map(|(start, _, _)| {
            spans
                .iter()
                .filter(|(s, e, _)| s <= start && start < e)
                .count()
        })
        .max()
        .unwrap();
    assert!(most <= 4, "{most} runs at once with a limit of 4");
    assert!(most >= 2, "runs went one by one: {most}");
}

#[tokio::test(flavor = "multi_thread")]
async fn python_hermes_jobs_are_imported_once() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let python = tempfile::tempdir().unwrap();
    std::fs::copy(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../hermesd/src/store/hermes_import/fixtures/hermes-0.19-state.db"),
        python.path().join("state.db"),
    )
    .unwrap();
    std::fs::create_dir_all(python.path().join("cron")).unwrap();
    std::fs::write(
        python.path().join("cron/jobs.json"),
        r#"{"jobs": [
          {"id": "ea0b9bb3facc", "name": "bench-job", "prompt": "Say hello",
           "schedule": {"kind": "interval", "minutes": 30, "display": "every 30m"},
           "repeat": {"times": null, "completed": 0}, "enabled": true, "state": "scheduled",
           "created_at": "2026-11-30T03:36:52.689073+00:00",
           "next_run_at": "2026-11-30T04:06:52.839349+00:00", "deliver": "local"},
          {"id": "b1", "prompt": "Summarise the logs", "state": "paused", "enabled": false,
           "schedule": {"kind": "cron", "expr": "0 9 * * 1-5"}},
          {"id": "c2", "prompt": "broken", "schedule": {"kind": "cron", "expr": "61 * * * *"}}
        ]}"#,
    )
    .unwrap();
    let from = python.path().to_str().unwrap();
    let first = home
        .ctl_async(&["--json", "import", "hermes", "--home", from])
        .await
        .json();
    assert_eq!(first["cron_jobs"], 2, "{first}");
    let again = home
        .ctl_async(&["--json", "import", "hermes", "--home", from])
        .await
        .json();
    assert_eq!(again["cron_jobs"], 0, "{again}");
    let jobs = home.ctl_async(&["--json", "cron", "list"]).await.json();
    let jobs = jobs.as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    let hello = jobs.iter().find(|j| j["id"] == "ea0b9bb3facc").unwrap();
    assert_eq!(hello["schedule"], "every 30m");
    assert_eq!(hello["state"], "scheduled");
    let next = hello["next_run_at"].as_str().unwrap();
    assert!(
        next > "2026-11-30T04:06:53",
        "rescheduled from now, not missed: {next}"
    );
    let paused = jobs.iter().find(|j| j["id"] == "b1").unwrap();
    assert_eq!(paused["state"], "paused");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_python_home_with_jobs_but_no_state_db_imports_its_jobs() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let python = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(python.path().join("cron")).unwrap();
    // Made by the real `hermes cron create` (hermes-agent 0.19.0) in a home with no sessions.
    std::fs::copy(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../hermesd/src/cron/fixtures/hermes-0.19-jobs.json"),
        python.path().join("cron/jobs.json"),
    )
    .unwrap();
    let from = python.path().to_str().unwrap();
    let out = home
        .ctl_async(&["--json", "import", "hermes", "--home", from])
        .await;
    assert_eq!(out.code(), Some(0), "{} {}", out.stdout(), out.stderr());
    let imported = out.json();
    assert_eq!(imported["sessions"], 0, "{imported}");
    assert_eq!(imported["cron_jobs"], 3, "{imported}");
    let jobs = home.ctl_async(&["--json", "cron", "list"]).await.json();
    let job = |name: &str| {
        jobs.as_array()
            .unwrap()
            .iter()
            .find(|j| j["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {jobs}"))
            .clone()
    };
    let collector = job("collector");
    assert_eq!(
        (&collector["script"], &collector["no_agent"]),
        (&Value::from("collect.py"), &Value::from(false))
    );
    let watchdog = job("watchdog");
    assert_eq!(
        (&watchdog["script"], &watchdog["no_agent"]),
        (&Value::from("check.sh"), &Value::from(true))
    );
    assert_eq!(watchdog["deliver"], "origin,telegram:-1001234567890:17");
    let pinned = job("pinned");
    assert_eq!(
        (&pinned["provider"], &pinned["base_url"], &pinned["model"]),
        (
            &Value::from("custom"),
            &Value::from("http://localhost:11434/v1"),
            &Value::from("llama3")
        )
    );
}
