//! The gateway as senders outside a chat's reply reach it ([`Messenger`]): `send_message` and
//! cron delivery. A message goes only to a chat the gateway knows — the platform's home channel,
//! a chat that talked to it, or an allowed user's direct chat — so text the agent read cannot
//! send it to a stranger. It is recorded in the outbox (with the caller's record, in one
//! transaction) and delivered by the same code as replies.

use std::sync::{Arc, Weak};

use async_trait::async_trait;

use super::{Gateway, Link, LinkState, adapter::ChatRef, outbox, split};
use crate::store::{self, ChatPlace};
use crate::tools::messenger::{
    AlsoStore, Destination, KnownChat, Messenger, PlatformTargets, SendError, Sent, not_configured,
};

/// Recent chats listed per platform.
const LISTED_CHATS: usize = 20;
/// Messages one send may become; a longer text is cut, and says so.
pub const MAX_PIECES: usize = 16;

/// The gateway, held weakly (it holds the runner that holds the tools).
pub struct GatewayMessenger(pub Weak<Gateway>);

impl GatewayMessenger {
    fn gateway(&self) -> Result<Arc<Gateway>, String> {
        self.0
            .upgrade()
            .ok_or_else(|| "the gateway is stopping".to_string())
    }
}

#[async_trait]
impl Messenger for GatewayMessenger {
    fn has_platforms(&self) -> bool {
        self.0
            .upgrade()
            .is_some_and(|g| !g.runner.config().settings.gateway.running().is_empty())
    }

    async fn targets(&self) -> Vec<PlatformTargets> {
        let Ok(gateway) = self.gateway() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for status in gateway.chat_status() {
            let platform = status.platform.clone();
            let home = home(&gateway, &platform).await.map(|p| known(&p));
            let listed = platform.clone();
            let chats = gateway
                .runner
                .store
                .read(move |conn| store::recent_places(conn, &listed, LISTED_CHATS))
                .await
                .unwrap_or_default();
            out.push(PlatformTargets {
                platform,
                connected: status.state == LinkState::Connected,
                home,
                chats: chats.iter().map(known).collect(),
            });
        }
        out
    }

    async fn send(
        &self,
        to: &Destination,
        text: &str,
        also: Option<AlsoStore>,
    ) -> Result<Sent, SendError> {
        let gateway = self.gateway().map_err(SendError::Unavailable)?;
        let Some(link) = gateway.link(&to.platform) else {
            let known = crate::config::settings::CHAT_PLATFORMS.map(|keys| keys.name);
            return Err(if known.contains(&to.platform.as_str()) {
                SendError::Unavailable(not_configured(&to.platform))
            } else {
                SendError::Refused(format!(
                    "Unknown platform: {} (hermesd connects to: {})",
                    to.platform,
                    known.join(", ")
                ))
            });
        };
        let status = link.status.get();
        if status.state != LinkState::Connected {
            let why = if status.last_error.is_empty() {
                String::new()
            } else {
                format!("; last error: {}", status.last_error)
            };
            return Err(SendError::Unavailable(format!(
                "{} is not connected ({}{why}); see `hermesctl gateway status`",
                to.platform,
                status.state.as_str()
            )));
        }
        let (chat, used_home) = resolve(&gateway, to).await.map_err(SendError::Refused)?;
        let caps = link.adapter.capabilities();
        let mut pieces = split::split(text, caps.max_len, caps.measure);
        if pieces.len() > MAX_PIECES {
            let left = pieces.len() - (MAX_PIECES - 1);
            pieces.truncate(MAX_PIECES - 1);
            pieces.push(format!("(cut: {left} more messages were not sent)"));
        }
        let count = pieces.len();
        let rows = record(&gateway, &link, &chat, pieces, also)
            .await
            .map_err(|e| SendError::Refused(format!("the message could not be recorded: {e}")))?;
        let mut message_id = String::new();
        for row in rows {
            match outbox::deliver(&gateway, &link, row).await {
                Some(id) => message_id = id,
                None => {
                    let error = link.status.get().last_error;
                    return Err(SendError::Refused(format!(
                        "the message to {}:{} was not delivered: {error}",
                        to.platform, chat.chat_id
                    )));
                }
            }
        }
        Ok(Sent {
            platform: to.platform.clone(),
            chat_id: chat.chat_id,
            thread_id: chat.thread_id,
            message_id,
            pieces: count,
            home: used_home,
        })
    }

    fn connections(&self) -> tokio::sync::watch::Receiver<u64> {
        match self.0.upgrade() {
            Some(gateway) => gateway.connections.subscribe(),
            None => tokio::sync::watch::channel(0).1,
        }
    }
}

fn known(place: &ChatPlace) -> KnownChat {
    KnownChat {
        chat_id: place.chat_id.clone(),
        thread_id: place.thread_id.clone(),
        kind: place.kind.clone(),
        name: place.name.clone(),
    }
}

/// Where a platform's home channel comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HomeSource {
    /// `/sethome` in a chat, or `hermesctl gateway home`.
    Set,
    /// The platform's `*_HOME_CHANNEL` variable.
    Env,
}

/// The platform's home channel: the one set in a chat or with hermesctl, else the
/// `*_HOME_CHANNEL` variable.
pub async fn home(gateway: &Gateway, platform: &str) -> Option<ChatPlace> {
    home_with_source(gateway, platform)
        .await
        .map(|(place, _)| place)
}

/// [`home`], saying where it came from.
pub async fn home_with_source(
    gateway: &Gateway,
    platform: &str,
) -> Option<(ChatPlace, HomeSource)> {
    let wanted = platform.to_string();
    let stored = gateway
        .runner
        .store
        .read(move |conn| store::home(conn, &wanted))
        .await
        .ok()
        .flatten();
    if let Some(stored) = stored {
        return Some((stored, HomeSource::Set));
    }
    let config = gateway.runner.config();
    let home = config
        .settings
        .gateway
        .rules(platform)
        .home_channel
        .clone()?;
    let place = ChatPlace {
        platform: platform.to_string(),
        chat_id: home.chat_id,
        thread_id: home.thread_id,
        kind: String::new(),
        name: home.name,
        ..ChatPlace::default()
    };
    Some((place, HomeSource::Env))
}

/// The chat `to` names, and whether it is the home channel; refused unless the gateway knows it.
async fn resolve(gateway: &Arc<Gateway>, to: &Destination) -> Result<(ChatRef, bool), String> {
    let platform = to.platform.clone();
    let home = home(gateway, &platform).await;
    if to.chat.is_empty() {
        let Some(home) = home else {
            let variable = format!("{}_HOME_CHANNEL", platform.to_ascii_uppercase());
            return Err(format!(
                "No home channel set for {platform} to determine where to send the message. \
                 Either specify a chat directly with '{platform}:CHAT_ID', or set a home \
                 channel: send /sethome in the chat, run `hermesctl gateway home {platform} \
                 CHAT_ID`, or set {variable} in ~/.hermes/.env"
            ));
        };
        let chat = ChatRef {
            chat_id: home.chat_id,
            thread_id: home.thread_id,
        };
        return Ok((chat, true));
    }
    let chat_id = if to.names_an_id() {
        to.chat.clone()
    } else {
        by_name(gateway, &platform, &to.chat).await?
    };
    let is_home = home.as_ref().is_some_and(|h| h.chat_id == chat_id);
    let (wanted, id) = (platform.clone(), chat_id.clone());
    let talked = gateway
        .runner
        .store
        .read(move |conn| store::chat_is_known(conn, &wanted, &id))
        .await
        .map_err(|e| format!("cannot look up {platform}:{chat_id}: {e}"))?;
    // A user named in an allowlist (never through `*` or an allow-all switch).
    let access = gateway
        .runner
        .config()
        .settings
        .gateway
        .rules(&platform)
        .access
        .clone();
    let allowed_user = access
        .allowed
        .iter()
        .chain(&access.gateway_allowed)
        .any(|user| *user == chat_id);
    if !(is_home || talked || allowed_user) {
        return Err(format!(
            "{platform}:{chat_id} is not a chat hermesd knows: messages go only to the home \
             channel, chats that have talked to the agent, and allowed users. Use \
             send_message(action='list') to see the targets."
        ));
    }
    let chat = ChatRef {
        chat_id,
        thread_id: to.thread_id.clone(),
    };
    Ok((chat, false))
}

/// A recent chat's id by its name (case-insensitive, `#` ignored).
async fn by_name(gateway: &Gateway, platform: &str, name: &str) -> Result<String, String> {
    let wanted = platform.to_string();
    let places = gateway
        .runner
        .store
        .read(move |conn| store::recent_places(conn, &wanted, 200))
        .await
        .unwrap_or_default();
    let needle = name.trim_start_matches('#').to_lowercase();
    places
        .into_iter()
        .find(|p| !p.name.is_empty() && p.name.to_lowercase() == needle)
        .map(|p| p.chat_id)
        .ok_or_else(|| {
            format!(
                "Could not resolve '{name}' on {platform}. Use send_message(action='list') to \
                 see available targets."
            )
        })
}

/// Record `pieces` for `chat` with the caller's record, in one transaction.
async fn record(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    chat: &ChatRef,
    pieces: Vec<String>,
    also: Option<AlsoStore>,
) -> Result<Vec<store::OutboxRow>, store::StoreError> {
    let platform = link.platform();
    let chat = chat.clone();
    gateway
        .runner
        .store
        .write(move |tx| {
            if let Some(also) = also {
                also(tx)?;
            }
            outbox::record_rows(tx, platform, &chat, None, pieces)
        })
        .await
}
