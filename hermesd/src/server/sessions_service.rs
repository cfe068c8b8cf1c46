//! The `Sessions` service: metadata and transcripts from the store; turns arrive with the agent.

use std::sync::Arc;

use hermes_proto::pb;
use tonic::{Request, Response, Status, Streaming};

use super::{convert, session_ops};
use crate::{
    agent::{self, TurnError},
    state::DaemonState,
    store::{self, Lineage, ListFilter, NewSession},
};

const DEFAULT_LIST_LIMIT: u32 = 50;
const MAX_TITLE_CHARS: usize = 200;

#[derive(Debug)]
pub struct SessionsService {
    pub state: Arc<DaemonState>,
}

fn required_id(id: &str) -> Result<String, Status> {
    let id = id.trim();
    if id.is_empty() {
        return Err(Status::invalid_argument("a session id is required"));
    }
    Ok(id.to_string())
}

fn clean_title(title: &str) -> Result<Option<String>, Status> {
    let title = title.trim();
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(Status::invalid_argument(format!(
            "a title is at most {MAX_TITLE_CHARS} characters"
        )));
    }
    Ok(Some(title.to_string()).filter(|t| !t.is_empty()))
}

/// Who interrupted a turn whose conversation was deleted.
const DELETED: &str = "the session was deleted";

impl SessionsService {
    /// A stored session as clients see it: with its live state and attached clients.
    fn view(&self, row: store::SessionRow) -> pb::Session {
        let live = self.state.runner.hub.get(&row.conversation_id);
        let mut session = convert::session(row);
        if let Some(live) = live {
            session.state = live.state() as i32;
            session.clients = live.clients() as u32;
        }
        session
    }
}

#[tonic::async_trait]
impl pb::sessions_server::Sessions for SessionsService {
    async fn create(
        &self,
        request: Request<pb::CreateSessionRequest>,
    ) -> Result<Response<pb::CreateSessionResponse>, Status> {
        let req = request.into_inner();
        let source = Some(req.source.trim().to_lowercase())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "api".into());
        let new = NewSession {
            source,
            title: clean_title(&req.title)?,
            model: req.model,
            cwd: req.cwd,
            parent_session_id: None,
            lineage: Lineage::Root,
        };
        let row = self
            .state
            .store
            .write(move |tx| store::insert_session(tx, &new))
            .await
            .map_err(convert::status)?;
        tracing::info!(session = %row.id, source = %row.source, "session created");
        Ok(Response::new(pb::CreateSessionResponse {
            session: Some(convert::session(row)),
        }))
    }

    async fn list(
        &self,
        request: Request<pb::ListSessionsRequest>,
    ) -> Result<Response<pb::ListSessionsResponse>, Status> {
        let req = request.into_inner();
        let filter = ListFilter {
            limit: if req.limit == 0 {
                DEFAULT_LIST_LIMIT
            } else {
                req.limit
            },
            source: Some(req.source.trim().to_lowercase()).filter(|s| !s.is_empty()),
            all_segments: req.all_segments,
        };
        let rows = self
            .state
            .store
            .read(move |conn| store::list_sessions(conn, &filter))
            .await
            .map_err(convert::status)?;
        Ok(Response::new(pb::ListSessionsResponse {
            sessions: rows.into_iter().map(|row| self.view(row)).collect(),
        }))
    }

    async fn get(
        &self,
        request: Request<pb::GetSessionRequest>,
    ) -> Result<Response<pb::GetSessionResponse>, Status> {
        let req = request.into_inner();
        let id = required_id(&req.id)?;
        let (row, messages) = self
            .state
            .store
            .read(move |conn| {
                let row = store::resolve_reference(conn, &id)?;
                let messages = if req.include_messages {
                    store::list_messages(conn, &row.id, 0, 0)?
                } else {
                    Vec::new()
                };
                Ok((row, messages))
            })
            .await
            .map_err(convert::status)?;
        Ok(Response::new(pb::GetSessionResponse {
            session: Some(self.view(row)),
            messages: messages.into_iter().map(convert::message).collect(),
        }))
    }

    async fn rename(
        &self,
        request: Request<pb::RenameSessionRequest>,
    ) -> Result<Response<pb::RenameSessionResponse>, Status> {
        let req = request.into_inner();
        let id = required_id(&req.id)?;
        let title = clean_title(&req.title)?;
        let row = self
            .state
            .store
            .write(move |tx| store::set_title(tx, &id, title.as_deref()))
            .await
            .map_err(convert::status)?;
        Ok(Response::new(pb::RenameSessionResponse {
            session: Some(self.view(row)),
        }))
    }

    async fn set_busy_policy(
        &self,
        request: Request<pb::SetBusyPolicyRequest>,
    ) -> Result<Response<pb::SetBusyPolicyResponse>, Status> {
        let req = request.into_inner();
        let id = required_id(&req.id)?;
        let policy = convert::busy_override(req.busy_policy).ok_or_else(|| {
            Status::invalid_argument("a busy policy is required: queue, steer or interrupt")
        })?;
        let row = self
            .state
            .store
            .write(move |tx| store::set_busy_policy(tx, &id, policy.as_str()))
            .await
            .map_err(convert::status)?;
        Ok(Response::new(pb::SetBusyPolicyResponse {
            session: Some(self.view(row)),
        }))
    }

    async fn delete(
        &self,
        request: Request<pb::DeleteSessionRequest>,
    ) -> Result<Response<pb::DeleteSessionResponse>, Status> {
        let id = required_id(&request.into_inner().id)?;
        let lookup = id.clone();
        // Unknown ids are "not found", as before (deleting nothing is not a success).
        self.state
            .store
            .read(move |conn| store::resolve_conversation(conn, &lookup))
            .await
            .map_err(convert::status)?;
        let deleted =
            agent::ending::delete_conversations(&self.state.runner, vec![id.clone()], DELETED)
                .await
                .map_err(convert::status)?;
        tracing::info!(session = %id, sessions = deleted.len(), "session deleted");
        Ok(Response::new(pb::DeleteSessionResponse {
            deleted: deleted.len() as u32,
        }))
    }

    async fn history(
        &self,
        request: Request<pb::SessionHistoryRequest>,
    ) -> Result<Response<pb::SessionHistoryResponse>, Status> {
        let req = request.into_inner();
        let id = required_id(&req.id)?;
        let after = i64::try_from(req.after_message_id).unwrap_or(i64::MAX);
        let messages = self
            .state
            .store
            .read(move |conn| {
                let row = store::resolve_conversation(conn, &id)?;
                store::list_messages(conn, &row.id, after, req.limit)
            })
            .await
            .map_err(convert::status)?;
        Ok(Response::new(pb::SessionHistoryResponse {
            messages: messages.into_iter().map(convert::message).collect(),
        }))
    }

    async fn search(
        &self,
        request: Request<pb::SearchSessionsRequest>,
    ) -> Result<Response<pb::SearchSessionsResponse>, Status> {
        let req = request.into_inner();
        let hits = session_ops::search(&self.state, req).await?;
        Ok(Response::new(pb::SearchSessionsResponse { hits }))
    }

    async fn export(
        &self,
        request: Request<pb::ExportSessionRequest>,
    ) -> Result<Response<pb::ExportSessionResponse>, Status> {
        let req = request.into_inner();
        let id = required_id(&req.id)?;
        let format = pb::ExportFormat::try_from(req.format).unwrap_or_default();
        let content = session_ops::export(&self.state, id, format).await?;
        Ok(Response::new(pb::ExportSessionResponse { content }))
    }

    type AttachStream = super::attach::EventStream;

    async fn attach(
        &self,
        request: Request<Streaming<pb::ClientFrame>>,
    ) -> Result<Response<Self::AttachStream>, Status> {
        let stream = super::attach::attach(Arc::clone(&self.state), request.into_inner()).await?;
        Ok(Response::new(stream))
    }

    async fn send(
        &self,
        request: Request<pb::SendRequest>,
    ) -> Result<Response<pb::SendResponse>, Status> {
        let req = request.into_inner();
        let target = agent::Target {
            session_id: Some(req.session_id.trim().to_string()).filter(|s| !s.is_empty()),
            cwd: req.cwd,
            source: Some(req.source.trim().to_lowercase())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "api".into()),
        };
        let (session, chain, text) =
            agent::prepare_with_images(&self.state.runner, target, &req.text, req.images)
                .await
                .map_err(turn_status)?;
        let input = agent::TurnInput {
            text,
            source_client: Some(req.client_name)
                .filter(|c| !c.is_empty())
                .unwrap_or_else(|| "api".into()),
            yolo: req.yolo,
            busy: convert::busy_override(req.busy_policy),
            toolsets: Vec::new(),
            context_from: None,
            turn_id: None,
            stop: None,
            delegated: None,
        };
        let outcome = agent::run_prepared(&self.state.runner, session, chain, input)
            .await
            .map_err(turn_status)?;
        Ok(Response::new(outcome_response(outcome)?))
    }

    async fn interrupt(
        &self,
        request: Request<pb::InterruptSessionRequest>,
    ) -> Result<Response<pb::InterruptSessionResponse>, Status> {
        let id = required_id(&request.into_inner().id)?;
        let lookup = id.clone();
        let row = self
            .state
            .store
            .read(move |conn| store::resolve_conversation(conn, &lookup))
            .await
            .map_err(convert::status)?;
        let was_running = self
            .state
            .runner
            .hub
            .get(&row.conversation_id)
            .is_some_and(|live| live.interrupt());
        tracing::info!(session = %row.id, was_running, "interrupt requested");
        Ok(Response::new(pb::InterruptSessionResponse { was_running }))
    }

    async fn branch(
        &self,
        request: Request<pb::BranchSessionRequest>,
    ) -> Result<Response<pb::BranchSessionResponse>, Status> {
        let req = request.into_inner();
        required_id(&req.id)?;
        let title = clean_title(&req.title)?;
        let row = session_ops::branch(&self.state, req, title).await?;
        Ok(Response::new(pb::BranchSessionResponse {
            session: Some(self.view(row)),
        }))
    }

    async fn undo(
        &self,
        request: Request<pb::UndoSessionRequest>,
    ) -> Result<Response<pb::UndoSessionResponse>, Status> {
        let id = required_id(&request.into_inner().id)?;
        let undone = session_ops::undo(&self.state, id).await?;
        Ok(Response::new(pb::UndoSessionResponse {
            removed_messages: undone.removed_messages as u32,
            user_text: undone.user_text,
        }))
    }

    async fn retry(
        &self,
        request: Request<pb::RetrySessionRequest>,
    ) -> Result<Response<pb::RetrySessionResponse>, Status> {
        let id = required_id(&request.into_inner().id)?;
        let outcome = session_ops::retry(&self.state, id).await?;
        Ok(Response::new(pb::RetrySessionResponse {
            result: Some(outcome_response(outcome)?),
        }))
    }

    async fn compress(
        &self,
        request: Request<pb::CompressSessionRequest>,
    ) -> Result<Response<pb::CompressSessionResponse>, Status> {
        let id = required_id(&request.into_inner().id)?;
        let done = agent::compress_conversation(&self.state.runner, &id)
            .await
            .map_err(|e| match e {
                agent::CompressError::Store(e) => convert::status(e),
                agent::CompressError::Setup(m) => Status::failed_precondition(m),
                other => Status::failed_precondition(other.to_string()),
            })?;
        Ok(Response::new(pb::CompressSessionResponse {
            new_segment_id: done.segment_id,
            tokens_before: done.tokens_before,
            tokens_after: done.tokens_after,
        }))
    }

    async fn prune(
        &self,
        request: Request<pb::PruneSessionsRequest>,
    ) -> Result<Response<pb::PruneSessionsResponse>, Status> {
        let req = request.into_inner();
        let pruned = session_ops::prune(&self.state, req.older_than_days, req.dry_run).await?;
        Ok(Response::new(pb::PruneSessionsResponse {
            deleted: pruned.conversations as u32,
            kept_live: pruned.kept_live as u32,
        }))
    }

    async fn import(
        &self,
        request: Request<pb::ImportSessionsRequest>,
    ) -> Result<Response<pb::ImportSessionsResponse>, Status> {
        let req = request.into_inner();
        let home = Some(req.hermes_home.trim().to_string())
            .filter(|h| !h.is_empty())
            .map_or_else(|| self.state.home.dir.clone(), std::path::PathBuf::from);
        // A home that only ever ran cron (no sessions yet) has jobs but no state.db.
        let jobs_only = req.include_cron
            && home.is_dir()
            && !home.join("state.db").exists()
            && home.join("cron/jobs.json").is_file();
        let report = if jobs_only {
            tracing::info!(home = %home.display(), "no state.db to import; importing the cron jobs");
            store::hermes_import::ImportReport::default()
        } else {
            session_ops::import_hermes(&self.state, home.clone()).await?
        };
        let cron_jobs = if req.include_cron {
            let jobs = crate::cron::import::import_jobs(&self.state.cron, &home)
                .await
                .map_err(|e| {
                    Status::failed_precondition(format!(
                        "{} sessions were imported, but the cron jobs were not: {e}",
                        report.sessions
                    ))
                })?;
            tracing::info!(
                added = jobs.added,
                existing = jobs.existing,
                unreadable = jobs.unreadable.len(),
                "imported Python Hermes cron jobs"
            );
            jobs.added
        } else {
            0
        };
        Ok(Response::new(pb::ImportSessionsResponse {
            sessions: report.sessions as u32,
            messages: report.messages as u32,
            cron_jobs: cron_jobs as u32,
            skipped: report.skipped_sessions as u32,
            updated: report.updated_sessions as u32,
        }))
    }
}

/// A finished turn as the `Send` response; an interrupted or failed one as a status.
fn outcome_response(outcome: agent::TurnOutcome) -> Result<pb::SendResponse, Status> {
    match &outcome.end {
        agent::TurnEnd::Finished => Ok(convert::send_response(outcome)),
        agent::TurnEnd::Interrupted => Err(Status::aborted(format!(
            "the turn was interrupted (session {})",
            outcome.session_id
        ))),
        agent::TurnEnd::Failed {
            class,
            message,
            hint,
        } => Err(failed_status(*class, message, hint, &outcome.session_id)),
    }
}

/// A turn that could not start, as a status.
pub(super) fn turn_status(e: TurnError) -> Status {
    match e {
        TurnError::Setup(e) => Status::failed_precondition(e.to_string()),
        TurnError::Empty | TurnError::TooLarge(_) | TurnError::Image(_) => {
            Status::invalid_argument(e.to_string())
        }
        TurnError::Http(message) => Status::internal(message),
        TurnError::Task(message) => Status::internal(message),
        TurnError::Stopping => Status::unavailable(e.to_string()),
        TurnError::Store(e) => convert::status(e),
    }
}

/// A turn that failed, as a status naming the session that holds the user's message.
fn failed_status(class: pb::ErrorClass, message: &str, hint: &str, session_id: &str) -> Status {
    let text = format!("{message} — {hint} (your message is saved in session {session_id})");
    match class {
        pb::ErrorClass::BadRequest
        | pb::ErrorClass::ContextOverflow
        | pb::ErrorClass::PayloadTooLarge
        | pb::ErrorClass::BudgetExhausted
        | pb::ErrorClass::LoopDetected => Status::failed_precondition(text),
        pb::ErrorClass::Timeout => Status::deadline_exceeded(text),
        pb::ErrorClass::Internal => Status::internal(text),
        _ => Status::unavailable(text),
    }
}
