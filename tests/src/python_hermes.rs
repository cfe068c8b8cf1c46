//! Python Hermes as a peer for the benches: `hermes gateway run` from a venv the test command
//! provisions (`HERMESD_BENCH_HERMES`, its `hermes` executable), in a fresh home pointed at a
//! fake model with the API server platform on a free loopback port, stopped by its PID when
//! dropped (SIGTERM, then SIGKILL after 20 s).

use std::{
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use nix::{sys::signal, unistd::Pid};
use tempfile::TempDir;

use crate::{fake_llm::FakeLlm, http};

/// The environment variable naming Python Hermes' `hermes` executable.
pub const ENV: &str = "HERMESD_BENCH_HERMES";

/// A running Python Hermes gateway.
pub struct PythonGateway {
    child: Child,
    pub port: u16,
    /// Its home, kept until the process is gone.
    _home: TempDir,
}

/// Python Hermes' `hermes`, when the environment names one.
pub fn executable() -> Option<PathBuf> {
    std::env::var_os(ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

impl PythonGateway {
    /// Start `hermes gateway run` serving the API with `key`, its model being `llm`
    /// (`gateway.api_server.max_concurrent_runs: 0`, as the daemon is run), and wait until it
    /// listens.
    pub async fn start(hermes: &std::path::Path, llm: &FakeLlm, key: &str) -> Self {
        let home = tempfile::Builder::new()
            .prefix("python-hermes-")
            .tempdir()
            .expect("a home for Python Hermes");
        let config = format!(
            "model:\n  default: fake-model\n  provider: custom\n  base_url: {}\n  \
             api_key: dummy-key\n  context_length: 200000\n\
             gateway:\n  api_server:\n    max_concurrent_runs: 0\n",
            llm.openai_base()
        );
        std::fs::write(home.path().join("config.yaml"), config).expect("write its config.yaml");
        let port = http::free_port();
        let log = std::fs::File::create(home.path().join("gateway.out")).expect("its log");
        let child = Command::new(hermes)
            .args(["gateway", "run"])
            .env("HERMES_HOME", home.path())
            .env("HOME", home.path())
            .env("API_SERVER_ENABLED", "true")
            .env("API_SERVER_HOST", "127.0.0.1")
            .env("API_SERVER_PORT", port.to_string())
            .env("API_SERVER_KEY", key)
            .current_dir(home.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("its log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("start {} gateway run: {e}", hermes.display()));
        let mut gateway = PythonGateway {
            child,
            port,
            _home: home,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            if let Ok(Some(status)) = gateway.child.try_wait() {
                panic!(
                    "Python Hermes' gateway exited ({status}): {}",
                    gateway.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "Python Hermes' API server did not listen in 120 s: {}",
                gateway.log()
            );
            // Polling a process we do not control; there is no readiness signal to wait on.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        gateway
    }

    /// What it printed so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self._home.path().join("gateway.out")).unwrap_or_default()
    }

    /// A field of its `/proc/<pid>/status` (`VmRSS:`, `VmHWM:`), in MiB.
    pub fn status_mib(&self, field: &str) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("read Python Hermes' /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{field} in Python Hermes' /proc status"))
            / 1024.0
    }
}

impl Drop for PythonGateway {
    fn drop(&mut self) {
        let pid = Pid::from_raw(self.child.id() as i32);
        let _ = signal::kill(pid, signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
