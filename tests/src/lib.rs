//! Test support for hermesd's end-to-end suite: locate the built binaries, give each test its own
//! `HERMES_HOME` and socket, start the real daemon and wait for it to be ready, seed its database.
//! Panicking is how this code reports a broken test setup, so `expect` is allowed here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod daemon;
pub mod events;
pub mod fake_llm;
pub mod home;
pub mod proxy;
pub mod report;
pub mod seed;
pub mod tls;

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

/// An ISO-8601 UTC time (`2026-12-01T09:00:00Z`) `seconds` from now, as cron schedules take it.
pub fn iso_in(seconds: i64) -> String {
    (chrono::Utc::now() + chrono::TimeDelta::seconds(seconds))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}
