//! API server benchmark against the real daemon (issue 20's targets), in two parts.
//!
//! **The daemon alone**, raw HTTP over loopback, the fake model answering `ok` at once:
//!
//! 1. `POST /v1/chat/completions`, not streamed (target: median < 5 ms of daemon time). The time
//!    is the client's, from the request to the last byte of the answer. Each sample is a new
//!    conversation (a new first message), made, run and stored. The fake model is then timed
//!    alone with the same client and a streamed request like the daemon's; the daemon's time is
//!    the completion's median less the model's.
//! 2. SIZE concurrent streaming requests (`max_concurrent_runs: 0`; target: daemon RSS < 40 MiB),
//!    all sent at once, each read to `[DONE]`, with the daemon's RSS peak (`VmHWM`, reset first
//!    where the kernel allows) read after.
//!
//! **Beside Python Hermes**, the same `openai` SDK script (`tests/py/api_bench.py`) against
//! hermesd's API server and against Python Hermes' (`hermes gateway run` from the venv named by
//! `HERMESD_BENCH_HERMES`, which `scripts/test` provisions), each with its own fake model whose
//! every turn runs one `terminal` call (`echo hi`) and then answers: the first completion, the
//! median of the later ones, concurrent streams, and each server's RSS after. Without
//! `HERMESD_BENCH_HERMES` the Python side is reported as not measured.
//!
//! `cargo build --release --workspace --bins && target/release/bench-api [SIZE]`: SIZE latency
//! samples and SIZE concurrent streams (default 100; CI's smoke run is 2); the SDK part runs
//! min(SIZE, 10) completions and min(SIZE, 20) streams on each server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{path::Path, time::Instant};

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    http,
    python_hermes::{self, PythonGateway},
    report::{Row, ms, percentile, print, value_row},
};
use serde_json::Value;

const KEY: &str = "bench-key-0123456789abcdef";
const DEFAULT_SIZE: usize = 100;

/// One chat completion over a new connection; the whole answer.
async fn post(port: u16, body: &str) -> http::Answer {
    let auth = [("Authorization", format!("Bearer {KEY}"))];
    http::post(port, "/v1/chat/completions", &auth, body).await
}

fn chat(text: &str, stream: bool) -> String {
    serde_json::json!({"model": "hermes-agent", "stream": stream,
                       "messages": [{"role": "user", "content": text}]})
    .to_string()
}

/// A daemon serving the API on a free port, its model `llm`; its home and port.
async fn daemon(llm: &FakeLlm) -> (TestHome, u16) {
    let home = TestHome::new();
    home.use_fake_model(
        llm,
        "model:\n  context_length: 200000\ngateway:\n  api_server:\n    max_concurrent_runs: 0\n",
    );
    let port = http::free_port();
    home.write(
        ".env",
        &format!("API_SERVER_ENABLED=true\nAPI_SERVER_PORT={port}\nAPI_SERVER_KEY={KEY}\n"),
    );
    home.ctl_async(&["status"]).await.ok();
    http::listening("the API server listens", port).await;
    (home, port)
}

/// The daemon alone: its rows, and whether every stream finished.
async fn daemon_alone(size: usize) -> (Vec<Row>, bool) {
    let replies = (0..size * 2).map(|_| Reply::text("ok")).collect();
    let llm = FakeLlm::start(replies).await;
    let (home, port) = daemon(&llm).await;
    let _stop = StopOnDrop(&home);
    let idle = home.daemon_rss_mib();

    let mut samples = Vec::new();
    for i in 0..size {
        let started = Instant::now();
        let answer = post(port, &chat(&format!("sample {i}"), false)).await;
        samples.push(started.elapsed());
        assert_eq!(answer.status, 200, "{}", answer.body);
    }

    // The fake model alone, the same client and a streamed request like the daemon's: what the
    // completion's time spends outside the daemon.
    let mut model = Vec::new();
    for i in 0..size {
        llm.push(Reply::text("ok"));
        let started = Instant::now();
        let answer = http::post(
            llm.addr().port(),
            "/v1/chat/completions",
            &[],
            &chat(&format!("model {i}"), true),
        )
        .await;
        model.push(started.elapsed());
        assert_eq!(answer.status, 200, "{}", answer.body);
    }
    let daemon_share = percentile(&mut samples, 0.5).saturating_sub(percentile(&mut model, 0.5));

    let peak_reset = home.reset_daemon_peak();
    let streams = (0..size).map(|i| {
        tokio::spawn(async move { post(port, &chat(&format!("stream {i}"), true)).await })
    });
    let started = Instant::now();
    let mut done = 0;
    for stream in streams {
        if stream.await.unwrap().body.contains("data: [DONE]") {
            done += 1;
        }
    }
    let all = started.elapsed();
    let peak = home.daemon_status_mib("VmHWM:");
    let peak_note = if peak_reset {
        ""
    } else {
        " (peak since start)"
    };
    let rows = vec![
        Row::with_p95(
            format!("chat completion, not streamed ({size} samples)"),
            &mut samples,
            "",
        ),
        Row::with_p95(
            format!("the fake model alone, the same client ({size} samples)"),
            &mut model,
            "",
        ),
        value_row(
            "daemon time: the completion's median less the model's".into(),
            ms(daemon_share),
            "< 5 ms",
        ),
        value_row(
            format!("{size} concurrent streams: finished with [DONE]"),
            format!("{done} in {:.0} ms", all.as_secs_f64() * 1000.0),
            "all",
        ),
        value_row(
            "daemon RSS idle, with the API server".into(),
            format!("{idle:.1} MiB"),
            "",
        ),
        value_row(
            format!("daemon RSS peak, {size} streams{peak_note}"),
            format!("{peak:.1} MiB"),
            "< 40 MiB",
        ),
    ];
    (rows, done == size)
}

/// What `api_bench.py` measured on one server, with the server's RSS after (MiB).
struct SdkRun {
    first: f64,
    later_median: Option<f64>,
    streams: usize,
    finished: usize,
    streams_seconds: f64,
    rss_mib: f64,
    /// Turns whose `terminal` call ran (its result, `hi`, came back to the model).
    ran_terminal: usize,
}

/// Run `tests/py/api_bench.py` against `base`.
async fn sdk_bench(base: &str, count: usize, concurrent: usize) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("py/api_bench.py");
    let mut command = hermes_tests::python();
    command
        .arg(script)
        .arg(base)
        .arg(KEY)
        .arg(count.to_string())
        .arg(concurrent.to_string());
    let output = tokio::process::Command::from(command)
        .output()
        .await
        .unwrap_or_else(|e| panic!("cannot run Python ({e}): {}", hermes_tests::PYTHON_HINT));
    assert!(
        output.status.success(),
        "api_bench.py against {base} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("api_bench.py prints one JSON document")
}

impl SdkRun {
    fn from(measured: &Value, rss_mib: f64, llm: &FakeLlm) -> Self {
        let mut sequential: Vec<f64> = measured["sequential"]
            .as_array()
            .expect("sequential")
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        let first = sequential.remove(0);
        sequential.sort_by(f64::total_cmp);
        let concurrent = &measured["concurrent"];
        Self {
            first,
            later_median: sequential.get(sequential.len() / 2).copied(),
            streams: concurrent["n"].as_u64().unwrap_or(0) as usize,
            finished: concurrent["finished"].as_u64().unwrap_or(0) as usize,
            streams_seconds: concurrent["seconds"].as_f64().unwrap_or(0.0),
            rss_mib,
            ran_terminal: llm
                .chat_requests()
                .iter()
                .filter(|r| r.tool_results().iter().any(|t| t.contains("hi")))
                .count(),
        }
    }

    /// Every stream finished and every turn ran its terminal call.
    fn complete(&self, turns: usize) -> bool {
        self.finished == self.streams && self.ran_terminal >= turns
    }
}

/// A model for the SDK part: every turn one `terminal` call, then an answer.
async fn terminal_model() -> FakeLlm {
    FakeLlm::start(vec![Reply::every_turn(
        "terminal",
        r#"{"command": "echo hi"}"#,
        "done",
    )])
    .await
}

fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{:.1} ms", s * 1000.0)
    } else {
        format!("{s:.2} s")
    }
}

/// "hermesd X · Python Y (N×)", or Python's side as not measured.
fn beside(hermesd: f64, python: Option<f64>, show: fn(f64) -> String) -> String {
    match python {
        Some(p) if hermesd > 0.0 => format!(
            "hermesd {} · Python {} ({:.0}×)",
            show(hermesd),
            show(p),
            p / hermesd
        ),
        Some(p) => format!("hermesd {} · Python {}", show(hermesd), show(p)),
        None => format!("hermesd {} · Python not measured", show(hermesd)),
    }
}

/// The SDK part: hermesd's rows beside Python Hermes', and whether every stream finished.
async fn beside_python(size: usize) -> (Vec<Row>, bool) {
    let count = size.clamp(1, 10);
    let concurrent = size.clamp(1, 20);
    let llm = terminal_model().await;
    let (home, port) = daemon(&llm).await;
    let ours = {
        let _stop = StopOnDrop(&home);
        let measured = sdk_bench(&format!("http://127.0.0.1:{port}"), count, concurrent).await;
        SdkRun::from(&measured, home.daemon_rss_mib(), &llm)
    };
    let theirs = match python_hermes::executable() {
        Some(hermes) => {
            let llm = terminal_model().await;
            let gateway = PythonGateway::start(&hermes, &llm, KEY).await;
            let base = format!("http://127.0.0.1:{}", gateway.port);
            let measured = sdk_bench(&base, count, concurrent).await;
            Some(SdkRun::from(&measured, gateway.status_mib("VmRSS:"), &llm))
        }
        None => None,
    };
    let theirs = theirs.as_ref();
    let mib = |m: f64| format!("{m:.1} MiB");
    let mut rows = vec![value_row(
        "SDK: first completion, one terminal call in the turn".into(),
        beside(ours.first, theirs.map(|t| t.first), seconds),
        "(Python, measured before: 6.3 s)",
    )];
    if let Some(median) = ours.later_median {
        rows.push(value_row(
            format!("SDK: median of the next {} completions", count - 1),
            beside(median, theirs.and_then(|t| t.later_median), seconds),
            "",
        ));
    }
    rows.push(value_row(
        format!("SDK: {concurrent} concurrent streams, all finished"),
        beside(
            ours.streams_seconds,
            theirs.map(|t| t.streams_seconds),
            seconds,
        ),
        "",
    ));
    rows.push(value_row(
        "SDK: server RSS after".into(),
        beside(ours.rss_mib, theirs.map(|t| t.rss_mib), mib),
        "< 40 MiB (Python, measured before: 135 MiB)",
    ));
    let turns = count + concurrent;
    let ran = |r: &SdkRun| format!("{}/{turns}", r.ran_terminal);
    rows.push(value_row(
        "SDK: turns whose terminal call ran".into(),
        format!(
            "hermesd {} · Python {}",
            ran(&ours),
            theirs.map_or("not measured".into(), ran)
        ),
        "all",
    ));
    let complete = |r: &SdkRun| r.complete(turns);
    (rows, complete(&ours) && theirs.is_none_or(complete))
}

#[tokio::main]
async fn main() {
    let size: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(DEFAULT_SIZE)
        .max(1);
    let (mut rows, all_alone) = daemon_alone(size).await;
    let (sdk_rows, all_sdk) = beside_python(size).await;
    rows.extend(sdk_rows);
    print(
        "API server (hermesd; Python Hermes 0.19.0 beside it where provisioned)",
        &rows,
    );
    if !(all_alone && all_sdk) {
        eprintln!("bench-api: not every stream finished, or a turn did not run its terminal call");
        std::process::exit(1);
    }
}
