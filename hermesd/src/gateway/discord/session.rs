//! The adapter's side of the Gateway session: [`Discord::open`] checks the token, then resumes
//! the session (on its `resume_gateway_url`, from the sequence number of the last batch the
//! daemon stored, so whatever was not stored is replayed) or identifies afresh (URL from
//! `GET /gateway/bot`); [`Discord::take_batch`] takes the dispatches the connection task
//! buffered, and when the task has ended, says why (a fatal close code stops the platform; any
//! other end lets the supervisor connect again). Dispatches become inbound updates here, with
//! the place of each message resolved (learnt channels, else `GET /channels/{id}`) and each
//! interaction acknowledged within Discord's 3 s once its batch is stored.

use std::{sync::Arc, time::Duration};

use serde_json::Value;

use super::{
    Discord,
    channels::Channel,
    connection::{self, Began, Dispatch, Start},
    convert::{self, Place},
    protocol::Ending,
    rest::{Body, Verb},
};
use crate::gateway::adapter::{Batch, ChatKind, ChatRef, PlatformError};

/// How long a poll waits for an event before answering with none (Discord is quiet when
/// nobody talks; the watchdog's deadline is well past this).
pub const IDLE: Duration = Duration::from_secs(25);
/// Failed resumes in a row before the session is given up (its resume URL may be gone).
pub const MAX_RESUME_FAILURES: u32 = 3;
/// Dispatches taken per batch.
const MAX_BATCH: usize = 100;

/// A session that can be resumed.
#[derive(Debug, Clone)]
pub struct Session {
    pub id: String,
    pub resume_url: String,
}

/// What a connection's end means, as the platform error the supervisor acts on.
fn to_error(ending: &Ending) -> PlatformError {
    match ending {
        Ending::Fatal(why) => PlatformError::Fatal(why.clone()),
        other => PlatformError::Unavailable(other.reason().to_string()),
    }
}

impl Discord {
    /// Connect: the token checked, then the session resumed or a new one identified.
    pub(super) async fn open(&self) -> Result<(), PlatformError> {
        let mut state = self.state.lock().await;
        // A connection still running (its poll was abandoned) is dropped: this one replaces it.
        state.live = None;
        let user = self.rest.call(Verb::Get, "/users/@me", Body::None).await?;
        if let Some(id) = user["id"].as_str() {
            self.set_me(|me| me.id = id.to_string());
        }
        let resume = state
            .session
            .clone()
            .zip(state.stored_seq)
            .filter(|(session, _)| !session.resume_url.is_empty());
        let opened = match &resume {
            Some((session, seq)) => {
                let start = Start::Resume {
                    session_id: &session.id,
                    seq: *seq,
                };
                connection::open(&session.resume_url, &self.settings.token, start).await
            }
            None => {
                let gateway = self
                    .rest
                    .call(Verb::Get, "/gateway/bot", Body::None)
                    .await?;
                let url = gateway["url"].as_str().unwrap_or_default();
                if url.is_empty() {
                    return Err(PlatformError::Unavailable(
                        "GET /gateway/bot named no Gateway URL".into(),
                    ));
                }
                connection::open(url, &self.settings.token, Start::Identify).await
            }
        };
        let (live, began) = match opened {
            Ok(opened) => opened,
            Err(ending) => {
                if resume.is_some() {
                    state.resume_failures += 1;
                }
                let given_up = state.resume_failures >= MAX_RESUME_FAILURES;
                if matches!(ending, Ending::Reidentify(_)) || given_up {
                    state.session = None;
                    state.stored_seq = None;
                    state.resume_failures = 0;
                }
                return Err(to_error(&ending));
            }
        };
        state.resume_failures = 0;
        match began {
            Began::Ready {
                session_id,
                resume_url,
                user_id,
                user_name,
                application_id,
            } => {
                tracing::info!(bot = %user_name, "discord: a new Gateway session began");
                state.session = Some(Session {
                    id: session_id,
                    resume_url,
                });
                state.stored_seq = None;
                self.set_me(|me| {
                    if !user_id.is_empty() {
                        me.id = user_id;
                    }
                    me.application_id = application_id;
                });
            }
            Began::Resumed => tracing::info!("discord: the Gateway session was resumed"),
        }
        state.live = Some(live);
        Ok(())
    }

    /// The next batch of dispatches after the stored `offset` (a sequence number).
    pub(super) async fn take_batch(&self, offset: Option<i64>) -> Result<Batch, PlatformError> {
        let dispatches = {
            let mut state = self.state.lock().await;
            if let Some(offset) = offset {
                state.stored_seq = Some(state.stored_seq.map_or(offset, |s| s.max(offset)));
            }
            let Some(live) = state.live.as_mut() else {
                return Err(PlatformError::Unavailable("not connected".into()));
            };
            let first = match tokio::time::timeout(IDLE, live.events.recv()).await {
                Err(_) => return Ok(Batch::default()),
                Ok(Some(first)) => first,
                Ok(None) => {
                    let ending = match state.live.take() {
                        Some(live) => live.task.await.unwrap_or_else(|e| {
                            Ending::Resume(format!("the Discord connection task failed: {e}"))
                        }),
                        None => Ending::Resume("the connection ended".into()),
                    };
                    if matches!(ending, Ending::Reidentify(_)) {
                        state.session = None;
                        state.stored_seq = None;
                    }
                    return Err(to_error(&ending));
                }
            };
            let mut dispatches = vec![first];
            while dispatches.len() < MAX_BATCH {
                match live.events.try_recv() {
                    Ok(next) => dispatches.push(next),
                    Err(_) => break,
                }
            }
            dispatches
        };
        let mut batch = Batch::default();
        for dispatch in dispatches {
            batch.next_offset = Some(
                batch
                    .next_offset
                    .map_or(dispatch.seq, |s| s.max(dispatch.seq)),
            );
            self.take_dispatch(dispatch, &mut batch).await;
        }
        Ok(batch)
    }

    async fn take_dispatch(&self, dispatch: Dispatch, batch: &mut Batch) {
        self.with_channels(|known| known.learn(&dispatch.name, &dispatch.data));
        let me = self.me();
        match dispatch.name.as_str() {
            "MESSAGE_CREATE" => {
                let data = &dispatch.data;
                if !me.id.is_empty() && data["author"]["id"].as_str() == Some(me.id.as_str()) {
                    // The bot's own message: a thread it writes in is one it is in.
                    if let Some(channel) = data["channel_id"].as_str() {
                        self.note_written(channel);
                    }
                    return;
                }
                let Some((channel, guild)) = convert::wanted_message(&dispatch.data, &me) else {
                    return;
                };
                if data["type"].as_u64() == Some(convert::REPLY) {
                    // Answered where it was written: no thread of its own (as in Hermes).
                    if let Some(id) = data["id"].as_str() {
                        self.note_reply(id);
                    }
                }
                let author = &dispatch.data["author"];
                let dm_name = author["global_name"]
                    .as_str()
                    .or(author["username"].as_str())
                    .unwrap_or_default();
                let place = self.place(channel, guild, &Value::Null, dm_name).await;
                batch
                    .updates
                    .extend(convert::message(&dispatch.data, &me, place));
            }
            "INTERACTION_CREATE" => {
                let Some((channel, guild, hint)) = convert::interaction_place(&dispatch.data)
                else {
                    return;
                };
                let user = &dispatch.data["user"];
                let dm_name = user["username"].as_str().unwrap_or_default();
                let place = self.place(channel, guild, hint, dm_name).await;
                let Some((inbound, ack)) = convert::interaction(&dispatch.data, place) else {
                    return;
                };
                batch.updates.push(inbound);
                let (stored, told) = tokio::sync::oneshot::channel();
                batch.stored.push(stored);
                let rest = Arc::clone(&self.rest);
                tokio::spawn(async move {
                    // Only once stored: an interaction not taken is not acknowledged (its
                    // replay after a resume gets the answer).
                    if told.await.is_err() {
                        return;
                    }
                    let path = format!("/interactions/{}/{}/callback", ack.id, ack.token);
                    if let Err(e) = rest.call(Verb::Post, &path, Body::Json(ack.response)).await {
                        tracing::warn!(error = %e, "discord: an interaction was not acknowledged");
                    }
                });
            }
            _ => {}
        }
    }

    /// Where a message in `channel_id` (of guild `guild_id`; none: a DM) was written.
    async fn place(&self, channel_id: &str, guild_id: &str, hint: &Value, dm_name: &str) -> Place {
        if guild_id.is_empty() {
            return Place {
                kind: ChatKind::Dm,
                chat: ChatRef {
                    chat_id: channel_id.to_string(),
                    thread_id: String::new(),
                },
                chat_name: dm_name.chars().take(128).collect(),
                in_my_thread: false,
            };
        }
        let channel = self.channel(channel_id, guild_id, hint).await;
        let guild = self.with_channels(|known| known.guild_name(guild_id).to_string());
        let (chat, chat_name) = if channel.parent_id.is_empty() {
            let name = titled(&guild, &channel.name, channel_id);
            (
                ChatRef {
                    chat_id: channel_id.to_string(),
                    thread_id: String::new(),
                },
                name,
            )
        } else {
            let parent = self
                .channel(&channel.parent_id, guild_id, &Value::Null)
                .await;
            let name = format!(
                "{} / {}",
                titled(&guild, &parent.name, &channel.parent_id),
                channel.name
            );
            (
                ChatRef {
                    chat_id: channel.parent_id.clone(),
                    thread_id: channel_id.to_string(),
                },
                name,
            )
        };
        let in_my_thread = !chat.thread_id.is_empty() && self.wrote_in(&chat.thread_id);
        Place {
            kind: ChatKind::Group,
            chat,
            chat_name: chat_name.chars().take(128).collect(),
            in_my_thread,
        }
    }

    /// The channel `id`: learnt, sent along (`hint`), or asked of the REST API (a channel
    /// that cannot be looked up counts as a plain channel).
    async fn channel(&self, id: &str, guild_id: &str, hint: &Value) -> Channel {
        if let Some(known) = self.with_channels(|known| known.get(id).cloned()) {
            return known;
        }
        let found = if hint.is_object() {
            Channel::from_json(hint, guild_id)
        } else {
            match self
                .rest
                .call(Verb::Get, &format!("/channels/{id}"), Body::None)
                .await
            {
                Ok(json) => Channel::from_json(&json, guild_id),
                Err(e) => {
                    tracing::debug!(error = %e, "discord: a channel could not be looked up");
                    None
                }
            }
        };
        let (_, channel) = found.unwrap_or_else(|| {
            (
                id.to_string(),
                Channel {
                    guild_id: guild_id.to_string(),
                    ..Channel::default()
                },
            )
        });
        self.with_channels(|known| known.insert(id.to_string(), channel.clone()));
        channel
    }
}

/// `Guild / #channel`, with the id for a name not known.
fn titled(guild: &str, channel: &str, id: &str) -> String {
    let channel = if channel.is_empty() { id } else { channel };
    if guild.is_empty() {
        format!("#{channel}")
    } else {
        format!("{guild} / #{channel}")
    }
}
