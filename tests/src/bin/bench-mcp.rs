//! Benchmarks of the MCP client and `execute_code` against issue 22's targets, through the real
//! daemon and the fake model on loopback.
//!
//! `cargo build --release --workspace --bins && target/release/bench-mcp [RUNS]`
//! (needs the test peers `scripts/test` provisions: the venv with the `mcp` SDK and
//! `mcp-server-time`, and server-everything from npm).
//!
//! How each figure is taken, so that it is the daemon's own time:
//! - MCP call overhead: the fake model asks for `echo` of `tests/py/mcp_changing_server.py`
//!   over stdio, one call per model step. The daemon logs each step's tool time (`tools_us`, at
//!   debug level: from the call's start, with its ToolStarted event, through dispatch, the
//!   rmcp request, the stdio round trip, the result's conversion and masking). The same call's
//!   bare round trip is timed here with rmcp itself (the client library the daemon uses) against
//!   another instance of the same server, so the server's own time and the pipe are in both.
//!   The bare calls are spaced as the daemon's are (by the model step between two calls, taken
//!   from a warm-up turn: the server idles as long before each), and alternate with the daemon's
//!   turns, so both see the machine alike. Overhead = median daemon tool time − median bare
//!   round trip. A built-in call's tool time
//!   (`todo`) is printed for scale: the part of the overhead every tool call has.
//! - READY: spawn → READY=1 (sd_notify) of a daemon with no MCP server, and of one with five
//!   (two SDK servers, mcp-server-time, server-everything, one whose command does not exist),
//!   started alternately; the figure is the difference of the medians.
//! - execute_code: one script making 50 `read_file` calls, and the same script making none. The
//!   daemon's tool time of each (`tools_us`) holds Python's start-up and the script's work;
//!   the difference is the 50 calls. It still holds the Python side of each call (encoding, the
//!   socket), so it bounds the daemon's time from above. The script's own clock around its loop
//!   is printed beside it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench binary fails by panicking

use std::{
    path::PathBuf,
    process::{Child, Stdio},
    time::{Duration, Instant},
};

use hermes_proto::pb;
use hermes_tests::{
    TestHome, binary,
    daemon::{notify_socket, wait_notify},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    report::{self, Row, percentile, value_row},
};
use nix::{
    sys::signal::{Signal, kill},
    unistd::Pid,
};
use rmcp::{ServiceExt, model::CallToolRequestParams, transport::TokioChildProcess};

const HINT: &str = "run the benches with scripts/test, which provisions the MCP servers \
    (the test venv with the mcp SDK and mcp-server-time; server-everything with npm ci)";

/// Calls of one model step loop, per turn.
const CALLS_PER_TURN: usize = 20;

fn python() -> String {
    let python = std::env::var("HERMESD_TEST_PYTHON")
        .unwrap_or_else(|_| panic!("HERMESD_TEST_PYTHON is not set: {HINT}"));
    assert!(
        PathBuf::from(&python).exists(),
        "{python} is missing: {HINT}"
    );
    python
}

fn changing_script() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("py/mcp_changing_server.py")
        .display()
        .to_string()
}

fn everything() -> String {
    let modules = std::env::var("HERMESD_TEST_NODE_MODULES")
        .unwrap_or_else(|_| panic!("HERMESD_TEST_NODE_MODULES is not set: {HINT}"));
    let entry =
        PathBuf::from(modules).join("@modelcontextprotocol/server-everything/dist/index.js");
    assert!(entry.exists(), "{} is missing: {HINT}", entry.display());
    entry.display().to_string()
}

/// `a − b` in milliseconds, with its sign (a difference of medians may come out negative).
fn difference(a: Duration, b: Duration) -> String {
    format!("{:.2} ms", (a.as_secs_f64() - b.as_secs_f64()) * 1000.0)
}

/// The daemon's per-step log values of `key` (microseconds), in order.
fn logged_micros(home: &TestHome, key: &str) -> Vec<Duration> {
    std::fs::read_to_string(home.path().join("logs/hermesd.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("iteration"))
        .filter_map(|l| l.split(key).nth(1))
        .filter_map(|v| v.split_whitespace().next()?.parse().ok())
        .map(Duration::from_micros)
        .collect()
}

/// Wait until the log holds `n` step lines (the log is written off the turn's path).
async fn logged_steps(home: &TestHome, n: usize) -> Vec<Duration> {
    hermes_tests::wait::until(
        &format!("the daemon's log holds {n} steps"),
        Duration::from_secs(20),
        || async {
            let steps = logged_micros(home, "tools_us=");
            (steps.len() >= n).then_some(steps)
        },
    )
    .await
}

async fn send(
    sessions: &mut pb::sessions_client::SessionsClient<tonic::transport::Channel>,
    cwd: &str,
) -> pb::SendResponse {
    sessions
        .send(pb::SendRequest {
            text: "go".into(),
            cwd: cwd.into(),
            ..pb::SendRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
}

/// The MCP rows: the daemon's time of an echo call, the bare round trip, the difference.
async fn mcp_call_rows(calls: usize) -> Vec<Row> {
    let python = python();
    let script = changing_script();

    // The bare client: rmcp over stdio, against its own instance of the server.
    let mut command = tokio::process::Command::new(&python);
    command.arg(&script);
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {script}: {e} ({HINT})"));
    let client = ().serve(transport).await.unwrap();
    let mut number = 0;
    let mut bare_call = async || {
        number += 1;
        let arguments = serde_json::json!({ "message": format!("m{number}") });
        let params = CallToolRequestParams::new("echo")
            .with_arguments(arguments.as_object().cloned().unwrap());
        let began = Instant::now();
        client.call_tool(params).await.unwrap();
        began.elapsed()
    };

    // The daemon, with the same server, one call per model step.
    let llm = FakeLlm::start(Vec::new()).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let work = tempfile::tempdir().unwrap();
    home.use_fake_model(
        &llm,
        &format!(
            "logging:\n  level: debug\nmemory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n\
             mcp_servers:\n  changing:\n    command: {python}\n    args: [{script}]\n"
        ),
    );
    home.ctl_async(&["status"]).await.ok();
    let channel = hermes_proto::client::connect(&home.socket()).await.unwrap();
    let mut sessions = pb::sessions_client::SessionsClient::new(channel);
    let cwd = work.path().display().to_string();
    let mut turn = async |tool: &str, arguments: &str| {
        llm.push(Reply::tool_loop(tool, arguments, CALLS_PER_TURN, "looped"));
        let reply = send(&mut sessions, &cwd).await;
        assert_eq!(reply.tool_calls as usize, CALLS_PER_TURN, "{reply:?}");
    };
    let echo = r#"{"message": "m{n}"}"#;

    // A warm-up turn (and bare calls), which also gives the spacing of the daemon's calls: the
    // server idles between two calls for a model step, so the bare calls idle as long.
    turn("mcp__changing__echo", echo).await;
    for _ in 0..CALLS_PER_TURN {
        bare_call().await;
    }
    let requests = llm.chat_requests();
    let mut intervals: Vec<Duration> = requests
        .windows(2)
        .map(|pair| pair[1].received_at - pair[0].received_at)
        .collect();
    let mut warm = logged_steps(&home, CALLS_PER_TURN).await;
    let spacing = percentile(&mut intervals, 0.5).saturating_sub(percentile(&mut warm, 0.5));

    // Daemon turns and bare calls alternate, so both see the machine as it is.
    let turns = calls.div_ceil(CALLS_PER_TURN);
    let mut bare = Vec::with_capacity(turns * CALLS_PER_TURN);
    for _ in 0..turns {
        turn("mcp__changing__echo", echo).await;
        for _ in 0..CALLS_PER_TURN {
            tokio::time::sleep(spacing).await;
            bare.push(bare_call().await);
        }
    }
    let results = llm.chat_requests();
    let last = results.last().unwrap().tool_results();
    assert!(last[0].contains("Echo: m"), "{last:?}");
    // For scale: a built-in call on the same path (start event, dispatch, result), no MCP.
    for _ in 0..turns {
        turn(
            "todo",
            r#"{"todos": [{"id": "{n}", "content": "step", "status": "pending"}], "merge": true}"#,
        )
        .await;
    }
    client.cancel().await.ok();
    let mcp_steps = (turns + 1) * CALLS_PER_TURN;
    let steps = logged_steps(&home, mcp_steps + turns * CALLS_PER_TURN).await;
    let mut daemon: Vec<Duration> = steps[CALLS_PER_TURN..mcp_steps].to_vec();
    let mut builtin: Vec<Duration> = steps[mcp_steps..].to_vec();
    let daemon_median = percentile(&mut daemon, 0.5);
    let bare_median = percentile(&mut bare, 0.5);
    vec![
        Row::from_samples(
            format!(
                "MCP echo over stdio: daemon tool time per call ({} calls)",
                daemon.len()
            ),
            &mut daemon,
            "",
        ),
        Row::from_samples(
            format!(
                "same call, bare rmcp round trip, {:.1} ms apart (server + pipe, {} calls)",
                spacing.as_secs_f64() * 1000.0,
                bare.len()
            ),
            &mut bare,
            "",
        ),
        Row::from_samples(
            format!(
                "for scale: a built-in call (todo), daemon tool time ({} calls)",
                builtin.len()
            ),
            &mut builtin,
            "",
        ),
        value_row(
            "MCP call overhead of the daemon (difference of medians)".into(),
            difference(daemon_median, bare_median),
            "< 1 ms",
        ),
    ]
}

/// Spawn hermesd on `home`: spawn → READY=1, and the child.
fn start_once(home: &TestHome) -> (Duration, Child) {
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
    (began.elapsed(), child)
}

fn stop(mut child: Child) {
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    child.wait().unwrap();
}

/// READY with no MCP server and with five (one broken), started alternately.
fn ready_rows(runs: usize) -> Vec<Row> {
    let python = python();
    let script = changing_script();
    let time = PathBuf::from(&python).with_file_name("mcp-server-time");
    assert!(time.exists(), "{} is missing: {HINT}", time.display());
    let none = TestHome::new();
    let five = TestHome::new();
    five.write(
        "config.yaml",
        &format!(
            "mcp_servers:\n  one:\n    command: {python}\n    args: [{script}]\n  two:\n    command: {python}\n    args: [{script}]\n  \
             time:\n    command: {}\n  everything:\n    command: node\n    args: [{}, stdio]\n  \
             broken:\n    command: /nonexistent/mcp-server\n",
            time.display(),
            everything()
        ),
    );
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        let (ready, child) = start_once(&none);
        without.push(ready);
        stop(child);
        let (ready, child) = start_once(&five);
        with.push(ready);
        stop(child);
    }
    // The five were configured: the broken one is reported, the others connect.
    let (_, child) = start_once(&five);
    let listed = five
        .command(&binary("hermesctl"))
        .args(["mcp", "list", "--json"])
        .output()
        .unwrap();
    stop(child);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("broken"), "{listed}");
    let cost = difference(percentile(&mut with, 0.5), percentile(&mut without, 0.5));
    vec![
        Row::from_samples(
            "hermesd start → READY=1, no MCP server".into(),
            &mut without,
            "",
        ),
        Row::from_samples(
            "hermesd start → READY=1, 5 MCP servers (one broken)".into(),
            &mut with,
            "",
        ),
        value_row(
            "READY cost of 5 MCP servers (difference of medians)".into(),
            cost,
            "≤ 2 ms",
        ),
    ]
}

/// A script making `calls` read_file calls, printing its own time of the loop.
fn script(calls: usize) -> Reply {
    let code = format!(
        "import time\nfrom hermes_tools import read_file\nbegan = time.perf_counter()\n\
         for i in range({calls}):\n    read_file(f\"notes/{{i % 5}}.txt\", offset=1 + i // 5)\n\
         print(\"loop_us\", int((time.perf_counter() - began) * 1e6))\n"
    );
    Reply::tool_call(
        "execute_code",
        &serde_json::json!({ "code": code }).to_string(),
    )
}

/// execute_code: the tool time of a 50-call script against the same script with none.
async fn execute_code_rows(runs: usize) -> Vec<Row> {
    let llm = FakeLlm::start(Vec::new()).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join("notes")).unwrap();
    for i in 0..5 {
        let lines: String = (0..20).map(|n| format!("note {i} line {n}\n")).collect();
        std::fs::write(work.path().join(format!("notes/{i}.txt")), lines).unwrap();
    }
    home.use_fake_model(
        &llm,
        "logging:\n  level: debug\nmemory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n\
         command_allowlist: [execute_code]\n",
    );
    home.ctl_async(&["status"]).await.ok();
    let channel = hermes_proto::client::connect(&home.socket()).await.unwrap();
    let mut sessions = pb::sessions_client::SessionsClient::new(channel);
    let cwd = work.path().display().to_string();
    // A warm-up of each, then the two alternately; each turn is one step.
    let order: Vec<usize> = std::iter::repeat_n([50, 0], runs.max(1) + 1)
        .flatten()
        .collect();
    for &calls in &order {
        llm.push(script(calls));
        llm.push(Reply::text("ran"));
        let reply = send(&mut sessions, &cwd).await;
        assert_eq!(reply.answer, "ran", "{reply:?}");
    }
    let steps = logged_steps(&home, order.len()).await;
    let (mut fifty, mut none) = (Vec::new(), Vec::new());
    for (&calls, &took) in order.iter().zip(&steps).skip(2) {
        if calls == 50 {
            fifty.push(took);
        } else {
            none.push(took);
        }
    }
    // The scripts' own clock of their loop, from the results the model read.
    let mut loops: Vec<Duration> = llm
        .chat_requests()
        .iter()
        .filter_map(|r| r.tool_results().pop())
        .filter_map(|text| {
            let result: serde_json::Value = serde_json::from_str(&text).ok()?;
            assert_eq!(result["status"], "success", "{result}");
            (result["tool_calls_made"] == 50).then_some(())?;
            let output = result["output"].as_str()?.to_string();
            let micros = output.split("loop_us").nth(1)?.trim().parse().ok()?;
            Some(Duration::from_micros(micros))
        })
        .skip(1)
        .collect();
    let cost = difference(percentile(&mut fifty, 0.5), percentile(&mut none, 0.5));
    vec![
        Row::from_samples(
            "execute_code, 50 read_file calls: tool time".into(),
            &mut fifty,
            "",
        ),
        Row::from_samples(
            "execute_code, same script with 0 calls: tool time".into(),
            &mut none,
            "",
        ),
        value_row(
            "50 calls from one script: daemon time, upper bound (difference of medians)".into(),
            cost,
            "< 50 ms",
        ),
        Row::from_samples(
            "the same 50 calls by the script's own clock".into(),
            &mut loops,
            "",
        ),
    ]
}

#[tokio::main]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(30);
    let mut rows = tokio::task::spawn_blocking(move || ready_rows(runs))
        .await
        .unwrap();
    rows.extend(mcp_call_rows((runs * 10).max(5)).await);
    rows.extend(execute_code_rows(runs).await);
    report::print(
        &format!("MCP client and execute_code (issue 22) — {runs} runs"),
        &rows,
    );
}
