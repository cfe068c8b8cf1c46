//! Test support for hermesd's end-to-end suite: locate the built binaries, give each test its own
//! `HERMES_HOME` and socket, start the real daemon and wait for it to be ready, seed its database.
//! Panicking is how this code reports a broken test setup, so `expect` is allowed here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod audio;
pub mod browser_fixture;
pub mod counting;
pub mod daemon;
pub mod discord_home;
pub mod events;
pub mod fake_discord;
pub mod fake_llm;
pub mod fake_slack;
pub mod fake_telegram;
pub mod fifo;
pub mod home;
pub mod http;
pub mod proxy;
pub mod python_hermes;
pub mod report;
pub mod seed;
pub mod slack_home;
pub mod telegram_home;
pub mod tls;
pub mod tmux;
pub mod wait;
pub mod web_fixture;
pub mod yolo_send;

pub use daemon::DaemonProcess;
pub use home::TestHome;

use std::path::PathBuf;

/// Path of a workspace binary (`hermesd`, `hermesctl`, …) built next to the test executable.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // Tests run from target/<profile>/deps/, bench binaries from target/<profile>/.
    let mut profile_dir = exe.parent().expect("executable has a directory");
    if profile_dir.ends_with("deps") {
        profile_dir = profile_dir.parent().expect("deps has a parent");
    }
    let path = profile_dir.join(name);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace --bins` (with --release for benchmarks) first",
        path.display()
    );
    path
}

/// The Python interpreter the foreign-client tests run (`tests/py/*.py`): `HERMESD_TEST_PYTHON`
/// when set (`scripts/test` points it at its venv, which has the pinned `tests/requirements.txt`),
/// else `python3` from `PATH`. A test that needs it fails, never skips, when it is missing.
pub fn python() -> std::process::Command {
    let program = std::env::var_os("HERMESD_TEST_PYTHON").unwrap_or_else(|| "python3".into());
    std::process::Command::new(program)
}

/// What a test says when [`python`] cannot run its script: the fix is `scripts/test`.
pub const PYTHON_HINT: &str = "the foreign-client tests need Python with grpcio, grpcio-reflection, \
     grpcio-health-checking and openai (tests/requirements.txt): run them with `scripts/test`, which \
     provisions a venv, or set HERMESD_TEST_PYTHON to such an interpreter";

/// An ISO-8601 UTC time (`2026-12-01T09:00:00Z`) `seconds` from now, as cron schedules take it.
pub fn iso_in(seconds: i64) -> String {
    (chrono::Utc::now() + chrono::TimeDelta::seconds(seconds))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// `lines` repeated in turn until the text is at least `bytes` long (each line as given: end it
/// with `\n` to have lines), for tests and benches that need a large, ordinary text.
pub fn cycled(lines: &[&str], bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + lines.iter().map(|l| l.len()).max().unwrap_or(0));
    for line in lines.iter().cycle() {
        if text.len() >= bytes || line.is_empty() {
            break;
        }
        text.push_str(line);
    }
    text
}

/// About `tokens` tokens of prose carrying `marker` (~4 characters a token), for tests that
/// need a conversation large enough to compress.
pub fn bulk(marker: &str, tokens: usize) -> String {
    let mut text = format!("{marker} ");
    while text.len() < tokens * 4 {
        text.push_str("the quick brown fox jumps over the lazy dog ");
    }
    text
}
