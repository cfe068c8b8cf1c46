//! Spawning `bash -c` in its own process group with stdout and stderr merged
//! into one pipe, resolving a usable working directory, and terminating a
//! whole process group (SIGTERM, grace, SIGKILL).

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::LazyLock;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::{AccessFlags, Pid, access};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::{Instant, sleep};

/// After the shell exits, keep reading while output still arrives this often…
pub(super) const EXIT_DRAIN_IDLE: Duration = Duration::from_millis(300);
/// …but never longer than this (a detached grandchild may hold the pipe).
pub(super) const EXIT_DRAIN_MAX: Duration = Duration::from_secs(2);
/// How long to wait for the group to die after SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(2);
const GROUP_POLL: Duration = Duration::from_millis(25);

/// bash for running commands (Python's `_find_bash`), resolved once.
static BASH: LazyLock<PathBuf> = LazyLock::new(|| {
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|dir| dir.join("bash"))
            .find(|c| c.is_file())
    });
    on_path
        .or_else(|| {
            ["/usr/bin/bash", "/bin/bash"]
                .into_iter()
                .map(PathBuf::from)
                .find(|c| c.is_file())
        })
        .or_else(|| std::env::var_os("SHELL").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("/bin/sh"))
});

/// The bash [`spawn_shell`] runs.
pub(super) fn bash() -> &'static Path {
    BASH.as_path()
}

/// Kills a process group if the run that started it is abandoned (its future dropped) before
/// the group ended or was terminated; disarm it once the group is dealt with.
pub(super) struct GroupGuard {
    pub(super) pgid: Pid,
    pub(super) armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = killpg(self.pgid, Signal::SIGKILL);
        }
    }
}

/// A running `bash -c` whose stdout and stderr both feed `output`.
pub(super) struct ShellChild {
    pub(super) child: Child,
    pub(super) output: ChildStdout,
    pub(super) stdin: Option<ChildStdin>,
    /// The process group (== the shell's pid).
    pub(super) pgid: Pid,
}

/// Starts `bash -c command` in `cwd` with exactly `env`, in a new process
/// group, with stdin null (or a pipe when `pipe_stdin`).
pub(super) fn spawn_shell(
    command: &str,
    cwd: &Path,
    env: &[(OsString, OsString)],
    pipe_stdin: bool,
) -> io::Result<ShellChild> {
    let (reader, writer) = io::pipe()?;
    let writer_for_stderr = writer.try_clone()?;
    let output = ChildStdout::from_std(std::process::ChildStdout::from(OwnedFd::from(reader)))?;
    let mut cmd = Command::new(BASH.as_path());
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(if pipe_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer_for_stderr))
        .process_group(0);
    crate::confine::confine(&mut cmd, cwd).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("confine a command in {}: {e}", cwd.display()),
        )
    })?;
    let spawned = cmd.spawn();
    // The Command holds our copies of the pipe's write end; close them so the
    // reader sees EOF once the command's processes are gone.
    drop(cmd);
    let mut child = spawned.map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("spawn {} in {}: {e}", BASH.display(), cwd.display()),
        )
    })?;
    let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    if pid <= 0 {
        let _ = child.start_kill();
        return Err(io::Error::other("spawned shell has no pid"));
    }
    Ok(ShellChild {
        stdin: child.stdin.take(),
        child,
        output,
        pgid: Pid::from_raw(pid),
    })
}

/// Python's returncode: the exit code, or minus the signal number.
pub(super) fn exit_code_of(status: &ExitStatus) -> i32 {
    status
        .code()
        .unwrap_or_else(|| -status.signal().unwrap_or(0))
}

fn dir_usable(path: &Path) -> bool {
    path.is_dir() && access(path, AccessFlags::X_OK).is_ok()
}

/// `cwd` when it is an enterable directory, else its nearest enterable
/// ancestor, else the temp dir (a previous command may have deleted it).
/// Blocking: call through `spawn_blocking`.
pub(super) fn resolve_safe_cwd(cwd: &Path) -> PathBuf {
    if dir_usable(cwd) {
        return cwd.to_path_buf();
    }
    let fallback = cwd
        .ancestors()
        .skip(1)
        .find(|dir| !dir.as_os_str().is_empty() && dir_usable(dir))
        .map_or_else(std::env::temp_dir, Path::to_path_buf);
    tracing::warn!(
        cwd = %cwd.display(),
        fallback = %fallback.display(),
        "working directory missing or not enterable; using fallback"
    );
    fallback
}

/// [`resolve_safe_cwd`] off the runtime threads.
pub(super) async fn resolve_safe_cwd_async(cwd: PathBuf) -> PathBuf {
    let copy = cwd.clone();
    tokio::task::spawn_blocking(move || resolve_safe_cwd(&copy))
        .await
        .unwrap_or(cwd)
}

/// True while some process of the group is alive (zombies do not count:
/// an orphaned child may stay unreaped if init does not reap).
async fn group_alive(pgid: Pid) -> bool {
    match killpg(pgid, None) {
        Err(Errno::ESRCH) => false,
        Err(_) => true,
        Ok(()) => {
            if cfg!(target_os = "linux") {
                tokio::task::spawn_blocking(move || live_member_in_proc(pgid))
                    .await
                    .unwrap_or(true)
            } else {
                true
            }
        }
    }
}

/// Scans `/proc` for a non-zombie process in group `pgid`.
fn live_member_in_proc(pgid: Pid) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    let wanted = pgid.as_raw().to_string();
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        if !name
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        {
            return false;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        // "pid (comm) state ppid pgrp ..."; comm may contain spaces.
        let Some(after_comm) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            return false;
        };
        let mut fields = after_comm.split_whitespace();
        let state = fields.next().unwrap_or("Z");
        let pgrp = fields.nth(1).unwrap_or("");
        pgrp == wanted && state != "Z" && state != "X"
    })
}

async fn wait_group_exit(pgid: Pid, timeout: Duration, reap: &mut impl FnMut()) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        reap();
        if !group_alive(pgid).await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        sleep(GROUP_POLL).await;
    }
}

/// SIGTERM the group, wait up to `grace` for it to exit, then SIGKILL and
/// wait briefly. `reap` is called while waiting so an unreaped group leader
/// does not keep the group looking alive.
pub(super) async fn terminate_group(pgid: Pid, grace: Duration, mut reap: impl FnMut()) {
    if killpg(pgid, Signal::SIGTERM) == Err(Errno::ESRCH) {
        return;
    }
    if !grace.is_zero() && wait_group_exit(pgid, grace, &mut reap).await {
        return;
    }
    if killpg(pgid, Signal::SIGKILL) == Err(Errno::ESRCH) {
        return;
    }
    if !wait_group_exit(pgid, KILL_WAIT, &mut reap).await {
        tracing::warn!(
            pgid = pgid.as_raw(),
            "process group still alive after SIGKILL"
        );
    }
}
