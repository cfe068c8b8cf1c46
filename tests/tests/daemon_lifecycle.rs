//! hermesd as a process: start, stop, refusal of a second daemon, stale sockets, crashes,
//! systemd notify and socket activation, closed output streams, bad config (a bad setting is a
//! notice, a broken file a stop) and a bad database.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::{
    os::unix::{
        fs::{FileTypeExt, PermissionsExt},
        net::UnixListener,
    },
    process::Stdio,
};

use hermes_proto::pb;
use hermes_tests::{DaemonProcess, TestHome, binary, daemon::connect};
use nix::sys::signal::Signal;

fn run_hermesd(home: &TestHome, args: &[&str]) -> (Option<i32>, String) {
    let output = home
        .command(&binary("hermesd"))
        .args(args)
        .output()
        .expect("run hermesd");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn starts_serves_and_stops_on_sigterm() {
    let home = TestHome::new();
    let daemon = DaemonProcess::start(&home, &[]);
    let status = daemon.status().await;
    assert_eq!(status.pid, daemon.pid());
    assert_eq!(status.protocol_version, hermes_proto::PROTOCOL_VERSION);
    assert_eq!(status.home, home.path().display().to_string());
    assert_eq!(status.socket, home.socket().display().to_string());

    let meta = std::fs::metadata(home.socket()).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o600,
        "socket must be 0600"
    );
    let home_mode = std::fs::metadata(home.path()).unwrap().permissions().mode() & 0o777;
    assert_eq!(home_mode & 0o077, 0, "home must not be open to others");
    let db_mode = std::fs::metadata(home.path().join("hermesd.db"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(db_mode & 0o777, 0o600);

    let exit = daemon.terminate();
    assert!(exit.success(), "clean exit on SIGTERM, got {exit:?}");
    assert!(!home.socket().exists(), "socket removed at exit");
    let log = std::fs::read_to_string(home.path().join("logs/hermesd.log")).unwrap();
    assert!(log.contains("hermesd ready"), "log file written: {log}");
    assert!(log.contains("hermesd stopped"));
}

#[tokio::test(flavor = "multi_thread")]
async fn notifies_systemd_ready_then_stopping() {
    let home = TestHome::new();
    let daemon = DaemonProcess::start(&home, &[]); // waits for READY=1
    daemon.signal(Signal::SIGINT);
    daemon.expect_notify("STOPPING=1");
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn second_daemon_for_the_same_home_is_refused() {
    let home = TestHome::new();
    let daemon = DaemonProcess::start(&home, &[]);
    let (code, stderr) = run_hermesd(&home, &[]);
    assert_eq!(code, Some(3), "stderr: {stderr}");
    assert!(stderr.contains("already running"), "{stderr}");
    assert!(
        stderr.contains(&format!("pid {}", daemon.pid())),
        "{stderr}"
    );
    // The first one is untouched.
    assert_eq!(daemon.status().await.pid, daemon.pid());
}

#[tokio::test(flavor = "multi_thread")]
async fn stale_socket_is_replaced() {
    let home = TestHome::new();
    drop(UnixListener::bind(home.socket()).unwrap()); // leaves a dead socket file behind
    assert!(home.socket().exists());
    let daemon = DaemonProcess::start(&home, &[]);
    assert_eq!(daemon.status().await.pid, daemon.pid());
}

#[test]
fn a_file_in_place_of_the_socket_is_not_removed() {
    let home = TestHome::new();
    home.write("hermesd.sock", "not a socket");
    let (code, stderr) = run_hermesd(&home, &[]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("is not a socket"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(home.socket()).unwrap(),
        "not a socket"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_then_restart_keeps_the_database() {
    let home = TestHome::new();
    let daemon = DaemonProcess::start(&home, &[]);
    let mut sessions = pb::sessions_client::SessionsClient::new(daemon.channel().await);
    let created = sessions
        .create(pb::CreateSessionRequest {
            source: "cli".into(),
            title: "survives a crash".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    daemon.kill_hard();
    assert!(
        home.socket().exists(),
        "a SIGKILLed daemon leaves its socket"
    );

    let daemon = DaemonProcess::start(&home, &[]);
    let mut sessions = pb::sessions_client::SessionsClient::new(daemon.channel().await);
    let got = sessions
        .get(pb::GetSessionRequest {
            id: created.id.clone(),
            include_messages: false,
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    assert_eq!(got.title, "survives a crash");
}

#[tokio::test(flavor = "multi_thread")]
async fn socket_activation_uses_the_passed_fd() {
    use command_fds::{CommandFdExt, FdMapping};

    let home = TestHome::new();
    let activated = home.path().join("activated.sock");
    let listener = UnixListener::bind(&activated).unwrap();
    let (notify, notify_path) = hermes_tests::daemon::notify_socket(home.path(), "notify");
    // LISTEN_PID must be the daemon's pid: let sh set it to its own, then exec keeps the pid.
    let mut command = home.command(std::path::Path::new("/bin/sh"));
    command
        .arg("-c")
        .arg("LISTEN_PID=$$ LISTEN_FDS=1 exec \"$0\" \"$@\"")
        .arg(binary("hermesd"))
        .env("NOTIFY_SOCKET", &notify_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
        .fd_mappings(vec![FdMapping {
            parent_fd: std::os::fd::OwnedFd::from(listener),
            child_fd: 3,
        }])
        .unwrap();
    let mut child = command.spawn().unwrap();
    hermes_tests::daemon::wait_notify(&notify, "READY=1").unwrap();

    let channel = connect(&activated).await;
    let status = pb::daemon_client::DaemonClient::new(channel)
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(status.pid, child.id());
    assert_eq!(status.socket, activated.display().to_string());
    assert!(
        !home.socket().exists(),
        "no socket of its own under activation"
    );

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        Signal::SIGTERM,
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
    assert!(
        activated.exists(),
        "the activated socket belongs to systemd and stays"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn closed_stdout_and_stderr_do_not_kill_the_daemon() {
    let home = TestHome::new();
    let mut daemon = DaemonProcess::start_with(&home, &["--log-level", "debug"], |command| {
        command.stdout(Stdio::piped());
    });
    drop(daemon.child.stdout.take());
    drop(daemon.child.stderr.take());
    let mut client = pb::daemon_client::DaemonClient::new(daemon.channel().await);
    for _ in 0..20 {
        // Each reload logs lines to the closed stderr.
        client
            .reload_config(pb::ReloadConfigRequest {})
            .await
            .unwrap();
    }
    assert_eq!(daemon.status().await.pid, daemon.pid());
    assert!(daemon.terminate().success());
}

#[test]
fn malformed_config_names_file_and_line() {
    let home = TestHome::new();
    home.write(
        "config.yaml",
        "model:\n  default: gpt-4o\n  provider: [openai\n",
    );
    let (code, stderr) = run_hermesd(&home, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    let config = home.path().join("config.yaml").display().to_string();
    assert!(stderr.contains(&format!("{config} line ")), "{stderr}");
    assert!(!home.socket().exists());
}

#[test]
fn wrong_value_type_names_the_key_and_line() {
    let home = TestHome::new();
    home.write("config.yaml", "# mine\ndaemon:\n  drain_timeout: soon\n");
    let (code, stderr) = run_hermesd(&home, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("line 3"), "{stderr}");
    assert!(stderr.contains("daemon.drain_timeout"), "{stderr}");
}

#[test]
fn corrupt_database_is_a_clear_error() {
    let home = TestHome::new();
    home.write("hermesd.db", &"this is not sqlite ".repeat(300));
    let (code, stderr) = run_hermesd(&home, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("hermesd.db is not a readable SQLite database"),
        "{stderr}"
    );
    assert!(stderr.contains("move the file aside"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_dotenv_line_is_reported_without_its_content() {
    let home = TestHome::new();
    home.write(".env", "GOOD=1\nSECRET sk-live-123\n");
    let (code, stderr) = run_hermesd(&home, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(".env") && stderr.contains("line 2"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("sk-live-123"),
        "secrets never echoed: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn config_layers_defaults_file_env_dotenv_flags() {
    let home = TestHome::new();
    home.write(
        "config.yaml",
        "model:\n  default: from-file\n  provider: ${PROV}\n",
    );
    home.write(".env", "PROV=from-dotenv\n");
    // config.yaml, with ${VAR} from .env
    let daemon = DaemonProcess::start(&home, &[]);
    assert_eq!(daemon.status().await.model, "from-dotenv:from-file");
    daemon.terminate();

    // process env beats config.yaml
    let daemon = DaemonProcess::start_with(&home, &[], |c| {
        c.env("HERMES_INFERENCE_MODEL", "from-env");
    });
    assert_eq!(daemon.status().await.model, "from-dotenv:from-env");
    daemon.terminate();

    // .env beats the process env
    home.write(
        ".env",
        "PROV=from-dotenv\nHERMES_INFERENCE_MODEL=from-dotenv-model\n",
    );
    let daemon = DaemonProcess::start_with(&home, &[], |c| {
        c.env("HERMES_INFERENCE_MODEL", "from-env");
    });
    assert_eq!(daemon.status().await.model, "from-dotenv:from-dotenv-model");
    daemon.terminate();

    // flags beat everything
    let daemon = DaemonProcess::start(&home, &["--set", "model.default=from-flag"]);
    assert_eq!(daemon.status().await.model, "from-dotenv:from-flag");
    daemon.terminate();
}

#[tokio::test(flavor = "multi_thread")]
async fn reload_keeps_the_running_config_when_the_file_breaks() {
    let home = TestHome::new();
    home.write("config.yaml", "model: {default: first}\n");
    let daemon = DaemonProcess::start(&home, &[]);
    let mut client = pb::daemon_client::DaemonClient::new(daemon.channel().await);
    home.write(
        "config.yaml",
        "model: {default: second}\nunknown_thing: 1\n",
    );
    let reply = client
        .reload_config(pb::ReloadConfigRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(
        reply.notices.iter().any(|n| n.contains("unknown_thing")),
        "{:?}",
        reply.notices
    );
    assert_eq!(daemon.status().await.model, "second");

    home.write("config.yaml", "model: {default: [broken\n");
    let err = client
        .reload_config(pb::ReloadConfigRequest {})
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(
        err.message().contains("config.yaml line"),
        "{}",
        err.message()
    );
    assert_eq!(daemon.status().await.model, "second", "old config stays");

    // SIGHUP reloads too, announced as systemd's Type=notify-reload expects.
    home.write("config.yaml", "model: {default: third}\n");
    daemon.signal(Signal::SIGHUP);
    daemon.expect_notify("RELOADING=1");
    daemon.expect_notify("READY=1");
    assert_eq!(daemon.status().await.model, "third");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_setting_is_a_notice_and_the_default_not_a_stop() {
    let home = TestHome::new();
    home.write("config.yaml", "agent:\n  max_turns: lots\n");
    let notice = "agent.max_turns: \"lots\" is not a whole number; using 90";
    let daemon = DaemonProcess::start(&home, &[]);
    assert_eq!(
        daemon.status().await.pid,
        daemon.pid(),
        "the daemon started"
    );
    let log_file = home.path().join("logs/hermesd.log");
    hermes_tests::wait::until(
        "the notice reaches hermesd.log",
        std::time::Duration::from_secs(10),
        || {
            let log = std::fs::read_to_string(&log_file).unwrap_or_default();
            std::future::ready(log.contains(notice).then_some(()))
        },
    )
    .await;

    let mut client = pb::daemon_client::DaemonClient::new(daemon.channel().await);
    let reply = client
        .reload_config(pb::ReloadConfigRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        reply.notices.iter().filter(|n| *n == notice).count(),
        1,
        "{:?}",
        reply.notices
    );
    home.write("config.yaml", "agent:\n  max_turns: 12\n");
    let reply = client
        .reload_config(pb::ReloadConfigRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(reply.notices.is_empty(), "{:?}", reply.notices);
    assert!(daemon.terminate().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_bot_token_the_gateway_has_no_platforms() {
    let home = TestHome::new();
    let daemon = DaemonProcess::start(&home, &[]);
    let channel = daemon.channel().await;
    let status = pb::gateway_client::GatewayClient::new(channel)
        .status(pb::GatewayStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(status.platforms.is_empty(), "{:?}", status.platforms);
}

#[tokio::test(flavor = "multi_thread")]
async fn interrupting_an_unknown_or_idle_session_is_clear() {
    let home = TestHome::new();
    let daemon = DaemonProcess::start(&home, &[]);
    let mut sessions = pb::sessions_client::SessionsClient::new(daemon.channel().await);
    let err = sessions
        .interrupt(pb::InterruptSessionRequest { id: "nope".into() })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::NotFound, "{}", err.message());
    let created = sessions
        .create(pb::CreateSessionRequest::default())
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    let idle = sessions
        .interrupt(pb::InterruptSessionRequest { id: created.id })
        .await
        .unwrap()
        .into_inner();
    assert!(!idle.was_running);
}

#[tokio::test(flavor = "multi_thread")]
async fn drain_deadline_bounds_shutdown_when_a_client_hangs() {
    use std::io::Write;
    let home = TestHome::new();
    let daemon = DaemonProcess::start(&home, &["--set", "daemon.drain_timeout=1"]);
    // An HTTP/2 client that opens a connection and then never reads: it cannot acknowledge
    // the server's GOAWAY ping, so a graceful close would wait forever.
    let mut stuck = std::os::unix::net::UnixStream::connect(home.socket()).unwrap();
    stuck
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .unwrap();
    assert_eq!(daemon.status().await.pid, daemon.pid());
    let exit = daemon.terminate();
    assert!(exit.success(), "{exit:?}");
    let log = std::fs::read_to_string(home.path().join("logs/hermesd.log")).unwrap();
    assert!(log.contains("drain deadline passed"), "{log}");
    drop(stuck);
}
