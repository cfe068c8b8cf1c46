//! Benchmarks of live sessions against the fake model, over the real socket: event fan-out delay
//! to 10 attached clients, daemon RSS with 1,000 stored and 50 live sessions, and how fast
//! `hermesctl attach` shows the backlog of a 1,000-message session.
//!
//! `cargo build --release --workspace --bins && target/release/bench-hub [RUNS]` (RUNS: `attach`
//! samples, default 20; the fan-out and RSS setups are fixed).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{
    io::{BufRead, BufReader},
    process::Stdio,
    time::{Duration, Instant, SystemTime},
};

use hermes_proto::pb::{self, client_frame};
use hermes_tests::{
    TestHome, binary,
    events::{self, Attached, kind_name},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    report::{Row, print},
    seed,
};

const SUBSCRIBERS: usize = 10;
const CHUNKS: usize = 10_000;
const ATTACH_SAMPLES: usize = 20;

fn delay_since(at: &prost_types::Timestamp) -> Duration {
    let sent = SystemTime::UNIX_EPOCH + Duration::new(at.seconds as u64, at.nanos as u32);
    SystemTime::now().duration_since(sent).unwrap_or_default()
}

#[tokio::main]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(ATTACH_SAMPLES)
        .max(1);
    let chunks: Vec<String> = (0..CHUNKS).map(|i| format!("t{i} ")).collect();
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    // A fast model: 1,000 deltas a second (real ones stream 50–200 tokens a second).
    let server = FakeLlm::start(vec![Reply::text_chunks(&refs).with_delay_ms(1)]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let seeded = home.path().to_path_buf();
    tokio::task::spawn_blocking(move || seed::sessions(&seeded, 1_000, "cli", 4))
        .await
        .unwrap();
    // Counted replies: no background reviews. BENCH_CONFIG adds YAML (to compare settings).
    let extra = std::env::var("BENCH_CONFIG").unwrap_or_default();
    home.use_fake_model(
        &server,
        &format!("memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n{extra}"),
    );
    home.ctl_async(&["status"]).await.ok();
    let mut rows = Vec::new();

    // 1. Fan-out: 10 clients attached to one session while a turn streams 10,000 deltas.
    let session = events::create_session(&home.socket(), home.path()).await;
    let mut clients = Vec::new();
    for _ in 0..SUBSCRIBERS {
        let mut client = Attached::open(&home.socket(), &session.id, 0, true).await;
        client.until("replay_done").await;
        clients.push(client);
    }
    let mut readers = Vec::new();
    for mut client in clients {
        readers.push(tokio::spawn(async move {
            let mut delays = Vec::with_capacity(CHUNKS + 16);
            loop {
                let event = client.next().await;
                if let Some(at) = &event.at {
                    delays.push(delay_since(at));
                }
                match kind_name(&event) {
                    "turn_finished" | "turn_failed" => return delays,
                    "lagged" => panic!("a subscriber lagged"),
                    _ => {}
                }
            }
        }));
    }
    let driver = Attached::open(&home.socket(), &session.id, 0, false).await;
    driver
        .send(client_frame::Kind::UserInput(pb::UserInput {
            text: "stream".into(),
            ..pb::UserInput::default()
        }))
        .await;
    let mut delays = Vec::new();
    for reader in readers {
        delays.extend(reader.await.unwrap());
    }
    let events = delays.len();
    delays.sort();
    let p = |q: f64| delays[((delays.len() - 1) as f64 * q) as usize];
    rows.push(Row {
        what: format!(
            "event delay, emission to receipt, {SUBSCRIBERS} clients, {events} events: p50"
        ),
        median: format!("{:.3} ms", p(0.5).as_secs_f64() * 1000.0),
        p90: format!("{:.3} ms", p(0.9).as_secs_f64() * 1000.0),
        target: "",
    });
    rows.push(Row {
        what: "the same: p99".into(),
        median: format!("{:.3} ms", p(0.99).as_secs_f64() * 1000.0),
        p90: String::new(),
        target: "< 2 ms",
    });
    drop(driver);

    // 2. RSS with 1,000 stored sessions and 50 live ones (each with an attached client).
    let mut live = Vec::new();
    for _ in 0..50 {
        let s = events::create_session(&home.socket(), home.path()).await;
        let mut client = Attached::open(&home.socket(), &s.id, 0, true).await;
        client.until("replay_done").await;
        live.push(client);
    }
    let status = home.ctl_async(&["status", "--json"]).await.json();
    rows.push(Row {
        what: format!(
            "hermesd RSS, 1,000 stored sessions, {} live",
            status["live_sessions"]
        ),
        median: format!("{:.1} MiB", home.daemon_rss_mib()),
        p90: String::new(),
        target: "< 40 MiB",
    });
    drop(live);

    // 3. hermesctl attach on a 1,000-message session: time to the first backlog line.
    server.push(Reply::text("ok"));
    let out = home.ctl_async(&["send", "--json", "first"]).await.json();
    let id = out["session_id"].as_str().unwrap().to_string();
    let channel = hermes_proto::client::connect(&home.socket()).await.unwrap();
    let mut sessions = pb::sessions_client::SessionsClient::new(channel);
    for i in 0..499 {
        server.push(Reply::text(&format!("answer {i}")));
        sessions
            .send(pb::SendRequest {
                session_id: id.clone(),
                text: format!("question {i}"),
                ..pb::SendRequest::default()
            })
            .await
            .unwrap();
    }
    let ctl = binary("hermesctl");
    let mut samples = Vec::new();
    for _ in 0..runs {
        let mut command = home.command(&ctl);
        command
            .args(["attach", "--read-only", &id])
            .stdout(Stdio::piped());
        let began = Instant::now();
        let elapsed = tokio::task::spawn_blocking(move || {
            let mut child = command.spawn().unwrap();
            let mut line = String::new();
            let mut stdout = BufReader::new(child.stdout.take().unwrap());
            while line.trim().is_empty() {
                line.clear();
                stdout.read_line(&mut line).unwrap();
            }
            let elapsed = began.elapsed();
            child.kill().unwrap();
            child.wait().unwrap();
            elapsed
        })
        .await
        .unwrap();
        samples.push(elapsed);
    }
    rows.push(Row::from_samples(
        "hermesctl attach, 1,000-message session: first backlog line".into(),
        &mut samples,
        "< 50 ms",
    ));
    print("Live sessions (fake model, real socket)", &rows);
}
