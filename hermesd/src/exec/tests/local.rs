//! Foreground execution: output, exit codes, timeout, cancel, big output.

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::super::{RunOutcome, RunRequest, RunResult, run_foreground};

fn test_env() -> Vec<(OsString, OsString)> {
    vec![
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("LANG".into(), "C.UTF-8".into()),
    ]
}

async fn run(command: &str, cwd: &Path, timeout: Duration) -> RunResult {
    let mut req = RunRequest::new(
        &crate::policy::command::Clearance::unjudged(command),
        cwd,
        test_env(),
    );
    req.timeout = timeout;
    run_foreground(req, CancellationToken::new(), |_| {}).await
}

/// True when `pid` no longer runs (gone, or a zombie nobody reaped yet).
fn pid_is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let after = &stat[stat.rfind(')').unwrap() + 1..];
            matches!(after.split_whitespace().next(), Some("Z" | "X"))
        }
    }
}

#[tokio::test]
async fn echo_output_and_exit_code() {
    let result = run(
        "echo hello; echo oops >&2",
        Path::new("/"),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(result.output, "hello\noops");
    assert_eq!(result.exit_code, 0);
    assert_eq!(result.error, None);
    assert_eq!(result.outcome, RunOutcome::Exited);
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"output": "hello\noops", "exit_code": 0, "error": null})
    );
}

#[tokio::test]
async fn non_zero_exit_and_meaning() {
    let result = run(
        "echo partial; exit 3",
        Path::new("/"),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!((result.output.as_str(), result.exit_code), ("partial", 3));
    assert_eq!(result.exit_code_meaning, None);
    let grep = run(
        "grep -q needle /dev/null",
        Path::new("/"),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(grep.exit_code, 1);
    assert_eq!(
        grep.exit_code_meaning,
        Some("No matches found (not an error)")
    );
    let json = serde_json::to_value(&grep).unwrap();
    assert_eq!(json["exit_code_meaning"], "No matches found (not an error)");
}

#[tokio::test]
async fn timeout_kills_child_and_grandchildren_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let command = "echo begin; sh -c 'sleep 30 & echo $! > gc.pid; wait' & sleep 30";
    let started = Instant::now();
    let result = run(command, dir.path(), Duration::from_secs(1)).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(result.exit_code, 124);
    assert_eq!(result.outcome, RunOutcome::TimedOut);
    assert_eq!(result.output, "begin\n\n[Command timed out after 1s]");
    let pid: i32 = std::fs::read_to_string(dir.path().join("gc.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(pid_is_dead(pid), "grandchild {pid} survived the timeout");
}

#[tokio::test]
async fn cancel_interrupts_promptly() {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let req = RunRequest::new(
        &crate::policy::command::Clearance::unjudged("echo started; sleep 30"),
        "/",
        test_env(),
    );
    let started = Instant::now();
    let result = run_foreground(req, cancel, move |chunk| {
        if chunk.contains("started") {
            trigger.cancel();
        }
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(result.exit_code, 130);
    assert_eq!(result.outcome, RunOutcome::Interrupted);
    assert_eq!(result.output, "started\n\n[Command interrupted]");
}

#[tokio::test]
async fn huge_output_is_streamed_and_truncated_head_and_tail() {
    let mut streamed = 0usize;
    let req = RunRequest::new(
        &crate::policy::command::Clearance::unjudged("yes | head -c 50000000"),
        "/",
        test_env(),
    );
    let result = run_foreground(req, CancellationToken::new(), |chunk| {
        streamed += chunk.len()
    })
    .await;
    assert_eq!(result.exit_code, 0);
    assert_eq!(streamed, 50_000_000);
    assert_eq!(result.total_output_chars, 50_000_000);
    assert!(result.output.chars().count() <= 50_000);
    let marker = result.output.find("\n\n... [OUTPUT TRUNCATED - ").unwrap();
    assert!(result.output.contains("out of 50,000,000 total] ...\n\n"));
    assert!(marker > 19_000, "head too short: {marker}");
    assert!(result.output.starts_with("y\ny\n") && result.output.ends_with("y\ny"));
}

#[tokio::test]
async fn stdin_is_null_and_ansi_is_stripped() {
    let result = run(
        "cat; printf '\\033[31mred\\033[0m done'",
        Path::new("/"),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(result.output, "red done");
}

#[tokio::test]
async fn missing_cwd_falls_back_to_existing_ancestor() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("deleted/deeper");
    let result = run("pwd -P", &gone, Duration::from_secs(10)).await;
    assert_eq!(
        Path::new(&result.output),
        dir.path().canonicalize().unwrap()
    );
}

#[tokio::test]
async fn detached_grandchild_holding_the_pipe_does_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let result = run(
        "sleep 30 & echo $! > bg.pid; echo done",
        dir.path(),
        Duration::from_secs(20),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!((result.output.as_str(), result.exit_code), ("done", 0));
    let pid: i32 = std::fs::read_to_string(dir.path().join("bg.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}
