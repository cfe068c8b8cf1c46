//! Transport only: the listener, the pidfile lock, the gRPC services, signals and graceful shutdown.

mod attach;
mod auth_service;
mod convert;
mod cron_service;
mod daemon_service;
mod gateway_service;
pub mod listener;
mod mcp_service;
mod memory_service;
mod models_service;
pub mod peer;
pub mod pidfile;
mod session_ops;
mod sessions_service;
mod signals;
mod skills_service;

use std::{sync::Arc, time::Duration};

use hermes_proto::{FILE_DESCRIPTOR_SET, pb};
use tokio::net::UnixListener;
use tokio_stream::Stream;
use tonic::transport::Server;

use crate::state::DaemonState;
pub use listener::Listener;
pub use signals::spawn as spawn_signal_handler;

/// The first pause after a failed accept; it doubles up to [`ACCEPT_BACKOFF_MAX`] while accepts
/// keep failing (EMFILE: out of descriptors), so the loop waits for descriptors instead of
/// spinning on the error.
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(5);
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Connections from `listener`; a failed accept is logged and retried after a backoff.
fn accept_with_backoff(
    listener: UnixListener,
) -> impl Stream<Item = Result<peer::PeerStream, std::io::Error>> {
    futures_util::stream::unfold(
        (listener, ACCEPT_BACKOFF_MIN),
        |(listener, mut pause)| async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        let stream = peer::PeerStream::accept(stream);
                        return Some((Ok(stream), (listener, ACCEPT_BACKOFF_MIN)));
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, pause_ms = pause.as_millis() as u64, "accept failed; retrying");
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(ACCEPT_BACKOFF_MAX);
                    }
                }
            }
        },
    )
}

/// How long a stopping daemon waits for interrupted turns, reviews and cron runs to store how
/// they ended (an interrupted turn stores its event at once; this bounds a stuck store).
const STOP_TURNS_WITHIN: Duration = Duration::from_secs(3);

/// Why serving stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot build the reflection service: {0}")]
    Reflection(String),
    #[error("gRPC server failed: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// Serve the API on `listener` until `state.shutdown` is cancelled, then give running calls up to
/// the drain deadline (`daemon.drain_timeout`) before returning.
pub async fn serve(state: Arc<DaemonState>, listener: Listener) -> Result<(), ServeError> {
    let (health_reporter, health) = tonic_health::server::health_reporter();
    for name in hermes_proto::SERVICE_NAMES {
        health_reporter
            .set_service_status(*name, tonic_health::ServingStatus::Serving)
            .await;
    }
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| ServeError::Reflection(e.to_string()))?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .map_err(|e| ServeError::Reflection(e.to_string()))?;

    let peer = peer::PeerCheck::for_current_user();
    let incoming = accept_with_backoff(listener.listener);
    let router = Server::builder()
        .layer(peer::PeerGateLayer(peer))
        .add_service(health)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(pb::daemon_server::DaemonServer::new(
            daemon_service::DaemonService {
                state: Arc::clone(&state),
            },
        ))
        .add_service(pb::sessions_server::SessionsServer::new(
            sessions_service::SessionsService {
                state: Arc::clone(&state),
            },
        ))
        .add_service(pb::cron_server::CronServer::new(
            cron_service::CronService {
                state: Arc::clone(&state),
            },
        ))
        .add_service(pb::memory_server::MemoryServer::new(
            memory_service::MemoryService {
                state: Arc::clone(&state),
            },
        ))
        .add_service(pb::skills_server::SkillsServer::new(
            skills_service::SkillsService {
                state: Arc::clone(&state),
            },
        ))
        .add_service(pb::gateway_server::GatewayServer::new(
            gateway_service::GatewayService {
                state: Arc::clone(&state),
            },
        ))
        .add_service(pb::models_server::ModelsServer::new(
            models_service::ModelsService {
                state: Arc::clone(&state),
            },
        ))
        .add_service(pb::mcp_server::McpServer::new(mcp_service::McpService {
            state: Arc::clone(&state),
        }))
        .add_service(pb::auth_server::AuthServer::new(
            auth_service::AuthService {
                state: Arc::clone(&state),
            },
        ));

    let stop = state.shutdown.clone();
    let server =
        tokio::spawn(router.serve_with_incoming_shutdown(incoming, stop.cancelled_owned()));
    state.shutdown.cancelled().await;
    let _ = sd_notify::notify(false, &[sd_notify::NotifyState::Stopping]);
    // Turns, reviews and cron runs first: interrupted, they store how they ended, and the calls
    // waiting on them (Send, RunNow) can answer before the drain.
    let still_running = state.runner.hub.stop(STOP_TURNS_WITHIN).await;
    if still_running > 0 {
        tracing::warn!(
            still_running,
            "stopping: tasks did not end in time; cutting them off"
        );
    }
    let drain = Duration::from_secs(state.config().daemon.drain_timeout);
    tracing::info!(
        drain_s = drain.as_secs(),
        "stopping: draining running calls"
    );
    let outcome = tokio::time::timeout(drain, server).await;
    if let Some(bound) = &listener.bound {
        bound.remove();
    }
    match outcome {
        Ok(Ok(result)) => result.map_err(ServeError::from),
        Ok(Err(join)) => {
            tracing::error!(error = %join, "server task ended abnormally");
            Ok(())
        }
        Err(_) => {
            tracing::warn!("drain deadline passed; cutting the remaining connections");
            Ok(())
        }
    }
}
