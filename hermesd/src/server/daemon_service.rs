//! The `Daemon` service: status, shutdown, reload, doctor.

use std::{os::unix::fs::PermissionsExt, pin::Pin, sync::Arc};

use hermes_proto::{PROTOCOL_VERSION, VERSION, pb};
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use super::convert::{not_built, timestamp};
use crate::state::DaemonState;

#[derive(Debug)]
pub struct DaemonService {
    pub state: Arc<DaemonState>,
}

type LogStream = Pin<Box<dyn Stream<Item = Result<pb::LogLine, Status>> + Send>>;

#[tonic::async_trait]
impl pb::daemon_server::Daemon for DaemonService {
    async fn get_status(
        &self,
        request: Request<pb::GetStatusRequest>,
    ) -> Result<Response<pb::GetStatusResponse>, Status> {
        let state = &self.state;
        let agent = request
            .extensions()
            .get::<super::peer::PeerInfo>()
            .is_some_and(|p| p.agent);
        let started_ms = state
            .started_at
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        Ok(Response::new(pb::GetStatusResponse {
            version: VERSION.into(),
            protocol_version: PROTOCOL_VERSION,
            pid: std::process::id(),
            uptime_s: state.started.elapsed().as_secs(),
            home: state.home.dir.display().to_string(),
            socket: state.socket.display().to_string(),
            live_sessions: self.state.runner.hub.len() as u32,
            model: state.config().model.display(),
            db_bytes: state.store.size_bytes(),
            profile: state.home.profile.clone().unwrap_or_default(),
            started_at: Some(timestamp(started_ms)),
            mcp_servers: super::mcp_service::servers(state),
            confinement: Some(confinement()),
            caller: if agent { "agent" } else { "owner" }.into(),
        }))
    }

    async fn shutdown(
        &self,
        _request: Request<pb::ShutdownRequest>,
    ) -> Result<Response<pb::ShutdownResponse>, Status> {
        tracing::info!("shutdown requested by a client");
        self.state.shutdown.cancel();
        Ok(Response::new(pb::ShutdownResponse {
            pid: std::process::id(),
        }))
    }

    async fn reload_config(
        &self,
        _request: Request<pb::ReloadConfigRequest>,
    ) -> Result<Response<pb::ReloadConfigResponse>, Status> {
        let notices = reload(&self.state).await?;
        Ok(Response::new(pb::ReloadConfigResponse { notices }))
    }

    async fn doctor(
        &self,
        _request: Request<pb::DoctorRequest>,
    ) -> Result<Response<pb::DoctorResponse>, Status> {
        let mut checks = vec![
            home_check(&self.state),
            model_check(&self.state),
            confinement_check(),
        ];
        let integrity = self
            .state
            .store
            .read(|conn| {
                conn.query_row("PRAGMA quick_check", [], |row| row.get::<_, String>(0))
                    .map_err(crate::store::StoreError::sql("quick_check"))
            })
            .await;
        checks.push(match integrity {
            Ok(result) if result == "ok" => check("database", true, "quick_check ok", ""),
            Ok(result) => check(
                "database",
                false,
                &result,
                "stop hermesd and restore hermesd.db from a backup",
            ),
            Err(e) => check("database", false, &e.to_string(), ""),
        });
        Ok(Response::new(pb::DoctorResponse { checks }))
    }

    type TailLogsStream = LogStream;

    async fn tail_logs(
        &self,
        _request: Request<pb::TailLogsRequest>,
    ) -> Result<Response<Self::TailLogsStream>, Status> {
        Err(not_built(
            "Daemon.TailLogs",
            "log streaming over the socket is not built yet; read $HERMES_HOME/logs/hermesd.log",
        ))
    }
}

fn check(name: &str, ok: bool, detail: &str, hint: &str) -> pb::DoctorCheck {
    pb::DoctorCheck {
        name: name.into(),
        ok,
        detail: detail.into(),
        hint: hint.into(),
    }
}

/// What the kernel enforces on the agent's processes: ok only with the whole boundary (a mount
/// namespace, Landlock and the mark); the covers are listed in the detail.
fn confinement_check() -> pb::DoctorCheck {
    let Some(confinement) = crate::confine::current() else {
        return check("confinement", false, "not probed", "");
    };
    let status = confinement.status();
    let whole = status.mode == crate::confine::Mode::Full && status.marked;
    let mut detail = format!("{}: {}", status.mode.as_str(), status.detail);
    if whole {
        detail.push_str(&format!("; covers: {}", confinement.covers().join(", ")));
    }
    check(
        "confinement",
        whole,
        &detail,
        if whole {
            ""
        } else {
            "see docs/security.md, \"Kernels that offer less\": allow unprivileged user namespaces (kernel.unprivileged_userns_clone=1, or an AppArmor profile for hermesd on Ubuntu) and boot with landlock in lsm="
        },
    )
}

fn home_check(state: &DaemonState) -> pb::DoctorCheck {
    let dir = &state.home.dir;
    match std::fs::metadata(dir) {
        Ok(meta) if meta.permissions().mode() & 0o077 == 0 => {
            check("home", true, &dir.display().to_string(), "")
        }
        Ok(meta) => check(
            "home",
            false,
            &format!(
                "{} has mode {:o}",
                dir.display(),
                meta.permissions().mode() & 0o777
            ),
            &format!("chmod 700 {}", dir.display()),
        ),
        Err(e) => check("home", false, &format!("{}: {e}", dir.display()), ""),
    }
}

fn model_check(state: &DaemonState) -> pb::DoctorCheck {
    let model = state.config().model.display();
    if model.is_empty() {
        check(
            "model",
            false,
            "no model configured",
            "set model.default and model.provider in config.yaml",
        )
    } else {
        check("model", true, &model, "")
    }
}

/// Read `.env` and `config.yaml` again (on the blocking pool): the new configuration's notices,
/// or why the running one stays.
pub(super) async fn reload(state: &Arc<DaemonState>) -> Result<Vec<String>, Status> {
    let state = Arc::clone(state);
    tokio::task::spawn_blocking(move || state.reload())
        .await
        .map_err(|e| Status::internal(format!("reload task failed: {e}")))?
        .map_err(|e| {
            tracing::warn!(error = %e, "reload refused; keeping the running configuration");
            Status::invalid_argument(format!(
                "configuration not reloaded (the running one stays): {e}"
            ))
        })
}

/// The confinement in force, for the wire.
fn confinement() -> pb::Confinement {
    match crate::confine::current() {
        Some(c) => {
            let status = c.status();
            pb::Confinement {
                mode: status.mode.as_str().into(),
                landlock_abi: status.landlock_abi,
                marked: status.marked,
                detail: status.detail,
            }
        }
        None => pb::Confinement {
            mode: crate::confine::Mode::None.as_str().into(),
            landlock_abi: 0,
            marked: false,
            detail: "not probed".into(),
        },
    }
}
