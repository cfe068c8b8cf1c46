//! Running the real hermesd: started in the foreground with a NOTIFY_SOCKET, so "ready" is the
//! daemon's own READY=1 (the systemd protocol), never a sleep.

use std::{
    io::Read,
    os::unix::net::UnixDatagram,
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    time::Duration,
};

use hermes_proto::pb;
use nix::{
    sys::signal::{Signal, kill},
    unistd::Pid,
};
use tonic::transport::Channel;

use crate::TestHome;

/// How long a test waits for a notification before failing.
pub const NOTIFY_TIMEOUT: Duration = Duration::from_secs(20);

/// A hermesd child process; killed with SIGKILL when dropped if still running.
pub struct DaemonProcess {
    pub child: Child,
    pub socket: PathBuf,
    notify: UnixDatagram,
    notify_path: PathBuf,
    /// The daemon's stderr (its log), once [`DaemonProcess::wait_for_log`] began reading it.
    log: Option<tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStderr>>>,
}

/// A datagram socket that receives sd_notify messages.
pub fn notify_socket(dir: &Path, name: &str) -> (UnixDatagram, PathBuf) {
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    let socket = UnixDatagram::bind(&path).expect("bind notify socket");
    // A daemon started as another user (the peer-uid test) must be able to send to it; the
    // socket sits in the test's private directory.
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .expect("chmod notify socket");
    socket
        .set_read_timeout(Some(NOTIFY_TIMEOUT))
        .expect("set timeout");
    (socket, path)
}

/// Receive notify datagrams until one contains `wanted` (e.g. "READY=1").
pub fn wait_notify(socket: &UnixDatagram, wanted: &str) -> Result<(), String> {
    let mut buf = [0u8; 512];
    loop {
        let n = socket
            .recv(&mut buf)
            .map_err(|e| format!("no {wanted} notification: {e}"))?;
        if String::from_utf8_lossy(&buf[..n])
            .lines()
            .any(|l| l == wanted)
        {
            return Ok(());
        }
    }
}

impl DaemonProcess {
    /// Start hermesd on `home` with extra arguments and wait for READY.
    pub fn start(home: &TestHome, args: &[&str]) -> Self {
        Self::start_with(home, args, |_| {})
    }

    /// Like [`DaemonProcess::start`], letting the caller adjust the command first.
    pub fn start_with(home: &TestHome, args: &[&str], adjust: impl FnOnce(&mut Command)) -> Self {
        Self::start_program(home, &crate::binary("hermesd"), args, adjust)
    }

    /// Start a given hermesd executable (e.g. a copy another user may run).
    pub fn start_program(
        home: &TestHome,
        program: &Path,
        args: &[&str],
        adjust: impl FnOnce(&mut Command),
    ) -> Self {
        let (notify, notify_path) = notify_socket(home.path(), "notify");
        let mut command = home.command(program);
        command
            .args(args)
            .env("NOTIFY_SOCKET", &notify_path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        adjust(&mut command);
        let mut child = command.spawn().expect("spawn hermesd");
        if let Err(e) = wait_notify(&notify, "READY=1") {
            let _ = child.kill();
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                let _ = pipe.read_to_string(&mut stderr);
            }
            panic!("hermesd did not become ready: {e}\nstderr: {stderr}");
        }
        Self {
            child,
            socket: home.socket(),
            notify,
            notify_path,
            log: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.pid() as i32), signal).expect("send signal");
    }

    /// Wait for the next notification containing `wanted`.
    pub fn expect_notify(&self, wanted: &str) {
        wait_notify(&self.notify, wanted).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Read the daemon's log on stderr until a line contains every one of `needles`, and return
    /// that line; fails the test after 20 s or when stderr closes. Only for what the daemon
    /// announces nowhere else (raise the level with `--log-level` for a debug line).
    pub async fn wait_for_log(&mut self, needles: &[&str]) -> String {
        if self.log.is_none() {
            let stderr = self
                .child
                .stderr
                .take()
                .expect("stderr is piped and unread");
            let stderr = tokio::process::ChildStderr::from_std(stderr).expect("async stderr");
            self.log = Some(tokio::io::AsyncBufReadExt::lines(
                tokio::io::BufReader::new(stderr),
            ));
        }
        let lines = self.log.as_mut().expect("set above");
        let found = async {
            while let Some(line) = lines.next_line().await.expect("read the daemon's stderr") {
                if needles.iter().all(|needle| line.contains(needle)) {
                    return line;
                }
            }
            panic!("the daemon's stderr closed before a line with {needles:?}");
        };
        tokio::time::timeout(NOTIFY_TIMEOUT, found)
            .await
            .unwrap_or_else(|_| panic!("no log line with {needles:?} within {NOTIFY_TIMEOUT:?}"))
    }

    /// Send SIGTERM and wait for the exit status.
    pub fn terminate(mut self) -> ExitStatus {
        self.signal(Signal::SIGTERM);
        self.child.wait().expect("wait hermesd")
    }

    /// SIGKILL, as a crash would.
    pub fn kill_hard(mut self) {
        self.signal(Signal::SIGKILL);
        let _ = self.child.wait();
    }

    /// A gRPC channel to this daemon.
    pub async fn channel(&self) -> Channel {
        connect(&self.socket).await
    }

    /// GetStatus over the socket.
    pub async fn status(&self) -> pb::GetStatusResponse {
        pb::daemon_client::DaemonClient::new(self.channel().await)
            .get_status(pb::GetStatusRequest {})
            .await
            .expect("GetStatus")
            .into_inner()
    }
}

/// Connect to a socket with the client library of hermes-proto.
pub async fn connect(socket: &Path) -> Channel {
    hermes_proto::client::connect(socket)
        .await
        .unwrap_or_else(|e| panic!("connect {}: {e}", socket.display()))
}

impl Drop for DaemonProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_file(&self.notify_path);
    }
}
