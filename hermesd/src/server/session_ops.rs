//! The history operations of the `Sessions` service: export, branch, undo, retry, prune. Each
//! resolves any id of a conversation (or its title) to its newest segment, and refuses to
//! rewrite a conversation while a turn runs in it.

use std::sync::Arc;

use hermes_proto::pb::{self, session_event::Kind};
use tonic::Status;

use super::convert;
use crate::{agent, export, maintenance, state::DaemonState, store};

/// The conversation `id` names, refused while one of its turns runs.
async fn idle_conversation(
    state: &Arc<DaemonState>,
    id: String,
) -> Result<store::SessionRow, Status> {
    let row = state
        .store
        .read(move |conn| store::resolve_reference(conn, &id))
        .await
        .map_err(convert::status)?;
    if state
        .runner
        .hub
        .get(&row.conversation_id)
        .is_some_and(|l| l.is_running())
    {
        return Err(Status::failed_precondition(format!(
            "a turn is running in session {}; wait for it or stop it (/stop in chat, Ctrl-C in send)",
            row.id
        )));
    }
    Ok(row)
}

/// The whole conversation (every segment) as Markdown or Hermes JSONL.
pub async fn export(
    state: &Arc<DaemonState>,
    id: String,
    format: pb::ExportFormat,
) -> Result<String, Status> {
    let transcript = state
        .store
        .read(move |conn| {
            let head = store::resolve_reference(conn, &id)?;
            let segment_ids = store::conversation_segments(conn, &head.id)?;
            let mut messages = Vec::new();
            for segment in &segment_ids {
                messages.extend(store::list_messages(conn, segment, 0, 0)?);
            }
            Ok(export::Transcript {
                head,
                segment_ids,
                messages,
            })
        })
        .await
        .map_err(convert::status)?;
    Ok(match format {
        pb::ExportFormat::Jsonl => export::jsonl(&transcript),
        pb::ExportFormat::Markdown | pb::ExportFormat::Unspecified => export::markdown(&transcript),
    })
}

/// Conversations matching a query, one hit per conversation, best first.
pub async fn search(
    state: &Arc<DaemonState>,
    req: pb::SearchSessionsRequest,
) -> Result<Vec<pb::SearchHit>, Status> {
    let ms = |t: Option<prost_types::Timestamp>| {
        t.map(|t| t.seconds.saturating_mul(1000) + i64::from(t.nanos / 1_000_000))
    };
    let query = store::search::SearchQuery {
        text: req.query,
        limit: if req.limit == 0 {
            10
        } else {
            req.limit.min(100)
        },
        source: Some(req.source.trim().to_lowercase()).filter(|s| !s.is_empty()),
        role: Some(req.role.trim().to_lowercase()).filter(|r| !r.is_empty()),
        since_ms: ms(req.since),
        until_ms: ms(req.until),
        exclude_conversation: None,
        ranking: if req.all_matches {
            store::search::Ranking::All
        } else {
            store::search::Ranking::default()
        },
        lenient: false,
    };
    let hits = state
        .store
        .read(move |conn| store::search::search(conn, &query))
        .await
        .map_err(convert::status)?;
    Ok(hits
        .into_iter()
        .map(|h| pb::SearchHit {
            session_id: h.conversation_id,
            title: h.title.unwrap_or_default(),
            message_id: h.message_id.max(0) as u64,
            role: h.role,
            snippet: h.snippet,
            score: h.score,
            created_at: Some(convert::timestamp(h.created_at)),
            segment_id: h.segment_id,
            source: h.source,
        })
        .collect())
}

/// A new conversation copied from `id` up to a message (0: all of the newest segment).
pub async fn branch(
    state: &Arc<DaemonState>,
    req: pb::BranchSessionRequest,
    title: Option<String>,
) -> Result<store::SessionRow, Status> {
    let id = req.id.trim().to_string();
    let up_to = Some(req.up_to_message_id)
        .filter(|m| *m > 0)
        .map(|m| i64::try_from(m).unwrap_or(i64::MAX));
    let row = state
        .store
        .write(move |tx| {
            let from = store::resolve_reference(tx, &id)?;
            store::branch_conversation(tx, &from.id, up_to, title.as_deref())
        })
        .await
        .map_err(convert::status)?;
    tracing::info!(session = %row.id, parent = ?row.parent_session_id, "session branched");
    Ok(row)
}

/// Drop the last exchange of `id`; tells attached clients.
pub async fn undo(state: &Arc<DaemonState>, id: String) -> Result<store::Undone, Status> {
    let row = idle_conversation(state, id).await?;
    let segment = row.id.clone();
    let undone = state
        .store
        .write(move |tx| store::undo_last_exchange(tx, &segment))
        .await
        .map_err(convert::status)?;
    if let Some(live) = state.runner.hub.get(&row.conversation_id) {
        live.emit_transient(
            "",
            Kind::Notice(pb::Notice {
                kind: "undone".into(),
                text: format!(
                    "removed the last exchange ({} messages)",
                    undone.removed_messages
                ),
            }),
        );
    }
    tracing::info!(session = %row.id, removed = undone.removed_messages, "last exchange undone");
    Ok(undone)
}

/// Drop the last exchange and run its user message again, waiting for the answer.
pub async fn retry(state: &Arc<DaemonState>, id: String) -> Result<agent::TurnOutcome, Status> {
    let undone = undo(state, id).await?;
    let target = agent::Target {
        session_id: Some(undone.segment_id),
        ..agent::Target::default()
    };
    let input = agent::TurnInput {
        text: undone.user_text,
        source_client: "retry".into(),
        yolo: false,
        busy: Some(agent::BusyPolicy::Queue),
        toolsets: Vec::new(),
        context_from: None,
        turn_id: None,
        stop: None,
        delegated: None,
    };
    agent::send(&state.runner, target, input)
        .await
        .map_err(super::sessions_service::turn_status)
}

/// Remove conversations idle for more than `days` days.
pub async fn prune(
    state: &Arc<DaemonState>,
    days: u32,
    dry_run: bool,
) -> Result<maintenance::Pruned, Status> {
    if days == 0 {
        return Err(Status::invalid_argument(
            "say how old a session must be to go (older_than_days ≥ 1, e.g. --older-than 30d)",
        ));
    }
    maintenance::prune(&state.runner, days, dry_run)
        .await
        .map_err(convert::status)
}

/// Import a Python Hermes home's `state.db` (read-only) into hermesd.db.
pub async fn import_hermes(
    state: &Arc<DaemonState>,
    home: std::path::PathBuf,
) -> Result<store::hermes_import::ImportReport, Status> {
    let shown = home.display().to_string();
    let source = tokio::task::spawn_blocking(move || store::hermes_import::open_source(&home))
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map_err(|e| Status::failed_precondition(e.to_string()))?;
    let report = state
        .store
        .write(move |tx| store::hermes_import::import(&source, tx))
        .await
        .map_err(convert::status)?;
    tracing::info!(
        from = %shown,
        sessions = report.sessions,
        messages = report.messages,
        updated = report.updated_sessions,
        skipped = report.skipped_sessions,
        "imported Python Hermes sessions"
    );
    Ok(report)
}
