//! Test support for hermesd's end-to-end suite: locate the built binaries, give each test its own
//! `HERMES_HOME` and socket, start the real daemon and wait for it to be ready, seed its database.
//! Panicking is how this code reports a broken test setup, so `expect` is allowed here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod daemon;
pub mod home;
pub mod seed;

pub use daemon::DaemonProcess;
pub use home::TestHome;

use std::path::PathBuf;

/// Path of a workspace binary (`hermesd`, `hermesctl`, …) built next to the test executable.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test>-<hash>  →  target/<profile>/<name>
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("test executable lives in target/<profile>/deps");
    let path = profile_dir.join(name);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace --bins` before the tests",
        path.display()
    );
    path
}
