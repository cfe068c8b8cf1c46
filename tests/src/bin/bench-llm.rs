//! Benchmarks of hermesd's model-provider layer (`hermesd::llm`) against the scripted fake model
//! server, printed as a Markdown table:
//! `cargo run --release -p hermes-tests --bin bench-llm [-- RUNS]` (RUNS: default 30; CI runs 1 as
//! a smoke test, whose numbers mean nothing).
//!
//! The fake server runs on a runtime of its own in another OS thread; the client (`Chain`) runs
//! on a current-thread runtime in the main thread, so the main thread's CPU time, read from
//! `/proc/thread-self/schedstat` (nanoseconds), is the provider layer's cost alone.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench binary fails by panicking

use hermes_tests::counting;
use std::time::{Duration, Instant};

use hermes_tests::{
    fake_llm::{FakeLlm, Reply, chain},
    report::{self, Row, ms, percentile},
};
use hermesd::llm::{
    ApiMode, Chain, ChainNotice, ChatMessage, ChatRequest, Completion, Endpoint, EventSink,
    StreamEvent,
};
use tokio::runtime::Runtime;

/// Chunks per streamed response.
const CHUNKS: usize = 1_000;
/// Stale timeout of the stalled primary endpoint.
const STALE: Duration = Duration::from_secs(2);
/// Runs of the stalled-primary measurement (each takes about `STALE`).
const STALL_RUNS: usize = 4;

/// The fake server, started on a current-thread runtime in a thread of its own that serves
/// until the process exits. Replies are pushed from the main thread.
fn start_server() -> FakeLlm {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("fake-llm".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                sender.send(FakeLlm::start(Vec::new()).await).unwrap();
                std::future::pending::<()>().await;
            });
        })
        .unwrap();
    receiver.recv().unwrap()
}

/// The calling thread's CPU time. The kernel brings a running thread's total up to date only at
/// ticks and context switches, so sleep a moment first: the value is then exact as of that sleep.
fn thread_cpu() -> Duration {
    std::thread::sleep(Duration::from_micros(50));
    let text = std::fs::read_to_string("/proc/thread-self/schedstat")
        .expect("thread CPU time needs /proc/thread-self/schedstat");
    let nanos = text.split_whitespace().next().unwrap().parse().unwrap();
    Duration::from_nanos(nanos)
}

/// `n` token-sized chunks (4–8 bytes each).
fn token_chunks(n: usize) -> Vec<String> {
    const WORDS: [&str; 16] = [
        " The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog,", " and",
        " Hermes", " agent", " streams", " tokens", " back", " fast.",
    ];
    WORDS.iter().cycle().take(n).map(|w| (*w).into()).collect()
}

fn text_reply(chunks: &[String]) -> Reply {
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
    Reply::text_chunks(&chunks).with_usage(40, chunks.len() as u64)
}

fn endpoint(server: &FakeLlm, model: &str, mode: ApiMode) -> Endpoint {
    server.endpoint(model, mode)
}

fn request() -> ChatRequest {
    ChatRequest {
        system: "You are Hermes, a helpful agent.".into(),
        messages: vec![ChatMessage::user("Tell me about the quick brown fox.")],
        tools: Vec::new(),
        max_tokens: None,
        reasoning_effort: None,
        cache_ttl: None,
    }
}

/// One `chain.complete` on `runtime`; returns the completion and the number of stream events.
/// CPU of only receiving the same streamed response: the request posted with the same HTTP
/// client and the body read to its end with no SSE or JSON work. The provider's overhead is what it
/// spends beyond this ("beyond the network time").
fn raw_receive_row(
    runtime: &Runtime,
    server: &FakeLlm,
    mode: ApiMode,
    label: &str,
    runs: usize,
) -> (Row, Duration, Vec<u8>) {
    let endpoint = endpoint(server, "bench", mode);
    let client = hermesd::llm::HttpClient::new(Duration::from_secs(5)).unwrap();
    let body = match mode {
        ApiMode::ChatCompletions => serde_json::json!({"model": "bench", "stream": true,
            "messages": [{"role": "user", "content": "go"}]}),
        ApiMode::AnthropicMessages => {
            serde_json::json!({"model": "bench", "stream": true, "max_tokens": 10,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}]})
        }
        ApiMode::CodexResponses => serde_json::json!({"model": "bench", "stream": true,
            "store": false, "instructions": "", "input": [{"role": "user", "content": "go"}]}),
    };
    let chunks = token_chunks(CHUNKS);
    let mut samples = Vec::new();
    let mut last_body = Vec::new();
    for run in 0..runs + 5 {
        server.push(text_reply(&chunks));
        let before = thread_cpu();
        let pieces = runtime.block_on(async {
            use futures_util::StreamExt;
            let response = client
                .post(endpoint.url())
                .json(&body)
                .send()
                .await
                .unwrap();
            let mut stream = response.into_stream();
            let mut pieces = Vec::with_capacity(CHUNKS * 2);
            while let Some(piece) = stream.next().await {
                pieces.push(piece.unwrap());
            }
            pieces
        });
        let spent = thread_cpu() - before;
        last_body = pieces.concat();
        assert!(last_body.len() > CHUNKS * 10);
        if run >= 5 {
            samples.push(spent);
        }
    }
    let median = percentile(&mut samples, 0.5);
    (
        Row::from_samples(
            format!("only receiving the same response, {label} (client thread)"),
            &mut samples,
            "",
        ),
        median,
        last_body,
    )
}

/// CPU to decode a received 1,000-chunk body from memory exactly as a live stream is decoded
/// (SSE, JSON, assembly, one event per delta): the provider's cost with the network taken out.
fn decode_row(mode: ApiMode, label: &str, body: &[u8], runs: usize) -> Row {
    let expected = token_chunks(CHUNKS).concat();
    let mut samples = Vec::new();
    for run in 0..runs * 3 + 10 {
        let mut events = 0usize;
        let before = thread_cpu();
        let completion = {
            let mut count = |_: StreamEvent| events += 1;
            let mut sink: EventSink<'_> = &mut count;
            hermesd::llm::decode_stream_body(mode, "bench", body, &mut sink).unwrap()
        };
        let spent = thread_cpu() - before;
        assert_eq!(completion.text, expected);
        assert!(events >= CHUNKS);
        if run >= 10 {
            samples.push(spent);
        }
    }
    Row::from_samples(
        format!(
            "provider CPU per {CHUNKS}-chunk response beyond the network (decode from memory), {label}"
        ),
        &mut samples,
        "< 2 ms",
    )
}

fn complete(runtime: &Runtime, chain: &Chain, request: &ChatRequest) -> (Completion, usize) {
    let mut events = 0;
    let completion = {
        let mut count = |_: StreamEvent| events += 1;
        let mut sink: EventSink<'_> = &mut count;
        let mut notice = |_: ChainNotice| {};
        runtime
            .block_on(chain.complete(request, &mut sink, &mut notice))
            .unwrap()
    };
    (completion, events)
}

/// Client-thread CPU time per streamed response of `CHUNKS` chunks.
fn cpu_row(
    runtime: &Runtime,
    server: &FakeLlm,
    mode: ApiMode,
    label: &str,
    runs: usize,
) -> (Row, Duration) {
    let chain = chain(vec![endpoint(server, "bench", mode)]);
    let request = request();
    let chunks = token_chunks(CHUNKS);
    let expected = chunks.concat();
    let mut samples = Vec::new();
    for run in 0..runs + 5 {
        server.push(text_reply(&chunks));
        let before = thread_cpu();
        let (completion, events) = complete(runtime, &chain, &request);
        let spent = thread_cpu() - before;
        assert_eq!(completion.text, expected);
        assert!(events >= 1);
        if run >= 5 {
            samples.push(spent); // the first runs warm the connection pool up
        }
    }
    let median = percentile(&mut samples, 0.5);
    (
        Row::from_samples(
            format!("provider CPU per streamed response, {CHUNKS} chunks, {label} (client thread)"),
            &mut samples,
            "",
        ),
        median,
    )
}

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

fn kib(bytes: isize) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

fn nth(samples: &mut [isize], p: f64) -> isize {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * p).round() as usize]
}

/// Peak live bytes the client thread allocates during `chain.complete` of `CHUNKS` chunks, less
/// the text's length: on a warm pooled connection, and on a new connection (the previous one
/// closed before counting starts) whose buffers are part of the stream's cost.
fn memory_rows(runtime: &Runtime, server: &FakeLlm, mode: ApiMode, label: &str) -> Vec<Row> {
    let warm = chain(vec![endpoint(server, "bench", mode)]);
    let request = request();
    let chunks = token_chunks(CHUNKS);
    let expected = chunks.concat();
    let measure = |chain: &Chain| {
        server.push(text_reply(&chunks));
        counting::start();
        let (completion, _) = complete(runtime, chain, &request);
        let (_, peak) = counting::stop();
        assert_eq!(completion.text, expected);
        peak - completion.text.len() as isize
    };
    let mut pooled = Vec::new();
    for run in 0..15 {
        let peak = measure(&warm);
        if run >= 5 {
            pooled.push(peak); // the first runs grow the pooled connection's buffers
        }
    }
    drop(warm);
    let mut fresh = Vec::new();
    for _ in 0..6 {
        let chain = chain(vec![endpoint(server, "bench", mode)]);
        fresh.push(measure(&chain));
        runtime.block_on(async move {
            drop(chain); // closes its connection, so the next run's frees do not offset it
            tokio::time::sleep(Duration::from_millis(20)).await;
        });
    }
    vec![
        Row {
            what: format!(
                "memory per in-flight stream beyond its text, {CHUNKS} chunks, {label}, \
                 warm connection (client thread, peak live)"
            ),
            median: kib(nth(&mut pooled, 0.5)),
            p90: kib(nth(&mut pooled, 0.9)),
            target: "< 64 KiB",
        },
        Row {
            what: format!("the same on a new connection, its buffers included, {label}"),
            median: kib(nth(&mut fresh[1..], 0.5)),
            p90: kib(nth(&mut fresh[1..], 0.9)),
            target: "< 64 KiB",
        },
    ]
}

/// Wall time of a `STALE`-timeout primary stalled for 10 s, then a fallback answering; and the
/// same fallback alone.
fn stall_rows(runtime: &Runtime, server: &FakeLlm, runs: usize) -> Vec<Row> {
    let request = request();
    let chunks = token_chunks(20);
    let expected = chunks.concat();
    let fallback = endpoint(server, "fallback", ApiMode::ChatCompletions);

    // A fresh client per run: after abandonment the fallback opens a new connection too (and a
    // reused one meets the fake server's Nagle delay against the client's delayed ACK).
    let mut alone_samples = Vec::new();
    for run in 0..runs + 2 {
        let alone = chain(vec![fallback.clone()]);
        server.push(text_reply(&chunks));
        let began = Instant::now();
        let (completion, _) = complete(runtime, &alone, &request);
        let spent = began.elapsed();
        assert_eq!(completion.text, expected);
        if run >= 2 {
            alone_samples.push(spent);
        }
    }

    let mut primary = endpoint(server, "stalled", ApiMode::ChatCompletions);
    primary.stale_timeout = STALE;
    let both = chain(vec![primary, fallback]);
    let (mut totals, mut after) = (Vec::new(), Vec::new());
    for _ in 0..STALL_RUNS {
        server.push(Reply::stall_before_headers(10_000));
        server.push(text_reply(&chunks));
        let began = Instant::now();
        let (completion, _) = complete(runtime, &both, &request);
        let spent = began.elapsed();
        assert_eq!(completion.text, expected);
        assert_eq!(completion.answered_by, "fake:fallback");
        totals.push(spent);
        after.push(spent.saturating_sub(STALE));
    }
    vec![
        Row::from_samples(
            format!(
                "stalled primary (stale_timeout {} s, no headers for 10 s) → fallback answers, total",
                STALE.as_secs()
            ),
            &mut totals,
            "2 s ± 1 s",
        ),
        Row::from_samples(
            "fallback latency after abandonment (total − stale_timeout)".into(),
            &mut after,
            "its own latency (next row)",
        ),
        Row::from_samples(
            "fallback alone, 20 chunks, OpenAI format, new connection (wall)".into(),
            &mut alone_samples,
            "",
        ),
    ]
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(30)
        .max(1);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let server = start_server();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let mut rows = Vec::new();
    for (mode, label) in [
        (ApiMode::ChatCompletions, "OpenAI format"),
        (ApiMode::AnthropicMessages, "Anthropic format"),
        (ApiMode::CodexResponses, "Responses format"),
    ] {
        let (provider, provider_median) = cpu_row(&runtime, &server, mode, label, runs);
        let (raw, raw_median, body) = raw_receive_row(&runtime, &server, mode, label, runs);
        rows.push(provider);
        rows.push(raw);
        rows.push(Row {
            what: format!("provider CPU beyond receiving (difference of medians), {label}"),
            median: ms(provider_median.saturating_sub(raw_median)),
            p90: String::new(),
            target: "",
        });
        rows.push(decode_row(mode, label, &body, runs));
    }
    rows.extend(memory_rows(
        &runtime,
        &server,
        ApiMode::ChatCompletions,
        "OpenAI format",
    ));
    rows.extend(memory_rows(
        &runtime,
        &server,
        ApiMode::AnthropicMessages,
        "Anthropic format",
    ));
    rows.extend(stall_rows(&runtime, &server, runs));

    report::print(
        &format!(
            "hermesd provider-layer benchmarks — {runs} runs each ({STALL_RUNS} for the stall)"
        ),
        &rows,
    );
}
