//! The `Memory` service: the built-in stores through the same code as the `memory` tool (limits,
//! the injection scan, the file lock), for `hermesctl memory` and any other client.

use std::sync::Arc;

use hermes_proto::pb;
use tonic::{Request, Response, Status};

use crate::{
    memory::{MemoryError, MemorySettings, MemoryStore, Target},
    state::DaemonState,
};

#[derive(Debug)]
pub struct MemoryService {
    pub state: Arc<DaemonState>,
}

fn target(value: i32) -> Result<Target, Status> {
    match pb::MemoryTarget::try_from(value) {
        Ok(pb::MemoryTarget::Memory) => Ok(Target::Memory),
        Ok(pb::MemoryTarget::User) => Ok(Target::User),
        _ => Err(Status::invalid_argument(
            "target must be memory (MEMORY.md) or user (USER.md)",
        )),
    }
}

fn status(e: MemoryError) -> Status {
    match e {
        MemoryError::Io { .. } => Status::internal(e.to_string()),
        MemoryError::NoMatch { .. } => Status::not_found(e.to_string()),
        _ => Status::invalid_argument(e.to_string()),
    }
}

impl MemoryService {
    fn settings(&self) -> MemorySettings {
        MemorySettings::new(&self.state.config().settings.memory)
    }

    /// Run `f` on the store on the blocking pool, then describe `target` as it is now.
    async fn with_store<T: Send + 'static>(
        &self,
        target: Target,
        f: impl FnOnce(&MemoryStore) -> Result<T, MemoryError> + Send + 'static,
    ) -> Result<pb::MemoryStore, Status> {
        let store = self.settings().store(&self.state.home.dir);
        tokio::task::spawn_blocking(move || {
            f(&store).map_err(status)?;
            describe(&store, target)
        })
        .await
        .map_err(|e| Status::internal(format!("the memory store stopped: {e}")))?
    }
}

fn describe(store: &MemoryStore, target: Target) -> Result<pb::MemoryStore, Status> {
    let path = store.path_for(target);
    let entries = store
        .read(target)
        .map_err(|e| Status::internal(format!("read {}: {e}", path.display())))?;
    let chars = crate::memory::entries::joined_chars(&entries);
    Ok(pb::MemoryStore {
        target: match target {
            Target::Memory => pb::MemoryTarget::Memory as i32,
            Target::User => pb::MemoryTarget::User as i32,
        },
        entries,
        chars: chars as u32,
        limit: store.limits().for_target(target) as u32,
        path: path.display().to_string(),
    })
}

#[tonic::async_trait]
impl pb::memory_server::Memory for MemoryService {
    async fn get(
        &self,
        request: Request<pb::GetMemoryRequest>,
    ) -> Result<Response<pb::GetMemoryResponse>, Status> {
        let wanted = request.into_inner().target;
        let targets = if wanted == pb::MemoryTarget::Unspecified as i32 {
            vec![Target::Memory, Target::User]
        } else {
            vec![target(wanted)?]
        };
        let store = self.settings().store(&self.state.home.dir);
        let stores = tokio::task::spawn_blocking(move || {
            targets
                .into_iter()
                .map(|t| describe(&store, t))
                .collect::<Result<Vec<_>, _>>()
        })
        .await
        .map_err(|e| Status::internal(format!("the memory store stopped: {e}")))??;
        Ok(Response::new(pb::GetMemoryResponse { stores }))
    }

    async fn add(
        &self,
        request: Request<pb::AddMemoryRequest>,
    ) -> Result<Response<pb::AddMemoryResponse>, Status> {
        let request = request.into_inner();
        let target = target(request.target)?;
        let store = self
            .with_store(target, move |s| s.add(target, &request.content))
            .await?;
        Ok(Response::new(pb::AddMemoryResponse { store: Some(store) }))
    }

    async fn replace(
        &self,
        request: Request<pb::ReplaceMemoryRequest>,
    ) -> Result<Response<pb::ReplaceMemoryResponse>, Status> {
        let request = request.into_inner();
        let target = target(request.target)?;
        let store = self
            .with_store(target, move |s| {
                s.replace(target, &request.old_text, &request.content)
            })
            .await?;
        Ok(Response::new(pb::ReplaceMemoryResponse {
            store: Some(store),
        }))
    }

    async fn remove(
        &self,
        request: Request<pb::RemoveMemoryRequest>,
    ) -> Result<Response<pb::RemoveMemoryResponse>, Status> {
        let request = request.into_inner();
        let target = target(request.target)?;
        let store = self
            .with_store(target, move |s| s.remove(target, &request.old_text))
            .await?;
        Ok(Response::new(pb::RemoveMemoryResponse {
            store: Some(store),
        }))
    }

    async fn set(
        &self,
        request: Request<pb::SetMemoryRequest>,
    ) -> Result<Response<pb::SetMemoryResponse>, Status> {
        let request = request.into_inner();
        let target = target(request.target)?;
        let store = self
            .with_store(target, move |s| s.set_all(target, &request.entries))
            .await?;
        Ok(Response::new(pb::SetMemoryResponse { store: Some(store) }))
    }
}
