//! API server benchmark against the real daemon, with the fake model answering at once
//! (issue 20's targets):
//!
//! 1. **`POST /v1/chat/completions`, not streamed** (target: median < 5 ms of daemon time). The
//!    time is the client's, from the request to the last byte of the answer, over loopback. It
//!    includes the fake model's answer, so it is an upper bound on the daemon's time. Each sample
//!    is a new conversation (a new first message), made, run and stored.
//! 2. **100 concurrent streaming requests** (`max_concurrent_runs: 0`; target: daemon RSS
//!    < 40 MiB). They are all sent at once, each read to `[DONE]`, with the daemon's RSS peak
//!    (`VmHWM`, reset first where the kernel allows) read after.
//!
//! Python Hermes' API server is not started here: its figure (6.3 s for a completion whose turn
//! runs one `terminal` call; 2.99 s for the first one, in `../shared/bench`) is printed for the
//! ratio.
//!
//! `cargo build --release --workspace --bins && target/release/bench-api [SIZE]`: SIZE latency
//! samples and SIZE concurrent streams (default 100; CI's smoke run is 2).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    report::{Row, print, value_row},
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const KEY: &str = "bench-key-0123456789abcdef";
const DEFAULT_SIZE: usize = 100;

/// One HTTP/1.1 request over a new connection; the whole answer.
async fn post(port: u16, body: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {KEY}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

fn chat(text: &str, stream: bool) -> String {
    serde_json::json!({"model": "hermes-agent", "stream": stream,
                       "messages": [{"role": "user", "content": text}]})
    .to_string()
}

#[tokio::main]
async fn main() {
    let size: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(DEFAULT_SIZE)
        .max(1);
    let replies = (0..size * 2).map(|_| Reply::text("ok")).collect();
    let llm = FakeLlm::start(replies).await;
    let home = TestHome::new();
    home.use_fake_model(
        &llm,
        "model:\n  context_length: 200000\ngateway:\n  api_server:\n    max_concurrent_runs: 0\n",
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    home.write(
        ".env",
        &format!("API_SERVER_ENABLED=true\nAPI_SERVER_PORT={port}\nAPI_SERVER_KEY={KEY}\n"),
    );
    home.ctl_async(&["status"]).await.ok();
    let _stop = StopOnDrop(&home);
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "the API server did not listen");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let idle = home.daemon_rss_mib();

    let mut samples = Vec::new();
    for i in 0..size {
        let started = Instant::now();
        let answer = post(port, &chat(&format!("sample {i}"), false)).await;
        samples.push(started.elapsed());
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    let peak_reset = home.reset_daemon_peak();
    let streams = (0..size).map(|i| {
        tokio::spawn(async move { post(port, &chat(&format!("stream {i}"), true)).await })
    });
    let started = Instant::now();
    let mut done = 0;
    for stream in streams {
        if stream.await.unwrap().contains("data: [DONE]") {
            done += 1;
        }
    }
    let all = started.elapsed();
    let peak = home.daemon_status_mib("VmHWM:");

    let rows: Vec<Row> = vec![
        Row::with_p95(
            format!("chat completion, not streamed ({size} samples)"),
            &mut samples,
            "< 5 ms (Python: 2.99 s first, 6.3 s with a terminal call)",
        ),
        value_row(
            format!("{size} concurrent streams: finished with [DONE]"),
            format!("{done} in {:.0} ms", all.as_secs_f64() * 1000.0),
            "all",
        ),
        value_row(
            "daemon RSS idle, with the API server".into(),
            format!("{idle:.1} MiB"),
            "(Python gateway: 94 MiB)",
        ),
        value_row(
            format!(
                "daemon RSS peak, {size} streams{}",
                if peak_reset {
                    ""
                } else {
                    " (peak since start)"
                }
            ),
            format!("{peak:.1} MiB"),
            "< 40 MiB (Python: 135 MiB after one request)",
        ),
    ];
    print("API server (hermesd, fake model answering at once)", &rows);
    if done != size {
        std::process::exit(1);
    }
}
