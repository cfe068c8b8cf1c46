//! Benchmarks of hermesd and hermesctl as processes, printed as a Markdown table.
//! Build release binaries first: `cargo build --release --workspace --bins`, then
//! `cargo run --release -p hermes-tests --bin bench [-- RUNS]`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench binary fails by panicking

use std::{
    process::{Child, Stdio},
    time::{Duration, Instant},
};

use hermes_proto::pb;
use hermes_tests::{
    TestHome, binary,
    daemon::{notify_socket, wait_notify},
    report::{self, Row, ms, percentile},
    seed,
};
use nix::{
    sys::signal::{Signal, kill},
    unistd::Pid,
};

/// Spawn hermesd on `home`; return (spawn → READY=1, spawn → first GetStatus answered, child).
/// The client runtime is dropped before returning so no idle connection delays a later stop.
fn start_once(home: &TestHome) -> (Duration, Duration, Child) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (notify, notify_path) = notify_socket(home.path(), "notify");
    let began = Instant::now();
    let child = home
        .command(&binary("hermesd"))
        .env("NOTIFY_SOCKET", &notify_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_notify(&notify, "READY=1").unwrap();
    let ready = began.elapsed();
    let socket = home.socket();
    runtime.block_on(async {
        let channel = hermes_proto::client::connect(&socket).await.unwrap();
        pb::daemon_client::DaemonClient::new(channel)
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap();
    });
    (ready, began.elapsed(), child)
}

fn stop(mut child: Child) {
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    child.wait().unwrap();
}

fn startup_rows(label: &str, home: &TestHome, runs: usize, target: &'static str) -> Vec<Row> {
    let (mut ready, mut answering) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let (r, a, child) = start_once(home);
        ready.push(r);
        answering.push(a);
        stop(child);
    }
    vec![
        Row {
            what: format!("hermesd start → READY=1 ({label})"),
            median: ms(percentile(&mut ready, 0.5)),
            p90: ms(percentile(&mut ready, 0.9)),
            target: "",
        },
        Row {
            what: format!("hermesd start → GetStatus answered ({label})"),
            median: ms(percentile(&mut answering, 0.5)),
            p90: ms(percentile(&mut answering, 0.9)),
            target,
        },
    ]
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(30);
    let mut rows = Vec::new();

    let empty = TestHome::new();
    rows.extend(startup_rows("empty home", &empty, runs, "< 30 ms"));

    let full = TestHome::new();
    seed::sessions(full.path(), 10_000, "cli", 4);
    rows.extend(startup_rows("10,000 sessions", &full, runs, "< 50 ms"));

    // hermesctl status against a warm daemon.
    let (_, _, daemon) = start_once(&empty);
    let ctl = binary("hermesctl");
    let mut samples = Vec::new();
    for _ in 0..runs.max(50) {
        let began = Instant::now();
        let status = empty
            .command(&ctl)
            .arg("status")
            .stdout(Stdio::null())
            .status()
            .unwrap();
        samples.push(began.elapsed());
        assert!(status.success());
    }
    rows.push(Row {
        what: "hermesctl status, whole process, daemon warm".into(),
        median: ms(percentile(&mut samples, 0.5)),
        p90: ms(percentile(&mut samples, 0.9)),
        target: "< 5 ms",
    });
    let idle = rss_kib(daemon.id());
    rows.push(Row {
        what: "hermesd idle RSS after start and 50 status calls".into(),
        median: format!("{:.1} MiB", idle as f64 / 1024.0),
        p90: String::new(),
        target: "< 10 MiB",
    });
    stop(daemon);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (_, _, daemon) = start_once(&full);
    runtime.block_on(async {
        let channel = hermes_proto::client::connect(&full.socket()).await.unwrap();
        pb::sessions_client::SessionsClient::new(channel)
            .list(pb::ListSessionsRequest {
                limit: 10_000,
                ..Default::default()
            })
            .await
            .unwrap();
    });
    drop(runtime);
    rows.push(Row {
        what: "hermesd RSS after listing 10,000 sessions".into(),
        median: format!("{:.1} MiB", rss_kib(daemon.id()) as f64 / 1024.0),
        p90: String::new(),
        target: "",
    });
    stop(daemon);

    for name in ["hermesd", "hermesctl", "hermes-tui"] {
        let bytes = std::fs::metadata(binary(name))
            .map(|m| m.len())
            .unwrap_or(0);
        rows.push(Row {
            what: format!("{name} binary size"),
            median: format!("{:.2} MiB", bytes as f64 / (1024.0 * 1024.0)),
            p90: String::new(),
            target: "",
        });
    }

    report::print(&format!("hermesd benchmarks — {runs} runs each"), &rows);
}
