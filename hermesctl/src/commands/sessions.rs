//! `hermesctl sessions list|show|rm|busy`; the history commands are in `history.rs`.

use hermes_proto::pb;
use serde_json::{Value, json};

use crate::{cli::SessionsCommand, connection, context::Context, error::CliError, output};

pub async fn run(ctx: &Context, command: SessionsCommand) -> Result<(), CliError> {
    let daemon = connection::connect(ctx).await?;
    let mut sessions = daemon.sessions();
    match command {
        SessionsCommand::List { limit, source, all } => {
            let list = sessions
                .list(pb::ListSessionsRequest {
                    limit,
                    source: source.unwrap_or_default(),
                    all_segments: all,
                })
                .await?
                .into_inner()
                .sessions;
            if ctx.json {
                output::json(&Value::Array(list.iter().map(session_json).collect()));
            } else {
                print_table(&list);
            }
        }
        SessionsCommand::Show { id } => {
            let reply = sessions
                .get(pb::GetSessionRequest {
                    id,
                    include_messages: true,
                })
                .await?
                .into_inner();
            let session = reply
                .session
                .ok_or_else(|| CliError::new("hermesd returned no session"))?;
            if ctx.json {
                let mut doc = session_json(&session);
                doc["messages"] = reply.messages.iter().map(message_json).collect();
                output::json(&doc);
            } else {
                print_session(&session, &reply.messages);
            }
        }
        SessionsCommand::Rm { id } => {
            let deleted = sessions
                .delete(pb::DeleteSessionRequest { id: id.clone() })
                .await?
                .into_inner()
                .deleted;
            if ctx.json {
                output::json(&json!({"id": id, "deleted": deleted}));
            } else {
                let segments = if deleted == 1 { "" } else { "s" };
                output::line(format!(
                    "deleted session {id} ({deleted} segment{segments})"
                ));
            }
        }
        SessionsCommand::Busy { id, policy } => {
            let busy = match policy.as_str() {
                "steer" => pb::BusyPolicy::Steer,
                "interrupt" => pb::BusyPolicy::Interrupt,
                _ => pb::BusyPolicy::Queue,
            };
            let session = sessions
                .set_busy_policy(pb::SetBusyPolicyRequest {
                    id: id.clone(),
                    busy_policy: busy as i32,
                })
                .await?
                .into_inner()
                .session
                .ok_or_else(|| CliError::new("hermesd returned no session"))?;
            if ctx.json {
                output::json(&json!({"id": session.id, "busy_policy": policy}));
            } else {
                output::line(format!(
                    "session {}: input during a turn will {policy}",
                    session.id
                ));
            }
        }
        history => super::history::run(ctx, &daemon, history).await?,
    }
    Ok(())
}

/// Lower-case word for a session state, as `--json` prints enums.
pub(crate) fn state_word(state: i32) -> &'static str {
    match pb::SessionState::try_from(state).unwrap_or(pb::SessionState::Unspecified) {
        pb::SessionState::Unspecified => "unknown",
        pb::SessionState::Stored => "stored",
        pb::SessionState::Idle => "idle",
        pb::SessionState::Running => "running",
        pb::SessionState::WaitingApproval => "waiting_approval",
        pb::SessionState::WaitingClarify => "waiting_clarify",
        pb::SessionState::Interrupted => "interrupted",
        pb::SessionState::Failed => "failed",
    }
}

fn non_empty(text: &str) -> Value {
    if text.is_empty() {
        Value::Null
    } else {
        Value::String(text.to_string())
    }
}

fn session_json(s: &pb::Session) -> Value {
    json!({
        "id": s.id,
        "title": non_empty(&s.title),
        "source": s.source,
        "state": state_word(s.state),
        "clients": s.clients,
        "created_at": output::timestamp(s.created_at.as_ref()),
        "updated_at": output::timestamp(s.updated_at.as_ref()),
        "message_count": s.message_count,
        "parent_session_id": non_empty(&s.parent_session_id),
        "model": s.model,
        "cwd": s.cwd,
        "last_seq": s.last_seq,
    })
}

fn message_json(m: &pb::Message) -> Value {
    let tool_calls = if m.tool_calls.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&m.tool_calls).unwrap_or_else(|_| Value::String(m.tool_calls.clone()))
    };
    json!({
        "id": m.id,
        "role": m.role,
        "content": m.content,
        "tool_calls": tool_calls,
        "tool_call_id": non_empty(&m.tool_call_id),
        "name": non_empty(&m.name),
        "reasoning": non_empty(&m.reasoning),
        "created_at": output::timestamp(m.created_at.as_ref()),
    })
}

fn print_table(list: &[pb::Session]) {
    if list.is_empty() {
        output::line("no sessions");
        return;
    }
    output::line(format!(
        "{:<22}  {:<8}  {:<8}  {:>3}  {:>5}  {:<16}  TITLE",
        "ID", "SOURCE", "STATE", "CLI", "MSGS", "UPDATED"
    ));
    for s in list {
        let title = if s.title.is_empty() {
            "(untitled)"
        } else {
            &s.title
        };
        output::line(format!(
            "{:<22}  {:<8}  {:<8}  {:>3}  {:>5}  {:<16}  {}",
            s.id,
            s.source,
            state_word(s.state),
            s.clients,
            s.message_count,
            output::when(s.updated_at.as_ref()),
            title
        ));
    }
}

fn print_session(s: &pb::Session, messages: &[pb::Message]) {
    let title = if s.title.is_empty() {
        "(untitled)"
    } else {
        &s.title
    };
    output::line(format!("session {}  {title}", s.id));
    output::line(format!(
        "source {}, {} messages, created {}, updated {}",
        s.source,
        s.message_count,
        output::when(s.created_at.as_ref()),
        output::when(s.updated_at.as_ref())
    ));
    if !s.parent_session_id.is_empty() {
        output::line(format!("continues {}", s.parent_session_id));
    }
    for m in messages {
        output::line("");
        let who = if m.name.is_empty() {
            m.role.clone()
        } else {
            format!("{} ({})", m.role, m.name)
        };
        output::line(format!(
            "── {who} · {}",
            output::when(m.created_at.as_ref())
        ));
        if !m.content.is_empty() {
            output::line(&m.content);
        }
        if !m.tool_calls.is_empty() {
            output::line(format!("tool calls: {}", m.tool_calls));
        }
    }
}
