//! Confinement benchmark: what entering the kernel confinement costs a spawn. Starts `true`
//! RUNS times unconfined, then RUNS times confined as the daemon confines every process the
//! agent runs (private mount namespace with the covers of a Hermes home laid out as a user's,
//! Landlock, the marking seccomp filter), each spawned and waited for through tokio as the
//! terminal tool does; and the plan a spawn builds (stat of the covered paths). Prints median
//! and p90, and the mode the kernel allowed.
//!
//! `cargo run --release -p hermes-tests --bin bench-confine [-- RUNS]` (default 300).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench binary fails by panicking

use std::path::Path;
use std::time::{Duration, Instant};

use hermes_tests::report::{Row, print, value_row};
use hermesd::confine::{Confinement, Layout};
use hermesd::policy::paths::PathPolicy;

const RUNS: usize = 300;

/// A user's home with a Hermes home in it, holding what the covers cover.
fn lay_out(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let user = root.join("home");
    let hermes = user.join(".hermes");
    for dir in ["skills", "memories", "scripts", "cache", "profiles/work"] {
        std::fs::create_dir_all(hermes.join(dir)).unwrap();
    }
    for file in [
        ".env",
        "auth.json",
        "config.yaml",
        "hermesd.db",
        "hermesd.db-wal",
        "SOUL.md",
    ] {
        std::fs::write(hermes.join(file), "x").unwrap();
    }
    std::fs::write(hermes.join("profiles/work/.env"), "x").unwrap();
    std::fs::create_dir_all(user.join(".ssh")).unwrap();
    for file in [
        ".ssh/id_ed25519",
        ".ssh/id_ed25519.pub",
        ".ssh/config",
        ".bashrc",
        ".profile",
        ".netrc",
    ] {
        std::fs::write(user.join(file), "x").unwrap();
    }
    std::fs::create_dir_all(user.join("project")).unwrap();
    (user, hermes)
}

async fn spawn_true(confinement: Option<&std::sync::Arc<Confinement>>, cwd: &Path) -> Duration {
    let started = Instant::now();
    let mut command = tokio::process::Command::new("true");
    command.current_dir(cwd);
    if let Some(confinement) = confinement {
        confinement.apply(&mut command, cwd).unwrap();
    }
    let status = command.status().await.unwrap();
    assert!(status.success(), "true failed: {status}");
    started.elapsed()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map_or(RUNS, |n| n.parse().expect("RUNS is a number"));
    let root = tempfile::tempdir().unwrap();
    let (user, hermes) = lay_out(root.path());
    let project = user.join("project");
    let layout = Layout {
        policy: PathPolicy::new(&hermes, Some(&user)),
        socket: hermes.join("hermesd.sock"),
        runtime_dir: None,
        uid: nix::unistd::geteuid().as_raw(),
    };
    let probe = Path::new("/bin/sh");
    let confinement = Confinement::probe(layout.clone(), &hermes.join("confine"), probe);
    let mode = confinement.status().mode.as_str();

    let mut rows = Vec::new();
    for (label, confined) in [("unconfined", None), (mode, Some(&confinement))] {
        spawn_true(confined, &project).await;
        let mut samples: Vec<Duration> = Vec::with_capacity(runs);
        for _ in 0..runs {
            samples.push(spawn_true(confined, &project).await);
        }
        rows.push(Row::from_samples(
            format!("spawn and wait for `true`, {label}"),
            &mut samples,
            if confined.is_some() {
                "< 1 ms over unconfined"
            } else {
                ""
            },
        ));
    }
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(layout.plan());
            started.elapsed()
        })
        .collect();
    rows.push(Row::from_samples(
        format!(
            "the plan, when a cover changed ({} covers)",
            layout.plan().len()
        ),
        &mut samples,
        "",
    ));
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(layout.fingerprint());
            started.elapsed()
        })
        .collect();
    rows.push(Row::from_samples(
        "the check every spawn makes (fingerprint)".into(),
        &mut samples,
        "",
    ));
    rows.push(value_row(
        "confinement in force".into(),
        confinement.status().detail,
        "",
    ));
    print(&format!("bench-confine: {runs} spawns each"), &rows);
}
