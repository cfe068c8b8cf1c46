//! Running one program directly (no shell): its own process group, stdin null, stdout and
//! stderr captured apart and each bounded, a timeout and a cancellation that end the whole
//! group, and the group killed if the caller goes away. Cron's pre-run scripts run here.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::shell::{exit_code_of, terminate_group};

/// Grace between SIGTERM and SIGKILL when the program is stopped.
const KILL_GRACE: Duration = Duration::from_secs(1);
/// How long to keep reading after the program exited (a grandchild may hold the pipes).
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);

/// One program to run.
pub struct ProgramRequest {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// The complete environment (see `child_env`).
    pub env: Vec<(OsString, OsString)>,
    pub timeout: Duration,
    /// Bytes kept of each of stdout and stderr; the rest is counted and dropped.
    pub max_output_bytes: usize,
}

/// How the program ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgramEnd {
    /// It exited with this code (minus the signal number when a signal ended it).
    Exited(i32),
    TimedOut,
    Interrupted,
    /// It could not be started: why.
    SpawnFailed(String),
}

/// What the program printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramRun {
    pub end: ProgramEnd,
    pub stdout: String,
    pub stderr: String,
    /// Whether either stream was longer than the cap.
    pub truncated: bool,
}

/// Kills the group if the run is dropped before the program ended.
struct GroupGuard {
    pgid: Pid,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = killpg(self.pgid, Signal::SIGKILL);
        }
    }
}

/// Read `stream` to its end, keeping at most `cap` bytes; returns them and whether more came.
async fn read_bounded(mut stream: impl AsyncRead + Unpin, cap: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut more = false;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return (kept, more),
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                more |= n > room;
            }
        }
    }
}

/// Run `req` to its end, its timeout, or `cancel`.
pub async fn run_program(req: ProgramRequest, cancel: CancellationToken) -> ProgramRun {
    let spawn_failed = |why: String| ProgramRun {
        end: ProgramEnd::SpawnFailed(why),
        stdout: String::new(),
        stderr: String::new(),
        truncated: false,
    };
    let mut command = Command::new(&req.program);
    command
        .args(&req.args)
        .current_dir(&req.cwd)
        .env_clear()
        .envs(req.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return spawn_failed(format!(
                "cannot start {} in {}: {e}",
                req.program.display(),
                req.cwd.display()
            ));
        }
    };
    let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) else {
        return spawn_failed(format!("{} started without a pid", req.program.display()));
    };
    let pgid = Pid::from_raw(pid);
    let mut guard = GroupGuard { pgid, armed: true };
    let cap = req.max_output_bytes;
    let stdout = child.stdout.take().map(|s| read_bounded(s, cap));
    let stderr = child.stderr.take().map(|s| read_bounded(s, cap));
    let readers = async {
        let out = async {
            match stdout {
                Some(f) => f.await,
                None => (Vec::new(), false),
            }
        };
        let err = async {
            match stderr {
                Some(f) => f.await,
                None => (Vec::new(), false),
            }
        };
        tokio::join!(out, err)
    };
    tokio::pin!(readers);
    let deadline = tokio::time::sleep(req.timeout);
    tokio::pin!(deadline);
    let mut status = None;
    let mut read = None;
    let stopped = loop {
        tokio::select! {
            biased;
            () = cancel.cancelled(), if status.is_none() => break Some(ProgramEnd::Interrupted),
            // Before the exit: the timeout; after it: the end of the drain.
            () = &mut deadline => break status.is_none().then_some(ProgramEnd::TimedOut),
            exited = child.wait(), if status.is_none() => {
                status = Some(exited);
                if read.is_some() {
                    break None;
                }
                deadline.as_mut().reset(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
            }
            streams = &mut readers, if read.is_none() => {
                read = Some(streams);
                if status.is_some() {
                    break None;
                }
            }
        }
    };
    // Stopped, or exited leaving a process that holds its output open: the group goes.
    if stopped.is_some() || read.is_none() {
        terminate_group(pgid, KILL_GRACE, || {
            let _ = child.try_wait();
        })
        .await;
    }
    guard.armed = false;
    let ((out, out_more), (err, err_more)) = match read {
        Some(streams) => streams,
        // Whatever was read before the stop, once the group is gone and the pipes close.
        None => tokio::time::timeout(DRAIN_AFTER_EXIT, &mut readers)
            .await
            .unwrap_or_default(),
    };
    let end = stopped.unwrap_or_else(|| match status {
        Some(Ok(st)) => ProgramEnd::Exited(exit_code_of(&st)),
        Some(Err(e)) => ProgramEnd::SpawnFailed(format!("cannot wait for the program: {e}")),
        None => ProgramEnd::Exited(-1),
    });
    ProgramRun {
        end,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
        truncated: out_more || err_more,
    }
}

/// `bash` as the terminal finds it.
pub fn bash_path() -> &'static Path {
    super::shell::bash()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(script: &str, timeout: Duration) -> ProgramRequest {
        ProgramRequest {
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".into(), script.into()],
            cwd: std::env::temp_dir(),
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            timeout,
            max_output_bytes: 1024,
        }
    }

    #[tokio::test]
    async fn streams_are_apart_and_bounded() {
        let run = run_program(
            request(
                "echo out; echo err >&2; head -c 5000 /dev/zero | tr '\\0' x; exit 3",
                Duration::from_secs(10),
            ),
            CancellationToken::new(),
        )
        .await;
        assert_eq!(run.end, ProgramEnd::Exited(3));
        assert!(run.stdout.starts_with("out\nxxx"), "{:?}", run.stdout);
        assert_eq!(run.stdout.len(), 1024);
        assert!(run.truncated);
        assert_eq!(run.stderr, "err\n");
    }

    #[tokio::test]
    async fn a_timeout_ends_the_whole_group() {
        let marker = tempfile::tempdir().unwrap();
        let file = marker.path().join("late");
        let script = format!(
            "(sleep 3; touch {}) & echo started; sleep 30",
            file.display()
        );
        let run = run_program(
            request(&script, Duration::from_millis(300)),
            CancellationToken::new(),
        )
        .await;
        assert_eq!(run.end, ProgramEnd::TimedOut);
        assert_eq!(run.stdout, "started\n");
        // The background child was in the group, so it died with it.
        let pgid_gone = std::process::Command::new("pgrep")
            .args(["-f", &file.display().to_string()])
            .output()
            .map(|o| o.stdout.is_empty())
            .unwrap_or(true);
        assert!(pgid_gone, "the group's background child is still alive");
    }

    #[tokio::test]
    async fn a_missing_program_is_a_clear_error() {
        let mut req = request("", Duration::from_secs(1));
        req.program = PathBuf::from("/nonexistent/interp");
        let run = run_program(req, CancellationToken::new()).await;
        match run.end {
            ProgramEnd::SpawnFailed(why) => assert!(why.contains("/nonexistent/interp"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
