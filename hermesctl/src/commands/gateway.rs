//! `hermesctl gateway status|home` and `hermesctl pairing list|approve|revoke`: the chat
//! platforms' connections, their home channels, and who may talk to the agent through them.

use hermes_proto::pb;
use serde_json::{Value, json};

use crate::{
    cli::{GatewayCommand, PairingCommand},
    connection,
    context::Context,
    error::CliError,
    output,
};

fn state_name(state: i32) -> &'static str {
    match pb::PlatformState::try_from(state).unwrap_or(pb::PlatformState::Unspecified) {
        pb::PlatformState::Disabled => "disabled",
        pb::PlatformState::Connecting => "connecting",
        pb::PlatformState::Connected => "connected",
        pb::PlatformState::Retrying => "retrying",
        pb::PlatformState::Fatal => "fatal",
        pb::PlatformState::Unspecified => "unknown",
    }
}

pub async fn run(ctx: &Context, command: GatewayCommand) -> Result<(), CliError> {
    match command {
        GatewayCommand::Status => status(ctx).await,
        GatewayCommand::Home {
            platform,
            chat,
            name,
        } => home(ctx, platform, chat, name).await,
    }
}

fn home_json(h: &pb::HomeChannel) -> Value {
    json!({
        "platform": h.platform,
        "chat_id": (!h.chat_id.is_empty()).then_some(&h.chat_id),
        "thread_id": (!h.thread_id.is_empty()).then_some(&h.thread_id),
        "name": (!h.name.is_empty()).then_some(&h.name),
        "source": (!h.source.is_empty()).then_some(&h.source),
    })
}

fn home_line(h: &pb::HomeChannel) -> String {
    if h.chat_id.is_empty() {
        let variable = format!("{}_HOME_CHANNEL", h.platform.to_ascii_uppercase());
        return format!(
            "{:<10} no home channel (send /sethome in a chat, or set {variable})",
            h.platform
        );
    }
    let topic = if h.thread_id.is_empty() {
        String::new()
    } else {
        format!(" topic {}", h.thread_id)
    };
    let from = if h.source == "env" {
        "from the environment"
    } else {
        "set"
    };
    format!(
        "{:<10} {}{topic} ({}, {from})",
        h.platform, h.chat_id, h.name
    )
}

async fn home(
    ctx: &Context,
    platform: Option<String>,
    chat: Option<String>,
    name: Option<String>,
) -> Result<(), CliError> {
    let daemon = connection::connect(ctx).await?;
    let mut gateway = daemon.gateway();
    let Some(chat) = chat else {
        let mut homes = gateway
            .list_homes(pb::ListHomesRequest {})
            .await?
            .into_inner()
            .homes;
        if let Some(platform) = &platform {
            homes.retain(|h| h.platform.eq_ignore_ascii_case(platform));
            if homes.is_empty() {
                return Err(CliError::new(format!("{platform} is not configured")));
            }
        }
        if ctx.json {
            output::json(&Value::Array(homes.iter().map(home_json).collect()));
        } else if homes.is_empty() {
            output::line(
                "no chat platform is configured (set TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN or SLACK_BOT_TOKEN in ~/.hermes/.env)",
            );
        } else {
            homes.iter().for_each(|h| output::line(home_line(h)));
        }
        return Ok(());
    };
    let (chat_id, thread_id) = chat.split_once(':').unwrap_or((chat.as_str(), ""));
    let home = gateway
        .set_home(pb::SetHomeRequest {
            platform: platform.unwrap_or_default(),
            chat_id: chat_id.to_string(),
            thread_id: thread_id.to_string(),
            name: name.unwrap_or_default(),
        })
        .await?
        .into_inner()
        .home
        .unwrap_or_default();
    if ctx.json {
        output::json(&home_json(&home));
    } else {
        let topic = if home.thread_id.is_empty() {
            String::new()
        } else {
            format!(" topic {}", home.thread_id)
        };
        output::line(format!(
            "{}'s home channel is now {}{topic} ({}): cron results and messages to {} go there",
            home.platform, home.chat_id, home.name, home.platform
        ));
    }
    Ok(())
}

async fn status(ctx: &Context) -> Result<(), CliError> {
    let daemon = connection::connect(ctx).await?;
    let platforms = daemon
        .gateway()
        .status(pb::GatewayStatusRequest {})
        .await?
        .into_inner()
        .platforms;
    if ctx.json {
        let rows = platforms
            .iter()
            .map(|p| {
                json!({
                    "platform": p.platform,
                    "state": state_name(p.state),
                    "connected_since": output::timestamp(p.connected_since.as_ref()),
                    "last_received_at": output::timestamp(p.last_received_at.as_ref()),
                    "last_sent_at": output::timestamp(p.last_sent_at.as_ref()),
                    "reconnects": p.reconnects,
                    "last_error": p.last_error,
                })
            })
            .collect();
        output::json(&Value::Array(rows));
        return Ok(());
    }
    if platforms.is_empty() {
        output::line(
            "no chat platform is configured (set TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN or SLACK_BOT_TOKEN in ~/.hermes/.env)",
        );
        return Ok(());
    }
    for p in &platforms {
        output::line(format!(
            "{:<10} {:<10} since {}  in {}  out {}  reconnects {}",
            p.platform,
            state_name(p.state),
            output::when(p.connected_since.as_ref()),
            output::when(p.last_received_at.as_ref()),
            output::when(p.last_sent_at.as_ref()),
            p.reconnects
        ));
        if !p.last_error.is_empty() {
            output::line(format!("           last error: {}", p.last_error));
        }
    }
    Ok(())
}

fn pairing_json(p: &pb::Pairing) -> Value {
    json!({
        "platform": p.platform,
        "user_id": p.user_id,
        "user_name": p.user_name,
        "approved": p.approved,
        "requested_at": output::timestamp(p.requested_at.as_ref()),
        "expires_at": output::timestamp(p.expires_at.as_ref()),
        "approved_at": output::timestamp(p.approved_at.as_ref()),
    })
}

pub async fn pairing(ctx: &Context, command: PairingCommand) -> Result<(), CliError> {
    let daemon = connection::connect(ctx).await?;
    let mut gateway = daemon.gateway();
    match command {
        PairingCommand::List { platform } => {
            let pairings = gateway
                .list_pairings(pb::ListPairingsRequest {
                    platform: platform.unwrap_or_default(),
                })
                .await?
                .into_inner()
                .pairings;
            if ctx.json {
                output::json(&Value::Array(pairings.iter().map(pairing_json).collect()));
            } else if pairings.is_empty() {
                output::line("no pairing requests and no approved users");
            } else {
                for p in &pairings {
                    let what = if p.approved {
                        format!("approved {}", output::when(p.approved_at.as_ref()))
                    } else {
                        format!("pending until {}", output::when(p.expires_at.as_ref()))
                    };
                    output::line(format!(
                        "{:<10} {:<14} {:<20} {what}",
                        p.platform, p.user_id, p.user_name
                    ));
                }
            }
        }
        PairingCommand::Approve { platform, code } => {
            let approved = gateway
                .approve_pairing(pb::ApprovePairingRequest { platform, code })
                .await?
                .into_inner()
                .pairing
                .unwrap_or_default();
            if ctx.json {
                output::json(&pairing_json(&approved));
            } else {
                output::line(format!(
                    "approved {} ({}) on {}",
                    approved.user_id, approved.user_name, approved.platform
                ));
            }
        }
        PairingCommand::Revoke { platform, user } => {
            let removed = gateway
                .revoke_pairing(pb::RevokePairingRequest {
                    platform: platform.clone(),
                    user_id: user.clone(),
                })
                .await?
                .into_inner()
                .removed;
            if ctx.json {
                output::json(&json!({"platform": platform, "user_id": user, "removed": removed}));
            } else if removed {
                output::line(format!("revoked {user} on {platform}"));
            } else {
                return Err(CliError::new(format!("{user} is not paired on {platform}")));
            }
        }
    }
    Ok(())
}
