//! The peer check: only processes running as the daemon's own uid may call it (SO_PEERCRED).

use tonic::{Request, Status, transport::server::UdsConnectInfo};

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

    /// Decide whether a peer uid may call.
    pub fn allows(&self, peer_uid: Option<u32>) -> Result<(), Status> {
        match peer_uid {
            Some(uid) if uid == self.owner_uid => Ok(()),
            Some(uid) => {
                tracing::warn!(peer_uid = uid, "refused a client of another user");
                Err(Status::permission_denied(format!(
                    "hermesd serves uid {} only; uid {uid} is refused",
                    self.owner_uid
                )))
            }
            None => Err(Status::permission_denied(
                "hermesd could not identify the calling process (no peer credentials)",
            )),
        }
    }

    /// The tonic interceptor form of [`PeerCheck::allows`].
    pub fn intercept(&self, request: Request<()>) -> Result<Request<()>, Status> {
        let uid = request
            .extensions()
            .get::<UdsConnectInfo>()
            .and_then(|info| info.peer_cred)
            .map(|cred| cred.uid());
        self.allows(uid).map(|()| request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_owner_passes() {
        let check = PeerCheck { owner_uid: 1000 };
        assert!(check.allows(Some(1000)).is_ok());
        let refused = check.allows(Some(1001)).unwrap_err();
        assert_eq!(refused.code(), tonic::Code::PermissionDenied);
        assert!(refused.message().contains("uid 1001 is refused"));
        assert!(check.allows(None).is_err());
        assert!(
            check.intercept(Request::new(())).is_err(),
            "no connect info means no entry"
        );
    }
}
