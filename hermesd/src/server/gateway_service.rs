//! The Gateway RPCs: how each platform's connection is doing, the pairing records (approve by
//! code, revoke), and the slash commands every client offers.

use std::{sync::Arc, time::SystemTime};

use hermes_proto::pb;
use tonic::{Request, Response, Status};

use super::convert::{self, timestamp};
use crate::{
    DaemonState,
    gateway::{self, HomeSource, LinkState, pairing},
    store::{self, PairingRow},
};

#[derive(Debug)]
pub struct GatewayService {
    pub state: Arc<DaemonState>,
}

fn when(at: Option<SystemTime>) -> Option<prost_types::Timestamp> {
    at.map(prost_types::Timestamp::from)
}

fn state_of(state: LinkState) -> pb::PlatformState {
    match state {
        LinkState::Disabled => pb::PlatformState::Disabled,
        LinkState::Connecting => pb::PlatformState::Connecting,
        LinkState::Connected => pb::PlatformState::Connected,
        LinkState::Retrying => pb::PlatformState::Retrying,
        LinkState::Fatal => pb::PlatformState::Fatal,
    }
}

fn pairing_of(row: PairingRow) -> pb::Pairing {
    pb::Pairing {
        platform: row.platform,
        user_id: row.user_id,
        user_name: row.user_name,
        approved: row.approved,
        requested_at: Some(timestamp(row.requested_at)),
        expires_at: row.expires_at.map(timestamp),
        approved_at: row.approved_at.map(timestamp),
    }
}

fn platform_name(name: &str) -> Result<String, Status> {
    let name = name.trim().to_lowercase();
    let known = crate::config::settings::CHAT_PLATFORMS.map(|keys| keys.name);
    match name.as_str() {
        known_name if known.contains(&known_name) => Ok(name),
        "" => Err(Status::invalid_argument(format!(
            "say which platform ({})",
            known.join(", ")
        ))),
        other => Err(Status::invalid_argument(format!(
            "unknown platform {other:?}; hermesd's gateway has: {}",
            known.join(", ")
        ))),
    }
}

/// A chat (and thread) id as the platforms give them: Telegram's numbers (negative for groups)
/// and `@usernames`, Discord's snowflakes, Slack's `C0123ABCD` and thread timestamps — at most 64
/// letters, digits and `-_@.`, not starting with `.` (nothing a path or a key could misread).
fn checked_chat(chat_id: &str, thread_id: &str) -> Result<(String, String), Status> {
    let (chat_id, thread_id) = (chat_id.trim(), thread_id.trim());
    let id = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && !s.starts_with('.')
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'@' | b'.'))
    };
    if !id(chat_id) {
        return Err(Status::invalid_argument(format!(
            "{chat_id:?} is not a chat id: give the chat's id as the platform shows it (e.g. \
             123456789 or -1001234567890 on Telegram, a channel id on Discord or Slack)"
        )));
    }
    if !thread_id.is_empty() && !id(thread_id) {
        return Err(Status::invalid_argument(format!(
            "{thread_id:?} is not a thread id: a topic's number, a thread's id or timestamp"
        )));
    }
    Ok((chat_id.to_string(), thread_id.to_string()))
}

fn home_of(platform: &str, home: Option<(store::ChatPlace, HomeSource)>) -> pb::HomeChannel {
    let Some((place, source)) = home else {
        return pb::HomeChannel {
            platform: platform.to_string(),
            ..Default::default()
        };
    };
    pb::HomeChannel {
        platform: place.platform,
        chat_id: place.chat_id,
        thread_id: place.thread_id,
        name: place.name,
        source: match source {
            HomeSource::Set => "set",
            HomeSource::Env => "env",
        }
        .into(),
    }
}

#[tonic::async_trait]
impl pb::gateway_server::Gateway for GatewayService {
    async fn status(
        &self,
        _request: Request<pb::GatewayStatusRequest>,
    ) -> Result<Response<pb::GatewayStatusResponse>, Status> {
        let platforms = self
            .state
            .gateway
            .status()
            .into_iter()
            .map(|s| pb::PlatformStatus {
                platform: s.platform,
                state: state_of(s.state) as i32,
                connected_since: when(s.connected_since),
                last_received_at: when(s.last_received_at),
                last_sent_at: when(s.last_sent_at),
                reconnects: s.reconnects,
                last_error: s.last_error,
            })
            .collect();
        Ok(Response::new(pb::GatewayStatusResponse { platforms }))
    }

    async fn list_pairings(
        &self,
        request: Request<pb::ListPairingsRequest>,
    ) -> Result<Response<pb::ListPairingsResponse>, Status> {
        let platform = request.into_inner().platform;
        let platform = (!platform.trim().is_empty())
            .then(|| platform_name(&platform))
            .transpose()?;
        let now = store::now_ms();
        let rows = self
            .state
            .store
            .read(move |conn| store::pairings(conn, platform.as_deref()))
            .await
            .map_err(convert::status)?;
        let pairings = rows
            .into_iter()
            .filter(|p| p.approved || p.expires_at.is_some_and(|e| e > now))
            .map(pairing_of)
            .collect();
        Ok(Response::new(pb::ListPairingsResponse { pairings }))
    }

    async fn approve_pairing(
        &self,
        request: Request<pb::ApprovePairingRequest>,
    ) -> Result<Response<pb::ApprovePairingResponse>, Status> {
        let request = request.into_inner();
        let platform = platform_name(&request.platform)?;
        let code = request.code;
        let approved = self
            .state
            .store
            .write(move |tx| Ok(pairing::approve(tx, &platform, &code, store::now_ms())))
            .await
            .map_err(convert::status)?;
        match approved {
            Ok(row) => {
                tracing::info!(platform = %row.platform, user = %row.user_id, "pairing approved");
                Ok(Response::new(pb::ApprovePairingResponse {
                    pairing: Some(pairing_of(row)),
                }))
            }
            Err(pairing::ApproveError::Store(e)) => Err(convert::status(e)),
            Err(e @ pairing::ApproveError::Locked(_)) => {
                Err(Status::resource_exhausted(e.to_string()))
            }
            Err(e) => Err(Status::not_found(e.to_string())),
        }
    }

    async fn revoke_pairing(
        &self,
        request: Request<pb::RevokePairingRequest>,
    ) -> Result<Response<pb::RevokePairingResponse>, Status> {
        let request = request.into_inner();
        let platform = platform_name(&request.platform)?;
        let user = request.user_id.trim().to_string();
        if user.is_empty() {
            return Err(Status::invalid_argument("say which user id to revoke"));
        }
        let removed = self
            .state
            .store
            .write(move |tx| store::delete_pairing(tx, &platform, &user))
            .await
            .map_err(convert::status)?;
        Ok(Response::new(pb::RevokePairingResponse { removed }))
    }

    async fn list_commands(
        &self,
        _request: Request<pb::ListCommandsRequest>,
    ) -> Result<Response<pb::ListCommandsResponse>, Status> {
        let commands = gateway::commands_offered(&self.state.runner)
            .await
            .into_iter()
            .map(|o| pb::SlashCommand {
                name: o.name,
                aliases: o.aliases,
                args: o.args,
                description: o.description,
                kind: if o.skill { "skill" } else { "builtin" }.into(),
                gateway: o.gateway,
                terminal: o.terminal,
            })
            .collect();
        Ok(Response::new(pb::ListCommandsResponse { commands }))
    }

    async fn list_homes(
        &self,
        _request: Request<pb::ListHomesRequest>,
    ) -> Result<Response<pb::ListHomesResponse>, Status> {
        let mut homes = Vec::new();
        for status in self.state.gateway.chat_status() {
            let home = gateway::home_with_source(&self.state.gateway, &status.platform);
            homes.push(home_of(&status.platform, home.await));
        }
        Ok(Response::new(pb::ListHomesResponse { homes }))
    }

    async fn set_home(
        &self,
        request: Request<pb::SetHomeRequest>,
    ) -> Result<Response<pb::SetHomeResponse>, Status> {
        let request = request.into_inner();
        let platform = platform_name(&request.platform)?;
        let (chat_id, thread_id) = checked_chat(&request.chat_id, &request.thread_id)?;
        let name = request.name.trim().chars().take(128).collect::<String>();
        let place = store::ChatPlace {
            platform,
            name: if name.is_empty() {
                chat_id.clone()
            } else {
                name
            },
            chat_id,
            thread_id,
            kind: String::new(),
            ..store::ChatPlace::default()
        };
        let stored = place.clone();
        self.state
            .store
            .write(move |tx| store::set_home(tx, &stored))
            .await
            .map_err(convert::status)?;
        tracing::info!(platform = %place.platform, chat = %place.chat_id, "home channel set");
        Ok(Response::new(pb::SetHomeResponse {
            home: Some(home_of(
                &place.platform,
                Some((place.clone(), HomeSource::Set)),
            )),
        }))
    }
}
