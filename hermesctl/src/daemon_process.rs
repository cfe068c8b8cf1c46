//! Starting hermesd in the background (like tmux starts its server) and waiting for it to stop.
//! Readiness uses the systemd notify protocol: we pass NOTIFY_SOCKET and wait for READY=1.

use std::{
    fs::File,
    os::unix::fs::DirBuilderExt,
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use nix::fcntl::{Flock, FlockArg};
use tokio::{io::AsyncReadExt, net::UnixDatagram, process::Command};

use crate::{context::Context, error::CliError};

const START_TIMEOUT: Duration = Duration::from_secs(15);
/// Environment passed to a daemon we start; everything else is left behind.
const KEPT_VARS: &[&str] = &["PATH", "HOME", "LANG", "TZ", "XDG_RUNTIME_DIR"];

/// The program `name` beside this executable, else the first on PATH.
pub fn sibling_binary(name: &str) -> Option<PathBuf> {
    if let Ok(me) = std::env::current_exe()
        && let Some(dir) = me.parent()
    {
        let beside = dir.join(name);
        if beside.is_file() {
            return Some(beside);
        }
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// The hermesd beside this executable, else the one on PATH.
fn hermesd_binary() -> Result<PathBuf, CliError> {
    sibling_binary("hermesd").ok_or_else(|| {
        CliError::new(
            "hermesd is not running and could not be started: no hermesd beside hermesctl or on PATH",
        )
    })
}

fn could_not_start(reason: impl std::fmt::Display) -> CliError {
    CliError::new(format!(
        "hermesd is not running and could not be started: {reason}"
    ))
}

/// Start hermesd for `ctx` and return once it reports READY (its socket then answers).
pub async fn start(ctx: &Context) -> Result<(), CliError> {
    let binary = hermesd_binary()?;
    let notify_dir = ctx.socket.parent().unwrap_or(Path::new("/tmp"));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(notify_dir)
        .map_err(|e| could_not_start(format!("cannot create {}: {e}", notify_dir.display())))?;
    let notify_path = notify_dir.join(format!(".n{}", std::process::id()));
    let _ = std::fs::remove_file(&notify_path);
    let notify = UnixDatagram::bind(&notify_path)
        .map_err(|e| could_not_start(format!("cannot bind {}: {e}", notify_path.display())))?;
    let result = spawn_and_wait(ctx, &binary, &notify, &notify_path).await;
    let _ = std::fs::remove_file(&notify_path);
    result
}

async fn spawn_and_wait(
    ctx: &Context,
    binary: &Path,
    notify: &UnixDatagram,
    notify_path: &Path,
) -> Result<(), CliError> {
    let mut command = Command::new(binary);
    command
        .arg("--home")
        .arg(&ctx.home.dir)
        .env_clear()
        .envs(std::env::vars_os().filter(|(key, _)| {
            key.to_str()
                .is_some_and(|k| KEPT_VARS.contains(&k) || k.starts_with("HERMES_"))
        }))
        .env("NOTIFY_SOCKET", notify_path)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(socket) = &ctx.socket_flag {
        command.arg("--socket").arg(socket);
    }
    let mut child = command
        .spawn()
        .map_err(|e| could_not_start(format!("cannot run {}: {e}", binary.display())))?;
    let mut stderr = child.stderr.take();
    let mut buf = [0u8; 256];
    let outcome = tokio::time::timeout(START_TIMEOUT, async {
        loop {
            tokio::select! {
                received = notify.recv(&mut buf) => {
                    let n = received.map_err(|e| could_not_start(format!("notify socket: {e}")))?;
                    if String::from_utf8_lossy(&buf[..n]).lines().any(|l| l == "READY=1") {
                        return Ok(());
                    }
                }
                status = child.wait() => {
                    let mut text = String::new();
                    if let Some(stderr) = stderr.as_mut() {
                        let _ = stderr.read_to_string(&mut text).await;
                    }
                    let reason = text
                        .lines()
                        .rev()
                        .find(|l| !l.trim().is_empty())
                        .map(|l| l.trim_start_matches("hermesd: ").to_string())
                        .unwrap_or_else(|| match status {
                            Ok(s) => format!("hermesd exited ({s})"),
                            Err(e) => format!("hermesd could not be awaited: {e}"),
                        });
                    return Err(could_not_start(reason));
                }
            }
        }
    })
    .await;
    match outcome {
        Ok(result) => result,
        Err(_) => Err(could_not_start(format!(
            "it did not report ready within {} s; see {}",
            START_TIMEOUT.as_secs(),
            ctx.home.log_dir().join("hermesd.log").display()
        ))),
    }
}

/// Wait until no process holds the pidfile lock of `ctx`'s home, i.e. the daemon has exited.
pub async fn wait_for_exit(ctx: &Context, timeout: Duration) -> Result<(), CliError> {
    let pid_file = ctx.home.pid_file();
    let file = match File::open(&pid_file) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(CliError::new(format!(
                "cannot open {}: {e}",
                pid_file.display()
            )));
        }
    };
    let waiter = tokio::task::spawn_blocking(move || {
        Flock::lock(file, FlockArg::LockShared)
            .map(drop)
            .map_err(|(_, e)| e)
    });
    match tokio::time::timeout(timeout, waiter).await {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(e))) => Err(CliError::new(format!(
            "cannot wait on {}: {e}",
            pid_file.display()
        ))),
        Ok(Err(e)) => Err(CliError::new(format!("wait task failed: {e}"))),
        Err(_) => Err(CliError::new(format!(
            "hermesd did not exit within {} s",
            timeout.as_secs()
        ))),
    }
}
