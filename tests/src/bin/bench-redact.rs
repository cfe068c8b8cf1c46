//! Secret-masking benchmark: 100 KiB of tool output (build-log and source-code lines) with 50
//! secrets configured. Prints a table: building the masker (start and each reload), masking the
//! clean output, masking it with 40 secrets inside (half configured values, half key shapes),
//! the same with the key shapes only (no configured values), a terminal result as a JSON value,
//! and the output streamed in 4 KiB chunks.
//!
//! `cargo run --release -p hermes-tests --bin bench-redact [-- RUNS]` (RUNS: samples of each
//! timing; default 50).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench binary fails by panicking

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use hermes_proto::env::Env;
use hermes_tests::report::{self, Row};
use hermesd::policy::secrets::{SecretMasker, Style};

const RUNS: usize = 50;
const OUTPUT_BYTES: usize = 100 * 1024;
const SECRETS: usize = 50;

/// 50 configured secrets of the lengths keys have (16 to 64 characters).
fn environment() -> Env {
    let mut pairs: Vec<(String, String)> = (0..SECRETS)
        .map(|i| {
            let len = 16 + (i * 7) % 49;
            let value: String = (0..len)
                .map(|j| char::from(b"abcdefghijkmnpqrstuvwxyz23456789"[(i * 31 + j * 17) % 32]))
                .collect();
            (format!("SERVICE_{i}_TOKEN"), format!("v{i}{value}"))
        })
        .collect();
    pairs.push(("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()));
    pairs.push(("HOME".into(), "/home/someone".into()));
    Env::from_pairs(pairs)
}

/// About 100 KiB of output a command prints: log lines, paths, hashes, code.
fn clean_output() -> String {
    let lines = [
        "   Compiling serde_json v1.0.145 (/home/someone/src/project/vendor/serde_json)",
        "warning: unused variable: `token_count` --> src/lib.rs:42:9 (commit 3f786850e387550fdab8)",
        "fn handle(request: &Request) -> Result<Response, Error> { let key = cache.get(&id)?; }",
        "2026-01-05T10:22:31Z INFO request id=123e4567-e89b-12d3-a456-426614174000 took 12ms",
        "drwxr-xr-x  5 someone someone 4096 Jan  5 10:22 node_modules/.bin/task-runner",
        "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw== base64 of prose, harmless",
    ];
    let lines: Vec<String> = lines.iter().map(|l| format!("{l}\n")).collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    hermes_tests::cycled(&lines, OUTPUT_BYTES)
}

/// The clean output with 20 configured values and 20 key shapes spread through it.
fn output_with_secrets(env: &Env) -> String {
    let values: Vec<&str> = env
        .iter()
        .filter(|(k, _)| k.ends_with("_TOKEN"))
        .map(|(_, v)| v)
        .collect();
    let shapes = [
        "sk-proj-abcdefghij1234567890XYZ",
        "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123",
        "postgres://user:hunter2pass@db.example.com:5432/app",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig_abcdefgh",
    ];
    let mut lines: Vec<String> = clean_output().lines().map(str::to_string).collect();
    let step = lines.len() / 40;
    for n in 0..40 {
        let secret = if n % 2 == 0 {
            values[n / 2 % values.len()].to_string()
        } else {
            shapes[n / 2 % shapes.len()].to_string()
        };
        lines[n * step] = format!("export VALUE={secret} # line {n}");
    }
    lines.join("\n")
}

fn samples(runs: usize, mut work: impl FnMut()) -> Vec<Duration> {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .collect()
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(RUNS)
        .max(1);
    let env = environment();
    let masker = Arc::new(SecretMasker::new(&env, true));
    let shapes_only = SecretMasker::new(&Env::default(), true);
    let clean = clean_output();
    let dirty = output_with_secrets(&env);
    assert_eq!(masker.mask(&clean), clean, "clean output is left alone");
    assert_ne!(masker.mask(&dirty), dirty, "secrets are masked");
    let result = serde_json::json!({"output": dirty, "exit_code": 0, "error": null});

    let mut rows = vec![Row::from_samples(
        format!("build the masker ({SECRETS} secrets)"),
        &mut samples(runs, || drop(SecretMasker::new(&env, true))),
        "< 5 ms",
    )];
    let kib = OUTPUT_BYTES / 1024;
    let cases: [(String, &dyn Fn()); 5] = [
        (format!("mask {kib} KiB, no secret in it"), &|| {
            drop(masker.mask(&clean));
        }),
        (format!("mask {kib} KiB holding 40 secrets"), &|| {
            drop(masker.mask(&dirty));
        }),
        (format!("mask {kib} KiB holding 40, shapes only"), &|| {
            drop(shapes_only.mask(&dirty));
        }),
        (
            format!("mask a terminal result ({kib} KiB JSON value)"),
            &|| {
                let mut value = result.clone();
                masker.mask_json(&mut value, Style::Display);
            },
        ),
        (format!("stream {kib} KiB in 4 KiB chunks"), &|| {
            let mut stream = masker.stream();
            let mut shown = 0;
            let bytes = dirty.as_bytes();
            let mut at = 0;
            while at < bytes.len() {
                let mut end = (at + 4096).min(bytes.len());
                while !dirty.is_char_boundary(end) {
                    end -= 1;
                }
                shown += stream.push(&dirty[at..end]).len();
                at = end;
            }
            shown += stream.finish().len();
            assert!(shown > 0);
        }),
    ];
    for (what, work) in cases {
        rows.push(Row::from_samples(what, &mut samples(runs, work), "< 2 ms"));
    }
    report::print(
        &format!("Secret masking: {kib} KiB of tool output, {SECRETS} secrets configured"),
        &rows,
    );
}
