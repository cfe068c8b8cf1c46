//! Starting and stopping a local browser: the first of Hermes' executables on PATH, started
//! headless in its own process group with its own profile directory under
//! `$HERMES_HOME/cache/browser/`, its DevTools endpoint read from the profile's
//! `DevToolsActivePort`, within a time limit. The process group is killed and the profile
//! removed when the browser is closed; profiles a killed daemon left behind (and their
//! browsers) are cleaned up before the first start.

use std::{
    collections::VecDeque,
    path::{Path, PathBuf},
    process::Stdio,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

use super::{BrowserError, proxy::Proxy};
use crate::policy::url::UrlPolicy;

/// The executables tried, in order (Hermes' list).
pub const EXECUTABLES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];
/// Stderr lines kept to explain a browser that would not start.
const STDERR_LINES: usize = 12;

/// The first browser executable on `path` (a PATH value).
pub fn find_executable(path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let path = path?;
    for name in EXECUTABLES {
        for dir in std::env::split_paths(path) {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Some(candidate);
            }
        }
    }
    None
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether Chromium's sandbox cannot work here: running as root, or inside a container.
fn needs_no_sandbox() -> bool {
    nix::unistd::geteuid().is_root()
        || Path::new("/.dockerenv").exists()
        || Path::new("/run/.containerenv").exists()
}

/// A browser process this daemon started.
#[derive(Debug)]
pub struct Launched {
    child: Child,
    pgid: i32,
    pub profile: PathBuf,
    /// The browser's DevTools WebSocket URL.
    pub ws_url: String,
    /// The proxy every connection of the browser goes through; ends with it.
    _proxy: Proxy,
}

impl Launched {
    /// The browser's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Whether the process has exited.
    pub fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Kill the process group, reap the browser and remove the profile.
    pub async fn stop(mut self) {
        kill_group(self.pgid);
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        remove_profile(self.profile).await;
    }
}

fn kill_group(pgid: i32) {
    use nix::sys::signal::{Signal, killpg};
    if pgid > 1 {
        let _ = killpg(nix::unistd::Pid::from_raw(pgid), Signal::SIGKILL);
    }
}

async fn remove_profile(profile: PathBuf) {
    let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(profile)).await;
}

/// Start `exe` headless with a new profile under `root`, within `timeout`, connecting only
/// through a proxy of its own that judges every connection by `policy`.
pub async fn launch(
    exe: &Path,
    root: &Path,
    timeout: Duration,
    policy: UrlPolicy,
) -> Result<Launched, BrowserError> {
    let proxy = Proxy::start(policy).await?;
    let profile = new_profile(root)?;
    let mut command = Command::new(exe);
    command
        .arg("--headless=new")
        .arg("--remote-debugging-port=0")
        .arg("--remote-debugging-address=127.0.0.1")
        .arg(format!("--user-data-dir={}", profile.display()))
        .args([
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-gpu",
            "--disable-quic",
            "--disable-extensions",
            "--disable-default-apps",
            "--disable-breakpad",
            "--metrics-recording-only",
            "--mute-audio",
            "--password-store=basic",
        ]);
    command.args(proxy.browser_args());
    if needs_no_sandbox() {
        command.arg("--no-sandbox");
    }
    command
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| BrowserError::Start(format!("cannot run {}: {e}", exe.display())))?;
    let pgid = child.id().map_or(0, |p| p as i32);
    let stderr = Arc::new(Mutex::new(VecDeque::new()));
    let (listening_tx, mut listening) = tokio::sync::watch::channel(false);
    if let Some(pipe) = child.stderr.take() {
        let kept = Arc::clone(&stderr);
        // Drains the browser's stderr for its whole life, keeping the last lines.
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains("DevTools listening on") {
                    let _ = listening_tx.send(true);
                }
                if let Ok(mut kept) = kept.lock() {
                    if kept.len() == STDERR_LINES {
                        kept.pop_front();
                    }
                    kept.push_back(line);
                }
            }
        });
    }
    let started = Instant::now();
    let port_file = profile.join("DevToolsActivePort");
    let failure = |why: String| {
        let tail = stderr
            .lock()
            .map(|l| l.iter().cloned().collect::<Vec<_>>().join(" | "))
            .unwrap_or_default();
        if tail.is_empty() {
            BrowserError::Start(why)
        } else {
            BrowserError::Start(format!("{why}; its last output: {tail}"))
        }
    };
    // The browser says on stderr when DevTools listens; the port file is read then (and, while
    // it is not there yet, each time the browser writes another line or exits).
    loop {
        if let Some(ws_url) = read_port_file(&port_file) {
            return Ok(Launched {
                child,
                pgid,
                profile,
                ws_url,
                _proxy: proxy,
            });
        }
        let left = timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            kill_group(pgid);
            let _ = child.wait().await;
            remove_profile(profile).await;
            return Err(failure(format!(
                "{} did not open its DevTools port within {}s",
                exe.display(),
                timeout.as_secs()
            )));
        }
        let step = if *listening.borrow() {
            // Listening was announced; the file follows at once.
            Duration::from_millis(20).min(left)
        } else {
            left
        };
        tokio::select! {
            status = child.wait() => {
                let status = status.map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
                // The stderr task may still hold the last lines; give it the pipe's end.
                tokio::task::yield_now().await;
                remove_profile(profile).await;
                return Err(failure(format!("{} exited at start ({status})", exe.display())));
            }
            _ = listening.changed() => {}
            () = tokio::time::sleep(step) => {}
        }
    }
}

/// `ws://127.0.0.1:<port><path>` from a `DevToolsActivePort` file (port, then path).
fn read_port_file(file: &Path) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let mut lines = text.lines();
    let port: u16 = lines.next()?.trim().parse().ok()?;
    let path = lines.next()?.trim();
    path.starts_with('/')
        .then(|| format!("ws://127.0.0.1:{port}{path}"))
}

/// A new profile directory named after this daemon's pid.
fn new_profile(root: &Path) -> Result<PathBuf, BrowserError> {
    std::fs::create_dir_all(root)
        .map_err(|e| BrowserError::Start(format!("cannot create {}: {e}", root.display())))?;
    let prefix = format!("{}-", std::process::id());
    let dir = tempfile::Builder::new()
        .prefix(&prefix)
        .tempdir_in(root)
        .map_err(|e| {
            BrowserError::Start(format!(
                "cannot create a profile in {}: {e}",
                root.display()
            ))
        })?;
    Ok(dir.keep())
}

/// Remove the profiles under `root` that another (dead) daemon left, killing any browser still
/// running on one: Chromium's `SingletonLock` link names its pid, which is signalled only when
/// that process's command line names the profile.
pub fn clean_stale(root: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(root) else {
        return 0;
    };
    let ours = format!("{}-", std::process::id());
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&ours) {
            continue;
        }
        let dir = entry.path();
        if let Some(pid) = lock_pid(&dir) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let needle = format!("--user-data-dir={}", dir.display());
            if String::from_utf8_lossy(&cmdline).contains(&needle) {
                kill_group(pid);
            }
        }
        if std::fs::remove_dir_all(&dir).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The pid in a profile's `SingletonLock` link (`host-pid`).
fn lock_pid(dir: &Path) -> Option<i32> {
    let target = std::fs::read_link(dir.join("SingletonLock")).ok()?;
    let text = target.to_string_lossy().into_owned();
    text.rsplit('-').next()?.parse().ok()
}
