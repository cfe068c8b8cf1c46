//! One tracked background process: its shared state (output buffer, exit
//! status, stdin) and the task that reads its output until it exits.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime};

use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::watch;
use tokio::time::sleep_until;

use super::output::{RollingText, Utf8Decoder};
use super::process::ProcessRegistry;
use super::shell::{EXIT_DRAIN_IDLE, EXIT_DRAIN_MAX, exit_code_of};
use crate::policy::strip_ansi;

/// Mutable state of a background process.
pub(super) struct SessionState {
    pub(super) output: RollingText,
    pub(super) exited: bool,
    pub(super) exit_code: Option<i32>,
    pub(super) completion_reason: &'static str,
    pub(super) termination_source: String,
    /// Set by `kill` before signalling, so the exit is reported as killed.
    pub(super) kill_source: Option<String>,
    /// What the process reports unasked, and its watch state.
    pub(super) watch: super::process_notify::Watcher,
}

/// A tracked background process.
pub(super) struct Session {
    pub(super) id: String,
    /// The conversation that started it: only its turns see, write to or kill it.
    pub(super) owner: Arc<str>,
    pub(super) command: String,
    pub(super) cwd: PathBuf,
    pub(super) pid: u32,
    pub(super) pgid: Pid,
    /// Kernel start time of `pid` (`/proc/<pid>/stat` field 22), for the record file.
    pub(super) start_time: Option<u64>,
    pub(super) started_at: SystemTime,
    pub(super) started: Instant,
    pub(super) state: Mutex<SessionState>,
    pub(super) done: watch::Sender<bool>,
    pub(super) stdin: tokio::sync::Mutex<Stdin>,
}

/// A background process's stdin: the pipe, and the text written to it that no newline or `;`
/// has ended yet — held back until it is a complete command the rules can judge.
pub(super) struct Stdin {
    pub(super) pipe: Option<ChildStdin>,
    pub(super) pending: String,
}

impl Session {
    pub(super) fn state(&self) -> MutexGuard<'_, SessionState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Last `n` characters of output, ANSI-stripped.
    pub(super) fn output_tail(&self, n: usize) -> String {
        strip_ansi(self.state().output.last(n)).into_owned()
    }
}

/// Reads a background process's output until it exits (plus a short drain),
/// then finishes its session.
pub(super) async fn drive(
    registry: ProcessRegistry,
    session: Arc<Session>,
    mut child: Child,
    mut output: ChildStdout,
) {
    let mut decoder = Utf8Decoder::default();
    let mut text = String::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut status = None;
    let mut eof = false;
    let mut stop_draining_at = tokio::time::Instant::now();
    let mut drain_limit = stop_draining_at;
    loop {
        if eof && status.is_some() {
            break;
        }
        tokio::select! {
            biased;
            exited = child.wait(), if status.is_none() => {
                status = Some(exited);
                let now = tokio::time::Instant::now();
                stop_draining_at = now + EXIT_DRAIN_IDLE;
                drain_limit = now + EXIT_DRAIN_MAX;
            }
            read = output.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => {
                    decoder.decode_into(&buf[..n], &mut text);
                    session.state().output.push(&text, n);
                    // Until the output ends: the last line may be read after the exit.
                    if session.state().watch.is_watching() {
                        registry.watch_output(&session, &strip_ansi(&text));
                    }
                    text.clear();
                    if status.is_some() {
                        stop_draining_at = (tokio::time::Instant::now() + EXIT_DRAIN_IDLE).min(drain_limit);
                    }
                }
            },
            _ = sleep_until(stop_draining_at), if status.is_some() => break,
        }
    }
    decoder.finish_into(&mut text);
    session.state().output.push(&text, 0);
    let exit_code = match status {
        Some(Ok(st)) => Some(exit_code_of(&st)),
        _ => None,
    };
    registry.finish(&session, exit_code);
}
