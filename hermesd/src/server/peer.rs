//! Who is calling, decided once per connection when it is accepted, and the gate every request
//! passes: only the daemon's own uid may call (SO_PEERCRED), and a process the daemon started
//! for the agent — it carries the agent's seccomp mark (`confine::Confinement::is_agent`), which
//! no `setsid`, double fork or `exec` sheds — may only read the daemon's status and health.
//! Config, approvals, pairing, MCP servers, skills, cron, models, sessions and whatever is added
//! later are the owner's alone: the gate lists what the agent may call, not what it may not.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::future::{Either, Ready, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tonic::{Status, transport::server::Connected};

/// The gRPC paths a process of the agent's may call: reading status and health, nothing else
/// (a path ending in `/` names a whole read-only service, any other one method).
const AGENT_MAY_CALL: &[&str] = &[
    "/grpc.health.v1.Health/",
    "/grpc.reflection.v1.ServerReflection/",
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/hermes.v1.Daemon/GetStatus",
];

/// The caller of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerInfo {
    pub uid: Option<u32>,
    pub pid: Option<i32>,
    /// A process of the agent's (or its descendant): the restricted principal.
    pub agent: bool,
}

impl PeerInfo {
    /// Read the caller of `stream` from the kernel, now (at accept: the pid is the connecting
    /// process's, before it could exit and its number be reused).
    pub fn of(stream: &UnixStream) -> Self {
        let cred = stream.peer_cred().ok();
        let pid = cred.and_then(|c| c.pid());
        let agent = crate::confine::current().is_some_and(|c| pid.is_none_or(|p| c.is_agent(p)));
        if agent {
            tracing::info!(
                pid,
                "a process of the agent's connected to the control socket; it may read status only"
            );
        }
        Self {
            uid: cred.map(|c| c.uid()),
            pid,
            agent,
        }
    }
}

/// An accepted connection with its caller.
#[derive(Debug)]
pub struct PeerStream {
    stream: UnixStream,
    info: PeerInfo,
}

impl PeerStream {
    pub fn accept(stream: UnixStream) -> Self {
        let info = PeerInfo::of(&stream);
        Self { stream, info }
    }
}

impl Connected for PeerStream {
    type ConnectInfo = PeerInfo;

    fn connect_info(&self) -> PeerInfo {
        self.info
    }
}

impl AsyncRead for PeerStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for PeerStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// The uid allowed to call, and the check applied to every request.
#[derive(Debug, Clone, Copy)]
pub struct PeerCheck {
    pub owner_uid: u32,
}

impl PeerCheck {
    pub fn for_current_user() -> Self {
        Self {
            owner_uid: nix::unistd::geteuid().as_raw(),
        }
    }

    /// Decide whether `peer` may call `path` (`/package.Service/Method`).
    pub fn allows(&self, peer: Option<&PeerInfo>, path: &str) -> Result<(), Status> {
        let Some(peer) = peer else {
            return Err(Status::permission_denied(
                "hermesd could not identify the calling process (no peer credentials)",
            ));
        };
        match peer.uid {
            Some(uid) if uid == self.owner_uid => {}
            Some(uid) => {
                tracing::warn!(peer_uid = uid, "refused a client of another user");
                return Err(Status::permission_denied(format!(
                    "hermesd serves uid {} only; uid {uid} is refused",
                    self.owner_uid
                )));
            }
            None => {
                return Err(Status::permission_denied(
                    "hermesd could not identify the calling process (no peer credentials)",
                ));
            }
        }
        let listed = |p: &&str| {
            if p.ends_with('/') {
                path.starts_with(p)
            } else {
                path == *p
            }
        };
        if peer.agent && !AGENT_MAY_CALL.iter().any(listed) {
            tracing::warn!(
                pid = peer.pid,
                path,
                "refused the agent's process a call of the control plane"
            );
            return Err(Status::permission_denied(format!(
                "{path} is the owner's: this connection comes from a process hermesd started for \
                 the agent (it carries the agent's seccomp mark), which may only read the status"
            )));
        }
        Ok(())
    }
}

/// The tower layer of [`PeerCheck`]: every request of every service passes it.
#[derive(Debug, Clone, Copy)]
pub struct PeerGateLayer(pub PeerCheck);

impl<S> tower::Layer<S> for PeerGateLayer {
    type Service = PeerGate<S>;

    fn layer(&self, inner: S) -> PeerGate<S> {
        PeerGate {
            check: self.0,
            inner,
        }
    }
}

/// A service behind [`PeerGateLayer`].
#[derive(Debug, Clone)]
pub struct PeerGate<S> {
    check: PeerCheck,
    inner: S,
}

impl<S, B, RB> tower::Service<http::Request<B>> for PeerGate<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<RB>>,
    RB: Default,
{
    type Response = http::Response<RB>;
    type Error = S::Error;
    type Future = Either<Ready<Result<Self::Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let peer = request.extensions().get::<PeerInfo>();
        match self.check.allows(peer, request.uri().path()) {
            Ok(()) => Either::Right(self.inner.call(request)),
            Err(status) => Either::Left(ready(Ok(status.into_http()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(uid: u32, agent: bool) -> PeerInfo {
        PeerInfo {
            uid: Some(uid),
            pid: Some(42),
            agent,
        }
    }

    #[test]
    fn only_the_owner_passes() {
        let check = PeerCheck { owner_uid: 1000 };
        let status = "/hermes.v1.Daemon/GetStatus";
        assert!(check.allows(Some(&peer(1000, false)), status).is_ok());
        let refused = check.allows(Some(&peer(1001, false)), status).unwrap_err();
        assert_eq!(refused.code(), tonic::Code::PermissionDenied);
        assert!(refused.message().contains("uid 1001 is refused"));
        assert!(
            check.allows(None, status).is_err(),
            "no connect info means no entry"
        );
    }

    #[test]
    fn the_agent_reads_status_and_nothing_else() {
        let check = PeerCheck { owner_uid: 1000 };
        let agent = peer(1000, true);
        for path in [
            "/hermes.v1.Daemon/GetStatus",
            "/grpc.health.v1.Health/Check",
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        ] {
            assert!(check.allows(Some(&agent), path).is_ok(), "{path}");
        }
        for path in [
            "/hermes.v1.Daemon/ReloadConfig",
            "/hermes.v1.Daemon/Shutdown",
            "/hermes.v1.Daemon/GetStatusEvil",
            "/hermes.v1.Gateway/ApprovePairing",
            "/hermes.v1.Cron/Add",
            "/hermes.v1.Skills/Trust",
            "/hermes.v1.Mcp/Reload",
            "/hermes.v1.Sessions/Send",
            "/hermes.v1.Sessions/Attach",
            "/hermes.v1.Models/SetDefault",
            "/hermes.v1.Future/Anything",
        ] {
            let refused = check.allows(Some(&agent), path).unwrap_err();
            assert_eq!(refused.code(), tonic::Code::PermissionDenied, "{path}");
        }
    }
}
