//! Benchmarks of the agent loop against the fake model: agent overhead per loop iteration,
//! `hermesctl send` with one `terminal` call (whole process, daemon warm), and the fixed request
//! overhead — each tool schema and the system prompt against Python Hermes' bytes.
//!
//! `cargo build --release --workspace --bins && target/release/bench-agent [RUNS]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{process::Stdio, time::Instant};

use hermes_proto::pb;
use hermes_tests::{
    TestHome, binary,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    report::{Row, print},
};

/// Python Hermes 0.19 schema bytes per tool (`../shared/bench/python-hermes-baseline.md`).
const PYTHON_SCHEMA_BYTES: [(&str, usize); 17] = [
    ("delegate_task", 5_934),
    ("session_search", 5_862),
    ("terminal", 5_617),
    ("skill_manage", 4_090),
    ("memory", 2_769),
    ("execute_code", 2_400),
    ("clarify", 1_931),
    ("patch", 1_872),
    ("search_files", 1_715),
    ("todo", 1_322),
    ("process", 1_215),
    ("write_file", 1_123),
    ("read_file", 1_032),
    ("text_to_speech", 957),
    ("skill_view", 907),
    ("vision_analyze", 906),
    ("skills_list", 290),
];
const PYTHON_SYSTEM_PROMPT_BYTES: usize = 6_674;

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn daemon_pid(home: &TestHome) -> u32 {
    std::fs::read_to_string(home.path().join("hermesd.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::main]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(30);
    let server = FakeLlm::start(Vec::new()).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let work = tempfile::tempdir().unwrap();
    // The scripted replies are counted and every request is timed: no auxiliary requests (titles,
    // compression: QUIET_AUXILIARY, which use_fake_model adds) and no background reviews.
    home.use_fake_model(
        &server,
        "logging:\n  level: debug\n\
         memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n",
    );
    home.ctl_async(&["status"]).await.ok();
    let channel = hermes_proto::client::connect(&home.socket()).await.unwrap();
    let mut sessions = pb::sessions_client::SessionsClient::new(channel);
    let mut rows = Vec::new();

    // 1. Agent overhead per iteration: the gap between one model request and the next, with a
    //    no-op tool (todo read) in between; it also holds the loopback HTTP round trip.
    let mut gaps = Vec::new();
    for _ in 0..(runs / 3).max(5) {
        let before = server.requests().len();
        server.push(Reply::tool_loop(
            "todo",
            r#"{"todos": [{"id": "{n}", "content": "step", "status": "pending"}], "merge": true}"#,
            20,
            "done",
        ));
        let reply = sessions
            .send(pb::SendRequest {
                text: "loop".into(),
                cwd: work.path().display().to_string(),
                ..pb::SendRequest::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(reply.tool_calls, 20);
        let requests = server.requests();
        let turn = &requests[before..];
        for pair in turn.windows(2) {
            gaps.push(pair[1].received_at - pair[0].received_at);
        }
    }
    rows.push(Row::from_samples(
        "iteration: model request to next request (no-op tool, loopback model)".into(),
        &mut gaps,
        "",
    ));
    // The daemon logs each iteration's own time minus model and tool time at debug level.
    let log = std::fs::read_to_string(home.path().join("logs/hermesd.log")).unwrap();
    let mut overheads: Vec<std::time::Duration> = log
        .lines()
        .filter_map(|l| l.split("overhead_us=").nth(1))
        .filter_map(|v| v.split_whitespace().next()?.parse().ok())
        .map(std::time::Duration::from_micros)
        .collect();
    assert!(!overheads.is_empty(), "no iteration lines in the log");
    rows.push(Row::from_samples(
        format!(
            "agent overhead per iteration, excluding model, tool and commit wait ({} iterations)",
            overheads.len()
        ),
        &mut overheads,
        "< 1 ms (Python: ~40 ms)",
    ));
    let micros_after = |key: &str| -> Vec<std::time::Duration> {
        log.lines()
            .filter_map(|l| l.split(key).nth(1))
            .filter_map(|v| v.split_whitespace().next()?.parse().ok())
            .map(std::time::Duration::from_micros)
            .collect()
    };
    // Each iteration that ran tools first waited for its assistant message to be committed.
    // (A daemon from before issue 16 logs neither; its rows are left out.)
    let mut waits = micros_after("commit_wait_us=");
    if !waits.is_empty() {
        rows.push(Row::from_samples(
            "commit wait per tool iteration (the tool calls stored before they run)".into(),
            &mut waits,
            "",
        ));
    }
    // Every transaction's commit: under synchronous = FULL, the WAL fsync.
    let mut commits = micros_after("commit_us=");
    if !commits.is_empty() {
        rows.push(Row::from_samples(
            format!(
                "fsync per commit (synchronous = FULL, {} commits)",
                commits.len()
            ),
            &mut commits,
            "",
        ));
    }

    // For scale: one whole turn with no tool (one model call, user and answer stored).
    let mut turns = Vec::new();
    for _ in 0..runs {
        server.push(Reply::text("hi"));
        let began = Instant::now();
        sessions
            .send(pb::SendRequest {
                text: "hello".into(),
                cwd: work.path().display().to_string(),
                ..pb::SendRequest::default()
            })
            .await
            .unwrap();
        turns.push(began.elapsed());
    }
    rows.push(Row::from_samples(
        "Send RPC, one model call, no tool (new session each)".into(),
        &mut turns,
        "",
    ));

    // 2. hermesctl send with one terminal call, whole process.
    let ctl = binary("hermesctl");
    let cwd = work.path().display().to_string();
    let mut samples = Vec::new();
    for _ in 0..runs {
        server.push(Reply::tool_call("terminal", r#"{"command": "echo hi"}"#));
        server.push(Reply::text("The command printed hi."));
        let mut command = home.command(&ctl);
        command
            .args(["send", "--cwd", &cwd, "run echo hi"])
            .stdout(Stdio::piped());
        let began = Instant::now();
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        samples.push(began.elapsed());
        assert!(output.status.success());
        assert_eq!(
            String::from_utf8_lossy(&output.stdout).trim(),
            "The command printed hi."
        );
    }
    rows.push(Row::from_samples(
        "hermesctl send, one terminal call + answer, whole process".into(),
        &mut samples,
        "< 60 ms (Python -z: 3.5 s)",
    ));
    // 3. hermesctl send with a turn of 20 tool calls (todo writes), whole process.
    let mut twenty = Vec::new();
    for _ in 0..(runs / 3).max(3) {
        server.push(Reply::tool_loop(
            "todo",
            r#"{"todos": [{"id": "{n}", "content": "step", "status": "pending"}], "merge": true}"#,
            20,
            "twenty done",
        ));
        let mut command = home.command(&ctl);
        command
            .args(["send", "--cwd", &cwd, "twenty steps"])
            .stdout(Stdio::piped());
        let began = Instant::now();
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        twenty.push(began.elapsed());
        assert_eq!(
            String::from_utf8_lossy(&output.stdout).trim(),
            "twenty done"
        );
    }
    rows.push(Row::from_samples(
        "hermesctl send, a 20-call turn, whole process".into(),
        &mut twenty,
        "within 25% of the tree before issue 16",
    ));
    let rss = rss_kib(daemon_pid(&home));
    rows.push(Row {
        what: format!("hermesd RSS after {runs} such turns"),
        median: format!("{:.1} MiB", rss as f64 / 1024.0),
        p90: String::new(),
        target: "(Python -z: 113 MiB)",
    });
    print("Agent loop (fake model on loopback)", &rows);

    // 3. Fixed request overhead.
    let last = server.requests().pop().unwrap();
    let system = last.body["messages"][0]["content"].as_str().unwrap();
    println!("\n| tool | bytes | est. tokens | Python bytes | ratio |\n|---|---|---|---|---|");
    let mut total = 0;
    for tool in last.body["tools"].as_array().unwrap() {
        let name = tool["function"]["name"].as_str().unwrap();
        let bytes = serde_json::to_string(tool).unwrap().len();
        total += bytes;
        let python = PYTHON_SCHEMA_BYTES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| *b);
        let ratio = python.map_or("—".to_string(), |p| {
            format!("{:.2}", bytes as f64 / p as f64)
        });
        let python = python.map_or("—".to_string(), |p| p.to_string());
        println!(
            "| {name} | {bytes} | {} | {python} | {ratio} |",
            bytes.div_ceil(4)
        );
    }
    println!(
        "| all tools | {total} | {} | 39,774 (17 tools) | |",
        total.div_ceil(4)
    );
    println!(
        "| system prompt | {} | {} | {PYTHON_SYSTEM_PROMPT_BYTES} | {:.2} |",
        system.len(),
        system.len().div_ceil(4),
        system.len() as f64 / PYTHON_SYSTEM_PROMPT_BYTES as f64
    );
}
