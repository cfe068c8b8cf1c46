//! The `Auth` service: every provider's credential pool with each credential's health, and adding
//! or removing a credential (hermesd's own store; Hermes' `auth.json` is never written). No reply
//! carries a secret.

use std::{sync::Arc, time::SystemTime};

use hermes_proto::pb;
use tonic::{Request, Response, Status};

use crate::{
    auth::{CredentialView, Origin, pool_key},
    state::DaemonState,
};

#[derive(Debug)]
pub struct AuthService {
    pub state: Arc<DaemonState>,
}

fn to_pb(view: &CredentialView) -> pb::Credential {
    let now = SystemTime::now();
    let (status, code, reason, left) = match &view.parked {
        _ if !view.has_secret => ("no_secret", 0, String::new(), 0),
        None => ("ok", 0, String::new(), 0),
        Some(parked) => {
            let reason = if parked.message.is_empty() {
                parked.kind().to_string()
            } else {
                format!("{}: {}", parked.kind(), parked.message)
            };
            let left = parked.left(now).map_or(0, |d| d.as_secs().max(1));
            let status = if parked.until.is_none() {
                "dead"
            } else {
                "parked"
            };
            (status, parked.code.unwrap_or(0).into(), reason, left)
        }
    };
    pb::Credential {
        pool: view.pool.clone(),
        position: view.position as u32,
        id: view.id.clone(),
        label: view.label.clone(),
        auth_type: view.auth_type.as_str().into(),
        source: view.source.clone(),
        origin: match view.origin {
            Origin::HermesFile => "auth.json",
            Origin::Own => "hermesd",
            Origin::Environment => "environment",
        }
        .into(),
        status: status.into(),
        status_code: code,
        reason,
        seconds_left: left,
        uses: view.uses,
        strategy: view.strategy.as_str().into(),
    }
}

impl AuthService {
    /// Run `work` on the credentials off the async threads (it may write the store).
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&crate::auth::Credentials) -> Result<T, String> + Send + 'static,
    ) -> Result<T, Status> {
        let credentials = Arc::clone(&self.state.runner.credentials);
        tokio::task::spawn_blocking(move || work(&credentials))
            .await
            .map_err(|e| Status::internal(format!("the credential store task failed: {e}")))?
            .map_err(Status::invalid_argument)
    }
}

#[tonic::async_trait]
impl pb::auth_server::Auth for AuthService {
    async fn list(
        &self,
        request: Request<pb::ListCredentialsRequest>,
    ) -> Result<Response<pb::ListCredentialsResponse>, Status> {
        let wanted = request.into_inner().provider;
        let wanted = (!wanted.trim().is_empty()).then(|| pool_key(&wanted));
        let (views, problems) = self.state.runner.credentials.list();
        let credentials = views
            .iter()
            .filter(|v| wanted.as_ref().is_none_or(|w| *w == v.pool))
            .map(to_pb)
            .collect();
        Ok(Response::new(pb::ListCredentialsResponse {
            credentials,
            problems,
        }))
    }

    async fn add(
        &self,
        request: Request<pb::AddCredentialRequest>,
    ) -> Result<Response<pb::AddCredentialResponse>, Status> {
        let r = request.into_inner();
        let view = self
            .blocking(move |credentials| {
                let key = (!r.api_key.trim().is_empty()).then_some(r.api_key.as_str());
                let var = (!r.key_env.trim().is_empty()).then_some(r.key_env.as_str());
                credentials.add(&r.provider, &r.label, key, var)
            })
            .await?;
        tracing::info!(pool = %view.pool, label = %view.label, "credential added");
        Ok(Response::new(pb::AddCredentialResponse {
            credential: Some(to_pb(&view)),
        }))
    }

    async fn remove(
        &self,
        request: Request<pb::RemoveCredentialRequest>,
    ) -> Result<Response<pb::RemoveCredentialResponse>, Status> {
        let r = request.into_inner();
        let view = self
            .blocking(move |credentials| credentials.remove(&r.provider, &r.target))
            .await?;
        tracing::info!(pool = %view.pool, label = %view.label, "credential removed");
        Ok(Response::new(pb::RemoveCredentialResponse {
            credential: Some(to_pb(&view)),
        }))
    }
}
