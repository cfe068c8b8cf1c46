//! Long-conversation benchmark, on the corpus Python Hermes was measured with
//! (`../shared/bench/hermes_session_search_bench.py generate --messages 100000` writes it as a
//! Python `state.db`): the import of that state.db into a fresh hermesd.db, the database size,
//! `sessions search` at the store level (the Python bench's 20 queries, two passes, the second
//! reported) with the default bounded ranking and with every match ranked, and the compression
//! of a 200-message session excluding the model's time (read, prepare, assemble, store).
//!
//! `cargo run --release -p hermes-tests --bin bench-history -- /path/to/state.db [RUNS]` (RUNS:
//! compressions timed, default 21).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench binary fails by panicking

use std::time::{Duration, Instant};

use hermes_tests::report::{Row, ms, print};
use hermesd::{
    agent::{compress, stored_rows, to_chat},
    llm::ChatMessage,
    store::{
        self, Lineage, NewMessage, NewSession, Store, hermes_import,
        search::{Ranking, SearchQuery},
    },
};

/// The Python bench's query set (`hermes_session_search_bench.py queries`).
const QUERIES: [&str; 20] = [
    "in",
    "be",
    "self",
    "call",
    "some",
    "during",
    "often",
    "shared",
    "desirable",
    "distinguished",
    "all matches",
    "variables thus",
    "explicit OR exits",
    "note NOT this",
    "\"and that\"",
    "list*",
    "col*",
    "expression execution newline",
    "echo dictionary",
    "terminal rules",
];

fn size(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1_048_576.0)
}

async fn search_pass(store: &Store, ranking: Ranking) -> Vec<Duration> {
    let mut samples = Vec::new();
    for text in QUERIES {
        let query = SearchQuery {
            text: text.to_string(),
            limit: 20,
            ranking,
            ..SearchQuery::default()
        };
        let began = Instant::now();
        // Some queries match only tool-call JSON, which Python indexes and hermesd does not:
        // they find nothing here, and are timed all the same.
        store
            .read(move |conn| store::search::search(conn, &query))
            .await
            .unwrap();
        samples.push(began.elapsed());
    }
    samples
}

/// A 200-message session: user, assistant with a terminal call, a 2–20 KB result, an answer.
fn long_session() -> Vec<NewMessage> {
    let mut rows = Vec::new();
    for turn in 0..50 {
        rows.push(NewMessage {
            role: "user".into(),
            content: format!("Step {turn}: look at the build log and tell me what failed."),
            ..NewMessage::default()
        });
        let call = format!(
            r#"[{{"id":"call_{turn}","type":"function","function":{{"name":"terminal","arguments":"{{\"command\":\"make -k 2>&1 | tail -n {turn}\"}}"}}}}]"#
        );
        rows.push(NewMessage {
            role: "assistant".into(),
            tool_calls: Some(call),
            ..NewMessage::default()
        });
        let output = "cc -O2 -c src/module.c -o build/module.o: warning: unused variable\n"
            .repeat(30 + (turn * 37) % 270);
        rows.push(NewMessage {
            role: "tool".into(),
            content: output,
            tool_call_id: Some(format!("call_{turn}")),
            tool_name: Some("terminal".into()),
            ..NewMessage::default()
        });
        rows.push(NewMessage {
            role: "assistant".into(),
            content: format!("Step {turn}: the build stops at module.o; the warning is harmless."),
            ..NewMessage::default()
        });
    }
    rows
}

/// Times of compressing a 200-message session without the model: (reading the segment,
/// preparing and assembling the new context; storing the new segment), and the token estimates.
struct Compression {
    total: Vec<Duration>,
    rebuild: Vec<Duration>,
    tokens: (u64, u64),
}

async fn compression_samples(store: &Store, runs: usize) -> Compression {
    let settings = compress::CompressionSettings::default();
    let mut out = Compression {
        total: Vec::new(),
        rebuild: Vec::new(),
        tokens: (0, 0),
    };
    for _ in 0..runs {
        let session = store
            .write(|tx| {
                let row = store::insert_session(
                    tx,
                    &NewSession {
                        source: "cli".into(),
                        title: None,
                        model: String::new(),
                        cwd: "/".into(),
                        parent_session_id: None,
                        lineage: Lineage::Root,
                    },
                )?;
                for message in long_session() {
                    store::append_message(tx, &row.id, &message)?;
                }
                Ok(row)
            })
            .await
            .unwrap();
        // The setup's writes leave a WAL to checkpoint; that debt is not the compression's.
        store
            .with_writer_blocking(|conn| {
                conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
                    .map_err(store::StoreError::sql("checkpoint"))
            })
            .unwrap();
        let began = Instant::now();
        let id = session.id.clone();
        let messages: Vec<ChatMessage> = store
            .read(move |conn| store::list_messages(conn, &id, 0, 0))
            .await
            .unwrap()
            .into_iter()
            .filter_map(to_chat)
            .collect();
        let prepared = compress::prepare(&messages, &settings, 128_000).expect("compressible");
        let compressed = compress::assemble(
            prepared,
            compress::SummaryOutcome::Summary("Goal: fix the build.\nProgress: …".into()),
        );
        let rows = stored_rows(&compressed.messages);
        out.rebuild.push(began.elapsed());
        let from = session.id.clone();
        store
            .write(move |tx| store::start_compressed_segment(tx, &from, &rows))
            .await
            .unwrap();
        out.total.push(began.elapsed());
        out.tokens = (compressed.tokens_before, compressed.tokens_after);
    }
    out
}

#[tokio::main]
async fn main() {
    let source_path = std::env::args()
        .nth(1)
        .expect("usage: bench-history PATH/TO/state.db [RUNS] (see the module docs)");
    let runs: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(21)
        .max(1);
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("hermesd.db");
    let store = Store::open(&db_path).unwrap();

    let source_file = std::path::PathBuf::from(&source_path);
    let began = Instant::now();
    let report = store
        .write(move |tx| {
            let source = hermes_import::open_source(&source_file)?;
            hermes_import::import(&source, tx)
        })
        .await
        .unwrap();
    let import_time = began.elapsed();
    store
        .with_writer_blocking(|conn| {
            conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
                .map_err(store::StoreError::sql("checkpoint"))
        })
        .unwrap();
    println!(
        "imported {} sessions, {} messages from {source_path} in {}",
        report.sessions,
        report.messages,
        ms(import_time)
    );
    println!(
        "hermesd.db {} (Python's state.db of the same corpus: {})",
        mib(size(&db_path)),
        mib(size(std::path::Path::new(&source_path)))
    );

    let mut rows = Vec::new();
    for (label, ranking, target) in [
        (
            "sessions search, store level, default ranking (newest matches, informative words)",
            Ranking::default(),
            "median < 2 ms, p95 < 10 ms",
        ),
        (
            "sessions search, store level, every match ranked (--all-matches)",
            Ranking::All,
            "(Python, BM25 over every match: 4.54 / 35.0 ms)",
        ),
    ] {
        search_pass(&store, ranking).await;
        let mut samples = search_pass(&store, ranking).await;
        rows.push(Row::with_p95(label.to_string(), &mut samples, target));
    }
    let mut compression = compression_samples(&store, runs).await;
    let (before, after) = compression.tokens;
    rows.push(Row::from_samples(
        format!(
            "compress a 200-message session (~{before} → ~{after} tokens), model excluded: read, rebuild, store"
        ),
        &mut compression.total,
        "< 20 ms",
    ));
    rows.push(Row::from_samples(
        "… of which reading the segment and rebuilding the context".into(),
        &mut compression.rebuild,
        "",
    ));
    // What the compressions left for the background merge, one step at a time (each step holds
    // the writer; turns wait at most that long).
    let mut merge_steps = Vec::new();
    loop {
        let began = Instant::now();
        let more = store
            .with_writer_blocking(|conn| store::fts_merge_step(conn, 16))
            .unwrap();
        merge_steps.push(began.elapsed());
        if !more || merge_steps.len() > 10_000 {
            break;
        }
    }
    let steps = merge_steps.len();
    rows.push(Row::from_samples(
        format!("background full-text index merge: one 16-page step ({steps} steps after the compressions)"),
        &mut merge_steps,
        "",
    ));
    print("long conversations", &rows);
}
