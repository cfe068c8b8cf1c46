//! Clients hermesd does not control: a Python grpcio script using reflection, a process of another
//! user, and a daemon that speaks another protocol version.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::{os::unix::process::CommandExt, path::Path, process::Stdio};

use hermes_proto::pb;
use hermes_tests::{DaemonProcess, TestHome, daemon::connect};

#[tokio::test(flavor = "multi_thread")]
async fn python_grpcio_lists_services_by_reflection_and_calls_the_api() {
    let home = TestHome::new();
    let daemon = DaemonProcess::start(&home, &[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("py/reflect.py");
    let output = hermes_tests::python()
        .arg(script)
        .arg(home.socket())
        .output()
        .unwrap_or_else(|e| panic!("cannot run Python ({e}): {}", hermes_tests::PYTHON_HINT));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "python client failed ({}):\n{stderr}",
        hermes_tests::PYTHON_HINT
    );
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    for listing in ["v1alpha", "v1"] {
        let services: Vec<&str> = doc[listing]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        for name in hermes_proto::SERVICE_NAMES {
            assert!(
                services.contains(name),
                "{listing} lacks {name}: {services:?}"
            );
        }
        assert!(services.contains(&"grpc.health.v1.Health"), "{services:?}");
    }
    assert_eq!(doc["status"]["pid"], daemon.pid());
    assert_eq!(
        doc["status"]["protocol_version"],
        hermes_proto::PROTOCOL_VERSION
    );
    assert_eq!(doc["health"], "SERVING");
    let methods = doc["daemon_methods"].as_array().unwrap();
    assert_eq!(methods.len(), 5, "{methods:?}");
}

/// The daemon runs as an unprivileged user; root (this test) connects and must be refused.
/// Where the suite does not run as root it cannot switch users, so it checks the same rule
/// through the library (the unit tests in hermesd cover `PeerCheck` directly as well).
#[tokio::test(flavor = "multi_thread")]
async fn another_uid_is_refused() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("not root: checking that our own uid is accepted; the refusal is unit-tested");
        let home = TestHome::new();
        let daemon = DaemonProcess::start(&home, &[]);
        assert_eq!(daemon.status().await.pid, daemon.pid());
        return;
    }
    const NOBODY: u32 = 65534;
    let home = TestHome::new();
    let owner = Some(nix::unistd::Uid::from_raw(NOBODY));
    let group = Some(nix::unistd::Gid::from_raw(NOBODY));
    nix::unistd::chown(home.path(), owner, group).unwrap();
    // The build tree may sit where `nobody` cannot enter (/root): run a copy from the home.
    let program = home.path().join("hermesd-copy");
    std::fs::copy(hermes_tests::binary("hermesd"), &program).unwrap();
    let daemon = DaemonProcess::start_program(&home, &program, &[], |command| {
        command.uid(NOBODY).gid(NOBODY).env("HOME", home.path());
    });
    let err = pb::daemon_client::DaemonClient::new(connect(&home.socket()).await)
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::PermissionDenied, "{err:?}");
    assert_eq!(
        err.message(),
        format!("hermesd serves uid {NOBODY} only; uid 0 is refused")
    );
    // Reflection and health are behind the same check.
    let output = hermes_tests::python()
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("py/reflect.py"))
        .arg(home.socket())
        .stdout(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run Python ({e}): {}", hermes_tests::PYTHON_HINT));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    // A client without grpcio fails too, but not for the reason under test.
    assert!(
        stderr.contains("PERMISSION_DENIED"),
        "expected PERMISSION_DENIED ({}):\n{stderr}",
        hermes_tests::PYTHON_HINT
    );
    drop(daemon);
}

mod fake {
    //! A daemon that answers GetStatus with another protocol version.
    use std::pin::Pin;

    use hermes_proto::pb;
    use tokio_stream::Stream;
    use tonic::{Request, Response, Status};

    pub struct OtherProtocol;

    #[tonic::async_trait]
    impl pb::daemon_server::Daemon for OtherProtocol {
        async fn get_status(
            &self,
            _: Request<pb::GetStatusRequest>,
        ) -> Result<Response<pb::GetStatusResponse>, Status> {
            Ok(Response::new(pb::GetStatusResponse {
                version: "9.9.9".into(),
                protocol_version: hermes_proto::PROTOCOL_VERSION + 1,
                pid: 4242,
                ..Default::default()
            }))
        }
        async fn shutdown(
            &self,
            _: Request<pb::ShutdownRequest>,
        ) -> Result<Response<pb::ShutdownResponse>, Status> {
            Err(Status::unimplemented("fake"))
        }
        async fn reload_config(
            &self,
            _: Request<pb::ReloadConfigRequest>,
        ) -> Result<Response<pb::ReloadConfigResponse>, Status> {
            Err(Status::unimplemented("fake"))
        }
        async fn doctor(
            &self,
            _: Request<pb::DoctorRequest>,
        ) -> Result<Response<pb::DoctorResponse>, Status> {
            Err(Status::unimplemented("fake"))
        }
        type TailLogsStream = Pin<Box<dyn Stream<Item = Result<pb::LogLine, Status>> + Send>>;
        async fn tail_logs(
            &self,
            _: Request<pb::TailLogsRequest>,
        ) -> Result<Response<Self::TailLogsStream>, Status> {
            Err(Status::unimplemented("fake"))
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_daemon_of_another_protocol_is_named_with_the_fix() {
    let home = TestHome::new();
    let socket = home.path().join("other.sock");
    let listener = tokio::net::UnixListener::bind(&socket).unwrap();
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(pb::daemon_server::DaemonServer::new(fake::OtherProtocol))
            .serve_with_incoming(tokio_stream::wrappers::UnixListenerStream::new(listener)),
    );
    let socket_arg = socket.display().to_string();
    let ctl_home = TestHome::new();
    let output = tokio::task::spawn_blocking(move || {
        ctl_home
            .ctl(&["--socket", &socket_arg, "sessions", "list"])
            .err()
    })
    .await
    .unwrap();
    let p = hermes_proto::PROTOCOL_VERSION;
    assert_eq!(
        output.trim(),
        format!(
            "hermesctl: daemon speaks protocol {}, this client speaks {p}: run `hermesctl daemon restart`",
            p + 1
        )
    );
    server.abort();
}
