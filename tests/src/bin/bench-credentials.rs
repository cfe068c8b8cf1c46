//! What choosing a credential costs a request: `Credentials::choose` on pools of 3 and 50 keys
//! read from a Hermes `auth.json`, for each strategy, and a rotation (a refused key parked and
//! the next one chosen, in memory; the store is written off the request's path). Usage:
//! `bench-credentials [ROUNDS]` (default 20,000 choices per row).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench fails by panicking

use std::time::{Duration, Instant};

use hermes_proto::env::Env;
use hermes_tests::report::{Row, print};
use hermesd::auth::{Credentials, Strategy};

/// An auth.json with `n` manual OpenRouter keys, as Python Hermes writes them.
fn auth_json(n: usize) -> String {
    let rows: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id": "{i:06x}", "label": "key-{i}", "auth_type": "api_key", "priority": {i}, "source": "manual", "access_token": "sk-or-{i}"}}"#
            )
        })
        .collect();
    format!(
        r#"{{"version": 1, "providers": {{}}, "credential_pool": {{"openrouter": [{}]}}}}"#,
        rows.join(",")
    )
}

fn micros(samples: &mut [Duration]) -> (String, String) {
    samples.sort();
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    let show = |d: Duration| format!("{:.2} µs", d.as_secs_f64() * 1e6);
    (show(at(0.5)), show(at(0.9)))
}

fn row(what: String, samples: &mut [Duration]) -> Row {
    let (median, p90) = micros(samples);
    Row {
        what,
        median,
        p90,
        target: "< 50 µs",
    }
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000)
        .max(1);
    let mut rows = Vec::new();
    for size in [3, 50] {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("auth.json"), auth_json(size)).unwrap();
        for strategy in [
            Strategy::FillFirst,
            Strategy::RoundRobin,
            Strategy::Random,
            Strategy::LeastUsed,
        ] {
            let strategies = [("openrouter".to_string(), strategy)];
            let credentials = Credentials::load(home.path(), &Env::default(), &strategies);
            let mut samples = Vec::with_capacity(rounds);
            for _ in 0..rounds {
                let started = Instant::now();
                let lease = credentials.choose("openrouter", &[]);
                samples.push(started.elapsed());
                assert!(lease.is_some());
            }
            rows.push(row(
                format!("choose a key, pool of {size}, {}", strategy.as_str()),
                &mut samples,
            ));
        }
        // A rotation: the chosen key is refused, parked, and the next one chosen — until the
        // pool is used up; then a fresh daemon's view of the same files (nothing was persisted).
        let mut samples = Vec::with_capacity(rounds);
        while samples.len() < rounds {
            let credentials = Credentials::load(home.path(), &Env::default(), &[]);
            let mut tried: Vec<String> = Vec::new();
            while let Some(lease) = credentials.choose("openrouter", &tried) {
                let started = Instant::now();
                credentials.park("openrouter", &lease.id, Some(429), "quota", None);
                tried.push(lease.id);
                let next = credentials.choose("openrouter", &tried);
                samples.push(started.elapsed());
                if next.is_none() || samples.len() >= rounds {
                    break;
                }
            }
        }
        rows.push(row(
            format!("rotation: park the refused key and choose the next, pool of {size}"),
            &mut samples,
        ));
    }
    print(
        &format!("hermesd credential pools — {rounds} choices per row"),
        &rows,
    );
}
