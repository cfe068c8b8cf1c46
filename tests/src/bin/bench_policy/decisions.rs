//! Rows of the policy benchmark for single decisions: a path read or write judged by
//! `PathPolicy` (resolved through the filesystem) and a command or stdin write judged by
//! `CommandPolicy`, each in a home laid out as a user's (`~/.hermes`, a profile, a project).

use std::path::Path;
use std::time::{Duration, Instant};

use hermes_tests::report::{Row, percentile};
use hermesd::policy::command::{CommandPolicy, Verdict};
use hermesd::policy::paths::PathPolicy;

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn time(runs: usize, mut decide: impl FnMut()) -> (Duration, Duration) {
    decide();
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            decide();
            started.elapsed()
        })
        .collect();
    (percentile(&mut samples, 0.5), percentile(&mut samples, 0.9))
}

fn row(what: &str, (median, p90): (Duration, Duration)) -> Row {
    Row {
        what: what.to_string(),
        median: us(median),
        p90: us(p90),
        target: "< 20 µs",
    }
}

/// The decision rows, `runs` decisions each.
pub fn rows(runs: usize) -> Vec<Row> {
    let dir = tempfile::tempdir().expect("a temp dir");
    let user = dir.path().join("u");
    for d in [".hermes/profiles/work", "project/src"] {
        std::fs::create_dir_all(user.join(d)).expect("the bench home");
    }
    let project = user.join("project");
    let paths = PathPolicy::new(&user.join(".hermes"), Some(&user));
    let (commands, _) = CommandPolicy::new(paths.clone(), &["git push --force*".to_string()]);
    let judge = |command: &'static str| {
        let (commands, project) = (&commands, &project);
        move || {
            std::hint::black_box(commands.judge(command, project));
        }
    };
    let verdict = commands.judge("git status", &project);
    assert!(matches!(verdict, Verdict::Run(_)), "{verdict:?}");
    vec![
        row(
            "path: read_file src/main.rs (resolved, judged)",
            time(runs, || {
                let real = paths.resolve("src/main.rs", &project);
                std::hint::black_box(paths.check_read(&real)).ok();
            }),
        ),
        row(
            "path: write_file ~/.hermes/profiles/work/config.yaml (refused)",
            time(runs, || {
                let real = paths.resolve("~/.hermes/profiles/work/config.yaml", Path::new("/"));
                std::hint::black_box(paths.check_write(&real));
            }),
        ),
        row("command: `git status`", time(runs, judge("git status"))),
        row(
            "command: `cargo test --workspace 2>&1`, piped to `tail -n 50`",
            time(runs, judge("cargo test --workspace 2>&1 | tail -n 50")),
        ),
        row(
            "command: `cd ~/.hermes && sqlite3 hermesd.db .dump` (refused)",
            time(runs, judge("cd ~/.hermes && sqlite3 hermesd.db .dump")),
        ),
        row(
            "command: `sed -i s/a/b/ ~/.hermes/config.yaml` (asked)",
            time(runs, judge("sed -i s/a/b/ ~/.hermes/config.yaml")),
        ),
        row(
            "stdin: `ls -la\\n` to a background bash (asked)",
            time(runs, || {
                std::hint::black_box(commands.judge_stdin("bash", &project, "", "ls -la\n"));
            }),
        ),
    ]
}
