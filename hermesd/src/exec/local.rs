//! Foreground command execution for the `terminal` tool: run `bash -c` with
//! a timeout and cancellation, stream output chunks to the caller, keep a
//! bounded head+tail of the output, and produce Python's result shape.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use tokio::io::AsyncReadExt;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::output::{HeadTailCollector, Utf8Decoder};
use super::shell::{
    EXIT_DRAIN_IDLE, EXIT_DRAIN_MAX, GroupGuard, ShellChild, exit_code_of, resolve_safe_cwd_async,
    spawn_shell, terminate_group,
};
use super::terminal::{DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_TIMEOUT_SECS, interpret_exit_code};
use crate::policy::command::Clearance;
use crate::policy::strip_ansi;

/// Grace between SIGTERM and SIGKILL for a timed-out or interrupted command.
const FOREGROUND_KILL_GRACE: Duration = Duration::from_secs(1);
/// How long to collect output still buffered after killing the group.
const POST_KILL_DRAIN: Duration = Duration::from_millis(500);
const READ_CHUNK: usize = 64 * 1024;

/// One foreground command.
#[derive(Clone)]
pub struct RunRequest {
    /// Passed to `bash -c`: the command a [`Clearance`] cleared (empty for a stdin clearance,
    /// which runs nothing).
    command: String,
    /// Working directory (falls back to the nearest existing ancestor).
    pub cwd: PathBuf,
    /// The complete child environment (see `child_env`).
    pub env: Vec<(OsString, OsString)>,
    /// Kill the command's process group after this long.
    pub timeout: Duration,
    /// Output cap in characters (head 40% + tail 60%).
    pub max_output_chars: usize,
}

impl RunRequest {
    /// A request to run the command `cleared` clears (the command policy's verdict: nothing
    /// runs without one), with Python's defaults (180 s timeout, 50,000-char output).
    pub fn new(
        cleared: &Clearance,
        cwd: impl Into<PathBuf>,
        env: Vec<(OsString, OsString)>,
    ) -> Self {
        Self {
            command: cleared.command().unwrap_or_default().to_string(),
            cwd: cwd.into(),
            env,
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            max_output_chars: DEFAULT_MAX_OUTPUT_CHARS,
        }
    }
}

impl std::fmt::Debug for RunRequest {
    /// Omits environment values, which may hold credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRequest")
            .field("command", &self.command)
            .field("cwd", &self.cwd)
            .field("env_vars", &self.env.len())
            .field("timeout", &self.timeout)
            .field("max_output_chars", &self.max_output_chars)
            .finish()
    }
}

/// How a foreground command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    /// The shell exited by itself.
    Exited,
    /// Killed at the timeout (exit code 124).
    TimedOut,
    /// Killed because the turn was cancelled (exit code 130).
    Interrupted,
    /// The shell could not be started (exit code -1).
    SpawnFailed,
}

/// The `terminal` tool result; serialises to Python's JSON shape.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// ANSI-stripped, head+tail truncated, trimmed output.
    pub output: String,
    /// Exit code, minus the signal number if killed, 124 timeout, 130 interrupt.
    pub exit_code: i32,
    /// Set only when the command could not be run.
    pub error: Option<String>,
    /// Meaning of a non-error non-zero exit code (grep 1 = no matches, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code_meaning: Option<&'static str>,
    /// How the command ended.
    #[serde(skip)]
    pub outcome: RunOutcome,
    /// Characters the command printed in total, before truncation.
    #[serde(skip)]
    pub total_output_chars: usize,
}

impl RunResult {
    fn spawn_failed(err: &std::io::Error) -> Self {
        Self {
            output: String::new(),
            exit_code: -1,
            error: Some(format!("Command execution failed: {err}")),
            exit_code_meaning: None,
            outcome: RunOutcome::SpawnFailed,
            total_output_chars: 0,
        }
    }
}

/// Appends decoded output to the collector and forwards it to `on_output`.
struct OutputSink<F> {
    decoder: Utf8Decoder,
    collector: HeadTailCollector,
    text: String,
    on_output: F,
}

impl<F: FnMut(&str)> OutputSink<F> {
    fn accept(&mut self, bytes: &[u8]) {
        self.decoder.decode_into(bytes, &mut self.text);
        self.flush_text();
    }

    fn finish(&mut self) {
        self.decoder.finish_into(&mut self.text);
        self.flush_text();
    }

    fn flush_text(&mut self) {
        if self.text.is_empty() {
            return;
        }
        self.collector.push(&self.text);
        (self.on_output)(&strip_ansi(&self.text));
        self.text.clear();
    }
}

/// Runs `req.command` with `bash -c` in its own process group, stdin null,
/// stdout and stderr merged. `on_output` receives ANSI-stripped chunks as
/// they arrive. The timeout and `cancel` kill the whole group (SIGTERM, then
/// SIGKILL after 1 s) and return promptly with Python's markers
/// (`[Command timed out after Ns]` / exit 124, `[Command interrupted]` / 130).
pub async fn run_foreground(
    req: RunRequest,
    cancel: CancellationToken,
    on_output: impl FnMut(&str),
) -> RunResult {
    if req.command.is_empty() {
        return RunResult::spawn_failed(&std::io::Error::other("no command was cleared to run"));
    }
    let cwd = resolve_safe_cwd_async(req.cwd.clone()).await;
    let ShellChild {
        mut child,
        mut output,
        pgid,
        ..
    } = match spawn_shell(&req.command, &cwd, &req.env, false) {
        Ok(shell) => shell,
        Err(err) => return RunResult::spawn_failed(&err),
    };
    let mut group = GroupGuard { pgid, armed: true };
    let mut sink = OutputSink {
        decoder: Utf8Decoder::default(),
        collector: HeadTailCollector::new(req.max_output_chars),
        text: String::new(),
        on_output,
    };
    let mut buf = vec![0u8; READ_CHUNK];
    let deadline = Instant::now() + req.timeout;
    let mut status = None;
    let mut eof = false;
    let mut idle_until = None;
    let mut drain_until = None;

    let outcome = loop {
        if eof && status.is_some() {
            break RunOutcome::Exited;
        }
        let stop_draining_at = match (idle_until, drain_until) {
            (Some(idle), Some(max)) => std::cmp::min(idle, max),
            _ => deadline,
        };
        tokio::select! {
            biased;
            _ = cancel.cancelled(), if status.is_none() => break RunOutcome::Interrupted,
            _ = sleep_until(deadline), if status.is_none() => break RunOutcome::TimedOut,
            exited = child.wait(), if status.is_none() => {
                status = Some(exited);
                let now = Instant::now();
                idle_until = Some(now + EXIT_DRAIN_IDLE);
                drain_until = Some(now + EXIT_DRAIN_MAX);
            }
            read = output.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => {
                    sink.accept(&buf[..n]);
                    if status.is_some() {
                        idle_until = Some(Instant::now() + EXIT_DRAIN_IDLE);
                    }
                }
            },
            _ = sleep_until(stop_draining_at), if status.is_some() => break RunOutcome::Exited,
        }
    };

    let exit_code = match outcome {
        RunOutcome::Exited => match status {
            Some(Ok(st)) => exit_code_of(&st),
            _ => -1,
        },
        RunOutcome::TimedOut | RunOutcome::Interrupted => {
            terminate_group(pgid, FOREGROUND_KILL_GRACE, || {
                let _ = child.try_wait();
            })
            .await;
            let drain_deadline = Instant::now() + POST_KILL_DRAIN;
            while !eof {
                tokio::select! {
                    read = output.read(&mut buf) => match read {
                        Ok(0) | Err(_) => eof = true,
                        Ok(n) => sink.accept(&buf[..n]),
                    },
                    _ = sleep_until(drain_deadline) => break,
                }
            }
            if outcome == RunOutcome::TimedOut {
                124
            } else {
                130
            }
        }
        RunOutcome::SpawnFailed => -1,
    };
    group.armed = false;
    sink.finish();
    // An unreaped child is reaped by tokio's orphan queue once dropped.
    drop(child);

    let collector = &sink.collector;
    let rendered = match outcome {
        RunOutcome::TimedOut => {
            let suffix = format!("\n[Command timed out after {}]", format_secs(req.timeout));
            collector.render(&suffix)
        }
        RunOutcome::Interrupted => collector.render("\n[Command interrupted]"),
        _ => collector.render(""),
    };
    let output = strip_ansi(&rendered).trim().to_owned();
    RunResult {
        output,
        exit_code,
        error: None,
        exit_code_meaning: match outcome {
            RunOutcome::Exited => interpret_exit_code(&req.command, exit_code),
            _ => None,
        },
        outcome,
        total_output_chars: collector.total_chars(),
    }
}

fn format_secs(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}
