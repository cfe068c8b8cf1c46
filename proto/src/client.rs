//! Connecting to hermesd over its Unix socket, with errors a user can act on.

use std::{
    io,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint};

use crate::{PROTOCOL_VERSION, pb};

/// Why the daemon could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// Nothing listens on the socket (no file, or connection refused).
    #[error("hermesd is not running (no daemon at {0})")]
    NotRunning(PathBuf),
    #[error("cannot connect to {path}: permission denied (the socket belongs to another user)")]
    PermissionDenied { path: PathBuf },
    #[error("cannot connect to {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("cannot open a gRPC channel on {path}: {source}")]
    Transport {
        path: PathBuf,
        source: tonic::transport::Error,
    },
}

impl ConnectError {
    /// True when starting a daemon could fix it.
    pub fn is_not_running(&self) -> bool {
        matches!(self, Self::NotRunning(_))
    }
}

/// Open a channel to the daemon at `socket`. The authority sent is `localhost`.
pub async fn connect(socket: &Path) -> Result<Channel, ConnectError> {
    let first = UnixStream::connect(socket)
        .await
        .map_err(|e| classify(socket, e))?;
    // Hand the stream we already hold to the first connection; reconnects dial again.
    let first = Arc::new(Mutex::new(Some(first)));
    let path = socket.to_path_buf();
    let endpoint = Endpoint::from_static("http://localhost");
    endpoint
        .connect_with_connector(tower::service_fn(move |_| {
            let first = first.lock().ok().and_then(|mut slot| slot.take());
            let path = path.clone();
            async move {
                let stream = match first {
                    Some(stream) => stream,
                    None => UnixStream::connect(&path).await?,
                };
                Ok::<_, io::Error>(TokioIo::new(stream))
            }
        }))
        .await
        .map_err(|source| ConnectError::Transport {
            path: socket.to_path_buf(),
            source,
        })
}

/// Classify an error from connecting to the socket.
pub fn classify(socket: &Path, e: io::Error) -> ConnectError {
    match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => {
            ConnectError::NotRunning(socket.to_path_buf())
        }
        io::ErrorKind::PermissionDenied => ConnectError::PermissionDenied {
            path: socket.to_path_buf(),
        },
        _ => ConnectError::Io {
            path: socket.to_path_buf(),
            source: e,
        },
    }
}

/// The one-line message for a daemon that speaks another protocol, or `None` when they match.
pub fn protocol_mismatch(status: &pb::GetStatusResponse) -> Option<String> {
    (status.protocol_version != PROTOCOL_VERSION).then(|| {
        format!(
            "daemon speaks protocol {}, this client speaks {}: run `hermesctl daemon restart`",
            status.protocol_version, PROTOCOL_VERSION
        )
    })
}

/// A one-line description of an RPC error, without gRPC jargon where it can be avoided.
pub fn describe_status(status: &tonic::Status) -> String {
    use tonic::Code;
    let message = status.message();
    match status.code() {
        Code::Unavailable => format!("hermesd is unavailable: {message}"),
        Code::PermissionDenied
        | Code::NotFound
        | Code::InvalidArgument
        | Code::Unimplemented
        | Code::FailedPrecondition
        | Code::AlreadyExists => message.to_string(),
        Code::DeadlineExceeded => format!("hermesd did not answer in time: {message}"),
        code => format!("hermesd: {message} ({code:?})"),
    }
}
