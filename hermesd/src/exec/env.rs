//! The environment commands run with: the user's login environment, captured
//! once (at daemon start and on reload), and the per-command child
//! environment built from it: the allow-listed variables (`env_allowlist.rs`)
//! and those the user passes through, never Hermes' provider credentials.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::env_blocklist::PROVIDER_ENV_BLOCKLIST;
use crate::config::settings::EnvPassthrough;

#[path = "env_allowlist.rs"]
mod allowlist;

/// How long the login shell may take to print its environment.
const CAPTURE_TIMEOUT: Duration = Duration::from_secs(5);
/// Upper bound on the captured environment's size.
const CAPTURE_MAX_BYTES: u64 = 4 * 1024 * 1024;
/// Printed before `env -0` so profile chatter on stdout can be skipped.
pub(super) const ENV_MARKER: &str = "__HERMES_LOGIN_ENV_BEGIN__";
/// Extra rc files Python sources before its snapshot (bash only).
const BASH_INIT_FILES: &str = "~/.profile ~/.bash_profile ~/.bashrc";

/// Extra-env prefix that forces a variable through (Python's `_HERMES_FORCE_`).
pub const FORCE_PREFIX: &str = "_HERMES_FORCE_";
/// Prefix of the daemon's own internal variables; never passed to commands.
const DAEMON_INTERNAL_PREFIX: &str = "HERMESD_";
/// Name suffixes of an `extra` variable (set by hermesd itself) or of the
/// capturing shell's environment that are dropped unless passed through.
const SECRET_SUFFIXES: &[&str] = &["_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD"];
/// Active-virtualenv markers that would redirect other projects' tooling.
const VENV_MARKERS: &[&str] = &["VIRTUAL_ENV", "CONDA_PREFIX"];
/// Shell bookkeeping not worth copying from the capturing shell.
const SHELL_STATE_VARS: &[&str] = &["PWD", "OLDPWD", "SHLVL", "_"];
/// Appended to PATH when missing (Python's `_SANE_PATH`).
const SANE_PATH: &[&str] = &[
    "/opt/homebrew/bin",
    "/opt/homebrew/sbin",
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// Where a [`LoginEnv`] came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvOrigin {
    /// Printed by this login shell.
    LoginShell(PathBuf),
    /// The daemon's own environment (the login shell failed).
    DaemonFallback,
}

/// The user's login environment, captured once and reused for every command,
/// with the user's `terminal.env_passthrough` in force.
#[derive(Clone)]
pub struct LoginEnv {
    vars: Vec<(OsString, OsString)>,
    origin: EnvOrigin,
    passthrough: Arc<[EnvPassthrough]>,
}

impl std::fmt::Debug for LoginEnv {
    /// Lists variable names only; values may be credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginEnv")
            .field("origin", &self.origin)
            .field(
                "names",
                &self.vars.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("passthrough", &self.passthrough)
            .finish()
    }
}

impl LoginEnv {
    /// Wraps an explicit set of variables (tests, or a daemon-built env).
    pub fn from_vars(vars: Vec<(OsString, OsString)>, origin: EnvOrigin) -> Self {
        Self {
            vars,
            origin,
            passthrough: Arc::from([]),
        }
    }

    /// These variables with `passthrough` (`terminal.env_passthrough`) in force instead of
    /// what was; a listed Hermes provider credential is logged and stays out.
    pub fn with_passthrough(&self, passthrough: Arc<[EnvPassthrough]>) -> Self {
        for listed in passthrough.iter() {
            if is_hard_blocked(&listed.name, &listed.name.to_ascii_uppercase()) {
                tracing::warn!(
                    name = %listed.name,
                    "terminal.env_passthrough names a variable Hermes keeps from every command \
                     (a provider credential or hermesd's own); it is not passed"
                );
            }
        }
        Self {
            vars: self.vars.clone(),
            origin: self.origin.clone(),
            passthrough,
        }
    }

    /// The `terminal.env_passthrough` in force.
    pub fn passthrough(&self) -> &[EnvPassthrough] {
        &self.passthrough
    }

    /// All captured variables.
    pub fn vars(&self) -> &[(OsString, OsString)] {
        &self.vars
    }

    /// The value of one variable.
    pub fn get(&self, key: &str) -> Option<&OsStr> {
        self.vars
            .iter()
            .find(|(k, _)| k.as_os_str() == OsStr::new(key))
            .map(|(_, v)| v.as_os_str())
    }

    /// Where the variables came from.
    pub fn origin(&self) -> &EnvOrigin {
        &self.origin
    }
}

/// Runs the user's login shell once (`bash -lc`, or `$SHELL -lc` without
/// bash) with stdin closed and a 5 s timeout, and parses its `env -0`. Falls
/// back to the daemon's own environment, logging why.
pub async fn capture_login_env() -> LoginEnv {
    let shell = match tokio::task::spawn_blocking(find_login_shell).await {
        Ok(shell) => shell,
        Err(err) => {
            tracing::warn!(error = %err, "login env: shell lookup failed; using daemon environment");
            return daemon_env();
        }
    };
    let base: Vec<_> = std::env::vars_os()
        .filter(|(k, _)| !is_stripped(k, |_| false))
        .collect();
    match run_capture(&shell, base).await {
        Ok(vars) => LoginEnv::from_vars(vars, EnvOrigin::LoginShell(shell)),
        Err(reason) => {
            tracing::warn!(shell = %shell.display(), %reason, "login env capture failed; using daemon environment");
            daemon_env()
        }
    }
}

fn daemon_env() -> LoginEnv {
    let vars = std::env::vars_os()
        .filter(|(k, _)| !is_shell_state(k))
        .collect();
    LoginEnv::from_vars(vars, EnvOrigin::DaemonFallback)
}

fn is_shell_state(key: &OsStr) -> bool {
    SHELL_STATE_VARS.iter().any(|s| OsStr::new(s) == key)
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// bash from PATH (or the usual places), else a POSIX-family `$SHELL`, else `/bin/sh`.
fn find_login_shell() -> PathBuf {
    let from_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|dir| dir.join("bash"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let fixed = [PathBuf::from("/usr/bin/bash"), PathBuf::from("/bin/bash")];
    if let Some(bash) = from_path
        .into_iter()
        .chain(fixed)
        .find(|p| is_executable(p))
    {
        return bash;
    }
    if let Some(shell) = std::env::var_os("SHELL").map(PathBuf::from) {
        let name = shell.file_name().and_then(OsStr::to_str).unwrap_or("");
        if matches!(name, "zsh" | "sh" | "dash" | "ksh" | "mksh") && is_executable(&shell) {
            return shell;
        }
    }
    PathBuf::from("/bin/sh")
}

fn capture_script(shell: &Path) -> String {
    let is_bash = shell.file_name().is_some_and(|n| n == "bash");
    let mut script = String::new();
    if is_bash {
        script.push_str(&format!(
            "for __f in {BASH_INIT_FILES}; do [ -r \"$__f\" ] && . \"$__f\" >/dev/null 2>&1; done; unset __f; "
        ));
    }
    script.push_str(&format!("printf '\\n%s\\n' {ENV_MARKER}; env -0"));
    script
}

/// Runs `shell -lc` with exactly `base` as its environment and returns what
/// it printed with `env -0` after its profile ran.
pub(super) async fn run_capture(
    shell: &Path,
    base: Vec<(OsString, OsString)>,
) -> Result<Vec<(OsString, OsString)>, String> {
    let mut cmd = Command::new(shell);
    cmd.arg("-lc")
        .arg(capture_script(shell))
        .env_clear()
        .envs(base)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    // The login shell runs start-up files the agent could have created (one that did not
    // exist is not covered), so it runs confined like everything the agent runs; and a
    // SIGHUP the agent sends must not make the daemon run them outside.
    crate::confine::confine(&mut cmd, Path::new("/"))
        .map_err(|e| format!("confine {}: {e}", shell.display()))?;
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", shell.display()))?;
    let pid = child.id();
    let Some(stdout) = child.stdout.take() else {
        return Err("no stdout pipe".to_owned());
    };
    let mut out = Vec::new();
    let read = async {
        // Stop at EOF; a profile-started daemon may keep the pipe open, so
        // also stop shortly after the shell itself exits.
        let mut limited = stdout.take(CAPTURE_MAX_BYTES);
        let mut buf = vec![0u8; 64 * 1024];
        let mut status = None;
        loop {
            tokio::select! {
                n = limited.read(&mut buf) => match n {
                    Ok(0) | Err(_) => break,
                    Ok(n) => out.extend_from_slice(&buf[..n]),
                },
                st = child.wait(), if status.is_none() => status = Some(st),
                _ = tokio::time::sleep(Duration::from_millis(200)), if status.is_some() => break,
            }
        }
        match status {
            Some(st) => st,
            None => child.wait().await,
        }
    };
    let status = match tokio::time::timeout(CAPTURE_TIMEOUT, read).await {
        Ok(status) => status.map_err(|e| format!("wait for {}: {e}", shell.display()))?,
        Err(_) => {
            if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            return Err(format!("timed out after {}s", CAPTURE_TIMEOUT.as_secs()));
        }
    };
    let vars = parse_env_output(&out)
        .ok_or_else(|| format!("no environment in output (exit status {status})"))?;
    if !vars.iter().any(|(k, _)| k == "PATH") {
        return Err("captured environment has no PATH".to_owned());
    }
    Ok(vars)
}

/// Parses the `env -0` output that follows the marker line.
pub(super) fn parse_env_output(out: &[u8]) -> Option<Vec<(OsString, OsString)>> {
    let marker = format!("\n{ENV_MARKER}\n");
    let start = out
        .windows(marker.len())
        .position(|w| w == marker.as_bytes())?
        + marker.len();
    let vars = out[start..]
        .split(|&b| b == 0)
        .filter_map(|entry| {
            let eq = entry.iter().position(|&b| b == b'=')?;
            if eq == 0 {
                return None;
            }
            let key = OsString::from_vec(entry[..eq].to_vec());
            if is_shell_state(&key) {
                return None;
            }
            Some((key, OsString::from_vec(entry[eq + 1..].to_vec())))
        })
        .collect();
    Some(vars)
}

/// Hermes-internal secrets under dynamic names: `AUXILIARY_*_API_KEY`,
/// `AUXILIARY_*_BASE_URL`, `GATEWAY_RELAY_*_{SECRET,KEY,TOKEN}`.
fn is_internal_secret(upper: &str) -> bool {
    (upper.starts_with("AUXILIARY_")
        && (upper.ends_with("_API_KEY") || upper.ends_with("_BASE_URL")))
        || (upper.starts_with("GATEWAY_RELAY_")
            && ["_SECRET", "_KEY", "_TOKEN"]
                .iter()
                .any(|s| upper.ends_with(s)))
}

/// Stripped regardless of any passthrough.
fn is_hard_blocked(name: &str, upper: &str) -> bool {
    name.starts_with(FORCE_PREFIX)
        || upper.starts_with(DAEMON_INTERNAL_PREFIX)
        || is_internal_secret(upper)
        || PROVIDER_ENV_BLOCKLIST.binary_search(&name).is_ok()
        || VENV_MARKERS.contains(&name)
}

fn looks_secret(upper: &str) -> bool {
    SECRET_SUFFIXES.iter().any(|s| upper.ends_with(s))
}

/// True when `key` must not reach the capturing shell, or (from `extra`) a
/// command: hard-blocked, or secret-shaped and not passed through.
fn is_stripped(key: &OsStr, passed: impl Fn(&str) -> bool) -> bool {
    let Some(name) = key.to_str() else {
        return false;
    };
    let upper = name.to_ascii_uppercase();
    is_hard_blocked(name, &upper) || (looks_secret(&upper) && !passed(name))
}

/// Builds a command's environment: the login environment's allow-listed
/// variables (`env_allowlist.rs`) and those `terminal.env_passthrough` names
/// (the login environment's value, else the daemon's own), then `extra`
/// (which wins; a secret-shaped name of it needs passing through), completing
/// PATH with the standard system directories. Everything else is dropped.
/// Hermes' provider credentials, the daemon's internal variables and
/// virtualenv markers never pass. An `extra` key prefixed `_HERMES_FORCE_` is
/// set under its real name.
pub fn child_env(login: &LoginEnv, extra: &[(String, String)]) -> Vec<(OsString, OsString)> {
    child_env_with_passthrough(login, extra, &[])
}

/// [`child_env`], additionally passing the variables named in `passthrough`
/// (a skill's `required_environment_variables`). Hermes provider credentials
/// stay out even when listed.
pub fn child_env_with_passthrough(
    login: &LoginEnv,
    extra: &[(String, String)],
    passthrough: &[&str],
) -> Vec<(OsString, OsString)> {
    let passed = |name: &str| {
        passthrough.contains(&name) || login.passthrough.iter().any(|p| p.name == name)
    };
    let mut env: Vec<(OsString, OsString)> = Vec::with_capacity(login.vars.len() + extra.len() + 1);
    for (key, value) in &login.vars {
        // A name that is not UTF-8 is on no list.
        let Some(name) = key.to_str() else {
            continue;
        };
        if is_hard_blocked(name, &name.to_ascii_uppercase()) {
            continue;
        }
        if passed(name) || allowlist::is_allowed(name, &value.to_string_lossy()) {
            env.push((key.clone(), value.clone()));
        }
    }
    for listed in login.passthrough.iter() {
        let Some(value) = &listed.value else {
            continue;
        };
        let name = listed.name.as_str();
        if !is_hard_blocked(name, &name.to_ascii_uppercase())
            && !env.iter().any(|(k, _)| k.as_os_str() == OsStr::new(name))
        {
            env.push((OsString::from(name), OsString::from(value)));
        }
    }
    for (key, value) in extra {
        let name = match key.strip_prefix(FORCE_PREFIX) {
            Some(real) if !real.is_empty() && !is_internal_secret(&real.to_ascii_uppercase()) => {
                real
            }
            Some(_) => continue,
            None if is_stripped(OsStr::new(key), passed) => continue,
            None => key.as_str(),
        };
        env.retain(|(k, _)| k.as_os_str() != OsStr::new(name));
        env.push((OsString::from(name), OsString::from(value)));
    }
    let path = env
        .iter()
        .position(|(k, _)| k == "PATH")
        .map(|i| env.swap_remove(i).1)
        .unwrap_or_default();
    env.push((OsString::from("PATH"), complete_path(&path)));
    env
}

/// Drops empty and duplicate PATH entries and appends missing sane ones.
fn complete_path(path: &OsStr) -> OsString {
    let mut entries: Vec<&[u8]> = Vec::new();
    for entry in path.as_bytes().split(|&b| b == b':') {
        if !entry.is_empty() && !entries.contains(&entry) {
            entries.push(entry);
        }
    }
    for sane in SANE_PATH {
        if !entries.contains(&sane.as_bytes()) {
            entries.push(sane.as_bytes());
        }
    }
    OsString::from_vec(entries.join(&b':'))
}
