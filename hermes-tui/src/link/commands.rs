//! Slash commands that are RPCs: `/model`, `/busy`, `/usage`, `/title`, `/branch`, `/undo`,
//! `/retry`, `/compress` — each answers with lines for the conversation (or a new session).

use hermes_proto::{
    client::describe_status,
    pb::{self, models_client::ModelsClient, sessions_client::SessionsClient},
};
use tonic::transport::Channel;

use crate::app::Msg;

/// Run `/name args` for `session_id`; what to show comes back as messages.
pub async fn run(channel: Channel, session_id: &str, name: &str, args: &str) -> Vec<Msg> {
    match command(channel, session_id, name, args.trim()).await {
        Ok(msgs) => msgs,
        Err(status) => vec![Msg::Failed(format!(
            "/{name}: {}",
            describe_status(&status)
        ))],
    }
}

async fn command(
    channel: Channel,
    id: &str,
    name: &str,
    args: &str,
) -> Result<Vec<Msg>, tonic::Status> {
    let mut sessions = SessionsClient::new(channel.clone());
    let info = |text: String| Ok(vec![Msg::Info(text)]);
    match name {
        "model" => {
            let reply = ModelsClient::new(channel)
                .get_default(pb::GetDefaultModelRequest {})
                .await?
                .into_inner();
            let m = reply.model.unwrap_or_default();
            let r = m.r#ref.unwrap_or_default();
            info(format!(
                "model {}:{} ({} tokens of context); `hermesctl model set` changes it",
                r.provider, r.model, m.context_length
            ))
        }
        "usage" => {
            let s = sessions
                .get(pb::GetSessionRequest {
                    id: id.to_string(),
                    include_messages: false,
                })
                .await?
                .into_inner()
                .session
                .unwrap_or_default();
            let u = s.usage.unwrap_or_default();
            let cost = u
                .cost_usd
                .map_or_else(|| "unknown".to_string(), |c| format!("${c:.4}"));
            info(format!(
                "{} in / {} out tokens, cost {cost}, {} messages",
                u.input_tokens, u.output_tokens, s.message_count
            ))
        }
        "title" if args.is_empty() => {
            let s = sessions
                .get(pb::GetSessionRequest {
                    id: id.to_string(),
                    include_messages: false,
                })
                .await?
                .into_inner()
                .session
                .unwrap_or_default();
            info(if s.title.is_empty() {
                "(untitled) — /title TEXT sets one".into()
            } else {
                format!("title: {}", s.title)
            })
        }
        "title" => {
            sessions
                .rename(pb::RenameSessionRequest {
                    id: id.to_string(),
                    title: args.to_string(),
                })
                .await?;
            info(format!("title: {args}"))
        }
        "busy" => {
            let policy = match args {
                "queue" => pb::BusyPolicy::Queue,
                "steer" => pb::BusyPolicy::Steer,
                "interrupt" => pb::BusyPolicy::Interrupt,
                _ => return info("/busy queue|steer|interrupt".into()),
            };
            sessions
                .set_busy_policy(pb::SetBusyPolicyRequest {
                    id: id.to_string(),
                    busy_policy: policy as i32,
                })
                .await?;
            info(format!("input during a turn will {args}"))
        }
        "branch" => {
            let branch = sessions
                .branch(pb::BranchSessionRequest {
                    id: id.to_string(),
                    up_to_message_id: 0,
                    title: args.to_string(),
                })
                .await?
                .into_inner()
                .session;
            Ok(match branch {
                Some(session) => vec![Msg::Created(session)],
                None => vec![Msg::Failed("hermesd returned no session".into())],
            })
        }
        "undo" | "retry" => {
            let undone = sessions
                .undo(pb::UndoSessionRequest { id: id.to_string() })
                .await?
                .into_inner();
            let mut msgs = vec![Msg::Info(format!(
                "removed the last exchange ({} messages)",
                undone.removed_messages
            ))];
            if name == "retry" && !undone.user_text.is_empty() {
                msgs.push(Msg::Resend(undone.user_text));
            }
            Ok(msgs)
        }
        "compress" => {
            let done = sessions
                .compress(pb::CompressSessionRequest { id: id.to_string() })
                .await?
                .into_inner();
            info(format!(
                "compressed: ~{} → ~{} tokens (segment {})",
                done.tokens_before, done.tokens_after, done.new_segment_id
            ))
        }
        "reload_mcp" => {
            let reply = hermes_proto::pb::mcp_client::McpClient::new(channel)
                .reload(pb::ReloadMcpRequest {})
                .await?
                .into_inner();
            info(hermes_proto::mcp::summary(&reply.servers))
        }
        other => info(format!("/{other} is not available in the TUI")),
    }
}
