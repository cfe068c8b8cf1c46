//! A temporary HERMES_HOME with its own socket, and helpers to run hermesctl against it.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
};

use tempfile::TempDir;

/// Config that keeps the daemon from sending the fake model requests a test did not script:
/// no generated titles, no automatic compression (Python Hermes' test config does the same).
/// `use_fake_model` adds it; tests that write their own config.yaml append it.
pub const QUIET_AUXILIARY: &str =
    "auxiliary:\n  title_generation:\n    enabled: false\ncompression:\n  enabled: false\n";

/// Merge `extra` into `base`: mappings key by key, anything else replaced.
fn merge(base: &mut serde_yaml::Value, extra: serde_yaml::Value) {
    match (base, extra) {
        (serde_yaml::Value::Mapping(base), serde_yaml::Value::Mapping(extra)) => {
            for (key, value) in extra {
                match base.get_mut(&key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (_, serde_yaml::Value::Null) => {}
        (base, extra) => *base = extra,
    }
}

/// A private home for one test; removed when dropped.
pub struct TestHome {
    dir: TempDir,
}

impl Default for TestHome {
    fn default() -> Self {
        Self::new()
    }
}

impl TestHome {
    pub fn new() -> Self {
        // Short paths: a socket path must fit in 107 bytes.
        let dir = tempfile::Builder::new()
            .prefix("hd")
            .tempdir_in("/tmp")
            .expect("create temp home");
        Self { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The home directory of the fake user (its `~/.hermes` is where profiles live).
    pub fn user_home(&self) -> PathBuf {
        self.path().join("u")
    }

    /// A working directory of the fake user's (`~/work`, made on first use): the place for
    /// what a test's commands create and delete. The Hermes home itself is read-only to every
    /// process the agent runs.
    pub fn work_dir(&self) -> PathBuf {
        let dir = self.user_home().join("work");
        std::fs::create_dir_all(&dir).expect("create ~/work");
        dir
    }

    pub fn socket(&self) -> PathBuf {
        self.path().join("hermesd.sock")
    }

    pub fn write(&self, relative: &str, text: &str) {
        let path = self.path().join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent");
        }
        std::fs::write(path, text).expect("write file");
    }

    /// Point this home's model at a fake server (OpenAI format) with [`QUIET_AUXILIARY`], then
    /// `extra` YAML merged over it (so `extra` may turn compression or titles back on).
    pub fn use_fake_model(&self, server: &crate::fake_llm::FakeLlm, extra: &str) {
        let mut tree: serde_yaml::Value = serde_yaml::from_str(&format!(
            "model:\n  provider: custom\n  default: fake-model\n  base_url: {}\n  api_key: sk-test\n{QUIET_AUXILIARY}",
            server.openai_base()
        ))
        .expect("the base test config is valid YAML");
        let extra: serde_yaml::Value =
            serde_yaml::from_str(extra).expect("the test's extra config is valid YAML");
        merge(&mut tree, extra);
        self.write(
            "config.yaml",
            &serde_yaml::to_string(&tree).expect("serialise the test config"),
        );
    }

    /// A command with a clean environment pointing at this home.
    pub fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.user_home())
            .env("HERMES_HOME", self.path())
            .stdin(Stdio::null());
        command
    }

    /// SIGKILL this home's daemon and wait until it is dead: the kernel releases its pidfile
    /// lock exactly then, so a shared lock on the file is granted (20 s at most).
    pub async fn kill_daemon_hard(&self) {
        let pidfile = self.path().join("hermesd.pid");
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .expect("read the pidfile")
            .trim()
            .parse()
            .expect("a pid in the pidfile");
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .expect("SIGKILL the daemon");
        let locked = tokio::task::spawn_blocking(move || {
            let file = std::fs::File::open(&pidfile).expect("open the pidfile");
            nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockShared).map(drop)
        });
        tokio::time::timeout(std::time::Duration::from_secs(20), locked)
            .await
            .expect("the killed daemon released its pidfile lock within 20 s")
            .expect("join the lock wait")
            .expect("lock the pidfile");
    }

    /// The pid of this home's running daemon (from its pidfile).
    pub fn daemon_pid(&self) -> String {
        std::fs::read_to_string(self.path().join("hermesd.pid"))
            .expect("read the pidfile")
            .trim()
            .to_string()
    }

    /// A field of the running daemon's `/proc/<pid>/status` given in kB (`VmRSS:`, `VmHWM:`),
    /// in MiB.
    pub fn daemon_status_mib(&self, field: &str) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.daemon_pid()))
            .expect("read the daemon's /proc status");
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("{field} in /proc status"));
        kib / 1024.0
    }

    /// Resident memory of this home's running daemon, in MiB.
    pub fn daemon_rss_mib(&self) -> f64 {
        self.daemon_status_mib("VmRSS:")
    }

    /// Reset the daemon's peak RSS (`VmHWM`) to its current RSS; false where the kernel refuses.
    pub fn reset_daemon_peak(&self) -> bool {
        std::fs::write(format!("/proc/{}/clear_refs", self.daemon_pid()), "5").is_ok()
    }

    /// Run hermesctl off the async runtime (for tests whose fake servers run on it).
    pub async fn ctl_async(&self, args: &[&str]) -> CtlOutput {
        let mut command = self.command(&crate::binary("hermesctl"));
        command.args(args);
        let output = tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("join hermesctl")
            .expect("run hermesctl");
        CtlOutput(output)
    }

    /// Run hermesctl off the async runtime with `input` on its standard input.
    pub async fn ctl_stdin_async(&self, args: &[&str], input: &str) -> CtlOutput {
        use std::io::Write;
        let mut command = self.command(&crate::binary("hermesctl"));
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let input = input.to_owned();
        let output = tokio::task::spawn_blocking(move || {
            let mut child = command.spawn()?;
            child
                .stdin
                .take()
                .expect("piped stdin")
                .write_all(input.as_bytes())?;
            child.wait_with_output()
        })
        .await
        .expect("join hermesctl")
        .expect("run hermesctl");
        CtlOutput(output)
    }

    /// Run hermesctl with these arguments and collect its output.
    pub fn ctl(&self, args: &[&str]) -> CtlOutput {
        let output = self
            .command(&crate::binary("hermesctl"))
            .args(args)
            .output()
            .expect("run hermesctl");
        CtlOutput(output)
    }
}

/// Stops the daemon that hermesctl started in the background for a home, when the test ends.
pub struct StopOnDrop<'a>(pub &'a TestHome);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        let _ = self.0.ctl(&["daemon", "stop"]);
    }
}

/// What a hermesctl run printed.
pub struct CtlOutput(pub Output);

impl CtlOutput {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }

    pub fn code(&self) -> Option<i32> {
        self.0.status.code()
    }

    /// Assert success and return stdout.
    pub fn ok(&self) -> String {
        assert!(
            self.0.status.success(),
            "hermesctl failed ({:?})\nstdout: {}\nstderr: {}",
            self.0.status,
            self.stdout(),
            self.stderr()
        );
        self.stdout()
    }

    /// Assert success and parse stdout as one JSON document.
    pub fn json(&self) -> serde_json::Value {
        let out = self.ok();
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }

    /// Assert failure and return stderr.
    pub fn err(&self) -> String {
        assert!(
            !self.0.status.success(),
            "hermesctl should have failed\nstdout: {}",
            self.stdout()
        );
        self.stderr()
    }
}
