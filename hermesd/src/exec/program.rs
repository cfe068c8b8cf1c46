//! Running one program directly (no shell): its own process group, stdin null, stdout and
//! stderr captured apart and each bounded, a timeout and a cancellation that end the whole
//! group; the group also ends when the program does (nothing it started outlives it) and when
//! the caller goes away. Cron's pre-run scripts run here.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::shell::{GroupGuard, exit_code_of, terminate_group};

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

/// What one stream brought: at most the cap, and whether more came.
#[derive(Debug, Default)]
struct Captured {
    bytes: Vec<u8>,
    more: bool,
}

type Sink = std::sync::Arc<std::sync::Mutex<Captured>>;

/// Read `stream` to its end into `sink`, keeping at most `cap` bytes. What was read stays in the
/// sink even when the read is abandoned (a process that keeps the pipe open).
async fn read_bounded(mut stream: impl AsyncRead + Unpin, cap: usize, sink: Sink) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let Ok(mut captured) = sink.lock() else {
                    return;
                };
                let room = cap.saturating_sub(captured.bytes.len());
                captured.bytes.extend_from_slice(&buf[..n.min(room)]);
                captured.more |= n > room;
            }
        }
    }
}

fn taken(sink: &Sink) -> (String, bool) {
    sink.lock().map_or_else(
        |_| (String::new(), false),
        |c| (String::from_utf8_lossy(&c.bytes).into_owned(), c.more),
    )
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
    if let Err(e) = crate::confine::confine(&mut command, &req.cwd) {
        return spawn_failed(format!(
            "cannot confine {} in {}: {e}",
            req.program.display(),
            req.cwd.display()
        ));
    }
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
    let (out_sink, err_sink) = (Sink::default(), Sink::default());
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let (out, err) = (out_sink.clone(), err_sink.clone());
    let readers = async move {
        let out = async {
            if let Some(s) = stdout {
                read_bounded(s, cap, out).await;
            }
        };
        let err = async {
            if let Some(s) = stderr {
                read_bounded(s, cap, err).await;
            }
        };
        tokio::join!(out, err);
    };
    tokio::pin!(readers);
    let deadline = tokio::time::sleep(req.timeout);
    tokio::pin!(deadline);
    let mut status = None;
    let mut read = false;
    let stopped = loop {
        tokio::select! {
            biased;
            () = cancel.cancelled(), if status.is_none() => break Some(ProgramEnd::Interrupted),
            // Before the exit: the timeout; after it: the end of the drain.
            () = &mut deadline => break status.is_none().then_some(ProgramEnd::TimedOut),
            exited = child.wait(), if status.is_none() => {
                status = Some(exited);
                if read {
                    break None;
                }
                deadline.as_mut().reset(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
            }
            () = &mut readers, if !read => {
                read = true;
                if status.is_some() {
                    break None;
                }
            }
        }
    };
    // The program's processes end with it: stopped, or exited leaving some behind (one that
    // holds its output open, or one it sent to the background).
    terminate_group(pgid, KILL_GRACE, || {
        let _ = child.try_wait();
    })
    .await;
    guard.armed = false;
    if !read {
        // What is still in the pipes, now that the group is gone.
        let _ = tokio::time::timeout(DRAIN_AFTER_EXIT, &mut readers).await;
    }
    let end = stopped.unwrap_or_else(|| match status {
        Some(Ok(st)) => ProgramEnd::Exited(exit_code_of(&st)),
        Some(Err(e)) => ProgramEnd::SpawnFailed(format!("cannot wait for the program: {e}")),
        None => ProgramEnd::Exited(-1),
    });
    let ((stdout, out_more), (stderr, err_more)) = (taken(&out_sink), taken(&err_sink));
    ProgramRun {
        end,
        stdout,
        stderr,
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
    async fn output_before_a_child_that_holds_the_pipe_is_kept() {
        let run = run_program(
            request("echo report; sleep 30 & exit 0", Duration::from_secs(20)),
            CancellationToken::new(),
        )
        .await;
        assert_eq!(run.end, ProgramEnd::Exited(0));
        assert_eq!(run.stdout, "report\n");
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
