//! Slash commands in a chat, from the one table in `hermes_proto::commands` plus every trusted
//! skill as `/<skill-name>`: the same names and aliases as `hermesctl chat`, each acting on the
//! chat's conversation through the hub and the store, and the platform's command menu built
//! from the same list.

use std::sync::Arc;

use hermes_proto::commands::{self, COMMANDS};

use super::{Gateway, Link, chats::chat_of, outbox, reply};
use crate::{
    agent::{BusyPolicy, TurnRunner},
    store::{self, InboundRow},
};

/// One command as offered: name, description, and whether it is a skill.
#[derive(Debug, Clone)]
pub struct Offered {
    pub name: String,
    pub aliases: Vec<String>,
    pub args: String,
    pub description: String,
    pub skill: bool,
    pub gateway: bool,
    pub terminal: bool,
}

/// Every command: the built-in table, then each trusted skill whose name is not taken.
pub async fn list(runner: &TurnRunner) -> Vec<Offered> {
    let mut offered: Vec<Offered> = COMMANDS
        .iter()
        .map(|c| Offered {
            name: c.name.to_string(),
            aliases: c.aliases.iter().map(|a| a.to_string()).collect(),
            args: c.args.to_string(),
            description: c.description.to_string(),
            skill: false,
            gateway: c.in_gateway(),
            terminal: c.in_terminal(),
        })
        .collect();
    let services = &runner.tool_services;
    let roots = services.skills_settings().roots(&runner.home.dir);
    if let Ok(view) = services.skills.view(&runner.store, roots).await {
        for entry in &view.visible.entries {
            let name = entry.name.to_lowercase().replace('-', "_");
            if commands::lookup(&name).is_some() || offered.iter().any(|o| o.name == name) {
                continue;
            }
            offered.push(Offered {
                name,
                aliases: Vec::new(),
                args: "[request]".into(),
                description: entry.description.chars().take(200).collect(),
                skill: true,
                gateway: true,
                terminal: true,
            });
        }
    }
    offered
}

/// The platform's command menu: `(name, description)` of what a chat offers.
pub async fn menu(gateway: &Gateway) -> Vec<(String, String)> {
    list(&gateway.runner)
        .await
        .into_iter()
        .filter(|o| o.gateway && commands::is_platform_command_name(&o.name))
        .take(100)
        .map(|o| {
            let description = if o.description.is_empty() {
                o.name.clone()
            } else {
                o.description.chars().take(256).collect()
            };
            (o.name, description)
        })
        .collect()
}

pub fn is_command(text: &str) -> bool {
    commands::split(text).is_some()
}

/// Commands that act at once, not after the chat's queued messages.
pub fn is_immediate(text: &str) -> bool {
    commands::split(text)
        .and_then(|(name, _)| commands::lookup(&name))
        .is_some_and(|c| matches!(c.name, "stop" | "approve" | "deny"))
}

/// Commands only the owner's own (`access::is_operator`) may give: they move where every
/// conversation's deliveries go, or restart what every conversation uses.
const OWNERS_ONLY: [&str; 2] = ["sethome", "reload_mcp"];

/// Run the command in `row` and reply in its chat.
pub async fn run(gateway: &Arc<Gateway>, link: &Arc<Link>, row: &InboundRow) {
    let Some((name, rest)) = commands::split(&row.text) else {
        return;
    };
    let reply = match commands::lookup(&name).filter(|c| c.in_gateway()) {
        Some(command) => builtin(gateway, link, row, command.name, &rest).await,
        None => match skill_request(gateway, &name, &rest).await {
            Some(text) => {
                // In a chat its people share, the skill's request says who asked, as messages do.
                let text = if super::routing::is_personal(
                    &row.session_key,
                    &row.chat_id,
                    &row.thread_id,
                ) {
                    text
                } else {
                    format!(
                        "[{}] {text}",
                        super::inbound::inline_name(&row.user_name, &row.user_id)
                    )
                };
                reply::run_turn(gateway, link, row, text, Vec::new()).await;
                return;
            }
            None => unknown(&name),
        },
    };
    let Some(reply) = reply else { return };
    let id = row.id;
    let _ = gateway
        .runner
        .store
        .write(move |tx| store::set_inbound_state(tx, id, store::inbound_state::DONE, None))
        .await;
    outbox::send_now(gateway, link, &chat_of(row), Some(row.id), &reply).await;
}

fn unknown(name: &str) -> Option<String> {
    let names = COMMANDS.iter().filter(|c| c.in_gateway()).map(|c| c.name);
    Some(match commands::suggest(name, names) {
        Some(candidate) => {
            format!("Unknown command /{name}. Did you mean /{candidate}? (/help lists them)")
        }
        None => format!("Unknown command /{name}. /help lists them."),
    })
}

async fn skill_request(gateway: &Gateway, name: &str, rest: &str) -> Option<String> {
    let offered = list(&gateway.runner).await;
    let name = name.replace('-', "_");
    let skill = offered.into_iter().find(|o| o.skill && o.name == name)?;
    Some(commands::skill_request(&skill.name, rest))
}

/// A built-in command; `None` when it replied itself (a turn).
async fn builtin(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    row: &InboundRow,
    name: &str,
    rest: &str,
) -> Option<String> {
    let runner = &gateway.runner;
    let session = reply::conversation(gateway, &row.session_key)
        .await
        .ok()
        .flatten();
    let live = session
        .as_ref()
        .and_then(|s| runner.hub.get(&s.conversation_id));
    // Commands that act beyond the sender's conversation are for the owner's own.
    if OWNERS_ONLY.contains(&name)
        && !super::access::operator_now(gateway, link.platform(), &row.user_id).await
    {
        return Some(format!("Only the bot's owner can use /{name}."));
    }
    Some(match name {
        "help" => help(gateway).await,
        "sethome" => set_home(gateway, link, row).await,
        "voice" => super::voice_mode::command(gateway, link.platform(), &row.chat_id, rest).await,
        "new" => {
            if let Some(live) = &live {
                live.interrupt_for("a new session was started");
            }
            match reply::new_conversation(gateway, link, row).await {
                Ok(_) => {
                    "✨ New session started. The previous one is kept (hermesctl sessions list)."
                        .into()
                }
                Err(e) => format!("⚠️ {e}"),
            }
        }
        "stop" => match live {
            Some(live) if live.interrupt_for("stopped from the chat") => "⏹ Stopping.".into(),
            _ => "Nothing is running.".into(),
        },
        "approve" => {
            let choice = match rest.trim() {
                "session" => "session",
                "always" => "always",
                _ => "once",
            };
            super::approvals::by_command(gateway, link, row, choice).await
        }
        "deny" => super::approvals::by_command(gateway, link, row, "deny").await,
        "retry" => return retry(gateway, link, row, session).await,
        _ => {
            // A setting given before the first message starts the conversation it belongs to.
            let sets = matches!(name, "busy" | "title") && !rest.trim().is_empty();
            let session = match session {
                Some(session) => session,
                None if sets => match reply::new_conversation(gateway, link, row).await {
                    Ok(session) => session,
                    Err(e) => return Some(format!("⚠️ {e}")),
                },
                None => return Some("No conversation yet: send a message first.".into()),
            };
            about(
                gateway,
                name,
                rest,
                session,
                live.is_some_and(|l| l.is_running()),
            )
            .await
        }
    })
}

async fn retry(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    row: &InboundRow,
    session: Option<store::SessionRow>,
) -> Option<String> {
    let runner = &gateway.runner;
    // The message cut by a restart, or the last exchange of the conversation.
    let key = row.session_key.clone();
    let before = row.id;
    let interrupted = runner
        .store
        .read(move |conn| store::last_inbound_text(conn, &key, before))
        .await
        .ok()
        .flatten();
    let text = match session {
        Some(session) => {
            let id = session.id.clone();
            match runner
                .store
                .write(move |tx| store::undo_last_exchange(tx, &id))
                .await
            {
                Ok(undone) => Some(undone.user_text),
                Err(_) => interrupted,
            }
        }
        None => interrupted,
    };
    match text {
        Some(text) => {
            reply::run_turn(gateway, link, row, text, Vec::new()).await;
            None
        }
        None => Some("Nothing to retry.".into()),
    }
}

async fn help(gateway: &Gateway) -> String {
    let mut lines = vec!["Commands:".to_string()];
    for o in list(&gateway.runner)
        .await
        .into_iter()
        .filter(|o| o.gateway)
    {
        let args = if o.args.is_empty() {
            String::new()
        } else {
            format!(" {}", o.args)
        };
        lines.push(format!("/{}{args} — {}", o.name, o.description));
    }
    lines.join("\n")
}

/// Commands about the chat's conversation.
async fn about(
    gateway: &Gateway,
    name: &str,
    rest: &str,
    session: store::SessionRow,
    running: bool,
) -> String {
    let runner = &gateway.runner;
    match name {
        "status" => format!(
            "Session {} ({})\n{} messages · {}\nBusy policy: {}",
            session.id,
            session.title.as_deref().unwrap_or("untitled"),
            session.message_count,
            if running { "a turn is running" } else { "idle" },
            session.busy_policy
        ),
        "usage" => format!(
            "Tokens: {} in, {} out ({} cache read){}",
            session.input_tokens,
            session.output_tokens,
            session.cache_read_tokens,
            session
                .cost_usd
                .map(|c| format!(" · ${c:.4}"))
                .unwrap_or_default()
        ),
        "model" => {
            let config = runner.config();
            match crate::llm::endpoints(&config.settings.llm, &config.env) {
                Ok(endpoints) => endpoints
                    .iter()
                    .enumerate()
                    .map(|(i, e)| {
                        format!(
                            "{}{}",
                            if i == 0 { "Model: " } else { "Fallback: " },
                            e.label()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
                Err(e) => format!("⚠️ {e}"),
            }
        }
        "title" if rest.is_empty() => session.title.unwrap_or_else(|| "(untitled)".into()),
        "title" => {
            let (id, title) = (session.id.clone(), rest.to_string());
            match runner
                .store
                .write(move |tx| store::set_title(tx, &id, Some(&title)))
                .await
            {
                Ok(_) => format!("Title set: {rest}"),
                Err(e) => format!("⚠️ {e}"),
            }
        }
        "busy" if rest.is_empty() => format!("Busy policy: {}", session.busy_policy),
        "busy" => match BusyPolicy::parse(rest) {
            Some(policy) => {
                let id = session.id.clone();
                match runner
                    .store
                    .write(move |tx| store::set_busy_policy(tx, &id, policy.as_str()))
                    .await
                {
                    Ok(_) => format!("Busy policy: {}", policy.as_str()),
                    Err(e) => format!("⚠️ {e}"),
                }
            }
            None => "Say queue, steer or interrupt.".into(),
        },
        "undo" if running => "A turn is running: /stop it first.".into(),
        "undo" => {
            let id = session.id.clone();
            match runner
                .store
                .write(move |tx| store::undo_last_exchange(tx, &id))
                .await
            {
                Ok(undone) => format!(
                    "↩️ Removed the last exchange ({} messages).",
                    undone.removed_messages
                ),
                Err(e) => format!("⚠️ {e}"),
            }
        }
        "compress" if running => "A turn is running: /stop it first.".into(),
        "compress" => match crate::agent::compress_conversation(runner, &session.id).await {
            Ok(_) => "🗜 Compressed.".into(),
            Err(e) => format!("⚠️ {e}"),
        },
        "reload_mcp" => match runner.tool_services.mcp().map(|m| (m, m.names().len())) {
            Some((mcp, count)) if count > 0 => {
                mcp.reconnect_all();
                format!("🔌 Reconnecting {count} MCP server(s).")
            }
            _ => "No MCP servers are configured.".into(),
        },
        other => format!("/{other} is not available in chats."),
    }
}

/// `/sethome`: this chat (and thread) becomes the platform's home channel.
async fn set_home(gateway: &Arc<Gateway>, link: &Arc<Link>, row: &InboundRow) -> String {
    let place = store::ChatPlace {
        platform: link.platform().to_string(),
        chat_id: row.chat_id.clone(),
        thread_id: row.thread_id.clone(),
        kind: String::new(),
        name: if row.chat_name.is_empty() {
            row.chat_id.clone()
        } else {
            row.chat_name.clone()
        },
        ..store::ChatPlace::default()
    };
    let stored = place.clone();
    match gateway
        .runner
        .store
        .write(move |tx| store::set_home(tx, &stored))
        .await
    {
        Ok(()) => format!(
            "✅ Home channel set to {} (ID: {}).\nCron jobs and cross-platform messages will be delivered here.",
            place.name, place.chat_id
        ),
        Err(e) => format!("Failed to save home channel: {e}"),
    }
}
