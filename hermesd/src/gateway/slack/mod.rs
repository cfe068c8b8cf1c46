//! Slack: connect (`auth.test` for each workspace's bot token, then Socket Mode with the app
//! token, or the Events API's listener when the app has no Socket Mode), take what Slack
//! delivers as batches (each envelope acked, each request answered, only once its batch is
//! stored), and send: mrkdwn messages streamed by `chat.update`, Block Kit buttons, files by the
//! external upload flow, private files fetched with the bot token, a press's note as an
//! ephemeral message. Calls go out with the token of the channel's workspace, paced by each
//! method's tier.

mod api;
mod convert;
mod events;
mod limits;
mod memory;
mod mrkdwn;
mod outgoing;
mod socket;

use std::{
    sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard},
    time::Duration,
};

use serde_json::{Value, json};
use tokio::sync::{Mutex, oneshot};

pub use mrkdwn::to_mrkdwn;

use self::{
    api::{Args, WebApi},
    convert::{Context, Converted},
    memory::{Memory, Workspace},
};
use super::{
    adapter::{Adapter, Attachment, Batch, Capabilities, ChatRef, Outgoing, PlatformError},
    split::Measure,
};
use crate::{config::settings::SlackSettings, llm::HttpClient};

/// Slack's limit as Hermes keeps under it (Slack takes 40,000 characters).
pub const SLACK_MAX: usize = 39_000;
/// How long a wait for deliveries lasts before an empty batch goes back to the supervisor.
const IDLE: Duration = Duration::from_secs(25);

/// The Slack adapter.
pub struct Slack {
    settings: SlackSettings,
    api: Arc<WebApi>,
    memory: Arc<RwLock<Memory>>,
    commands: RwLock<Vec<String>>,
    socket: Mutex<Option<socket::Connection>>,
    events: Mutex<Option<events::Receiver>>,
}

impl std::fmt::Debug for Slack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slack")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Slack {
    pub fn new(settings: SlackSettings, client: HttpClient) -> Self {
        Self {
            api: Arc::new(WebApi::new(client, &settings.api_base, settings.pace_calls)),
            settings,
            memory: Arc::default(),
            commands: RwLock::default(),
            socket: Mutex::new(None),
            events: Mutex::new(None),
        }
    }

    fn memory(&self) -> RwLockReadGuard<'_, Memory> {
        self.memory.read().unwrap_or_else(|p| p.into_inner())
    }

    fn memory_mut(&self) -> RwLockWriteGuard<'_, Memory> {
        self.memory.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `url` is on Slack's file host (or the configured API's host), where the bot
    /// token may be shown.
    fn files_host(&self, url: &str) -> bool {
        let host = |u: &str| -> Option<(String, String)> {
            let uri: http::Uri = u.parse().ok()?;
            Some((uri.scheme_str()?.to_string(), uri.authority()?.to_string()))
        };
        let Some((scheme, authority)) = host(url) else {
            return false;
        };
        let slack = scheme == "https"
            && (authority == "slack.com" || authority.ends_with(".slack.com"))
            && !authority.contains('@');
        slack || host(&self.settings.api_base) == Some((scheme, authority))
    }

    /// One delivery as an update (`None`: not for the gateway), remembering what it taught.
    fn convert(&self, kind: &str, payload: &Value) -> Option<Converted> {
        let commands = self.commands.read().map(|c| c.clone()).unwrap_or_default();
        let memory = self.memory();
        let team = match payload["team_id"].as_str() {
            Some(team) => team,
            None => payload["team"]["id"].as_str().unwrap_or_default(),
        };
        let bot_user = memory
            .workspace(team)
            .map(|w| w.bot_user.clone())
            .unwrap_or_default();
        let bot_thread = |channel: &str, thread: &str| memory.bot_thread(channel, thread);
        let user_name = |user: &str| memory.name(team, user);
        let cx = Context {
            bot_user: &bot_user,
            commands: &commands,
            reply_in_thread: self.settings.reply_in_thread,
            dm_threads: self.settings.dm_threads,
            bot_thread: &bot_thread,
            user_name: &user_name,
        };
        let converted = match kind {
            "events_api" => convert::event_callback(payload, &cx),
            "interactive" => convert::block_actions(payload),
            "slash_commands" => convert::slash_command(payload, &cx),
            _ => None,
        };
        let unnamed = converted
            .as_ref()
            .filter(|c| c.inbound.user_name == c.inbound.user_id && c.inbound.press.is_none())
            .map(|c| (c.team.clone(), c.inbound.user_id.clone()));
        drop(memory);
        if let Some(c) = &converted {
            let mut memory = self.memory_mut();
            memory.note_channel(&c.inbound.chat.chat_id, &c.team);
            if let Some(thread) = &c.mentioned_thread {
                memory.note_thread(&c.inbound.chat.chat_id, thread);
            }
        }
        if let Some((team, user)) = unnamed {
            self.learn_name(team, user);
        }
        converted
    }

    /// Look up a user's display name in the background (`users.info`), for the next message.
    fn learn_name(&self, team: String, user: String) {
        let Some(token) = self.memory().workspace(&team).map(|w| w.token.clone()) else {
            return;
        };
        // Asked once: a failure is remembered as the id itself.
        self.memory_mut().note_name(&team, &user, &user);
        let (api, memory) = (Arc::clone(&self.api), Arc::clone(&self.memory));
        tokio::spawn(async move {
            let args = json!({"user": user});
            let Ok(answer) = api
                .call("users.info", &token, &team, Args::Json(&args))
                .await
            else {
                return;
            };
            let profile = &answer["user"]["profile"];
            let name = [
                &profile["display_name"],
                &profile["real_name"],
                &answer["user"]["name"],
            ]
            .into_iter()
            .filter_map(Value::as_str)
            .find(|n| !n.trim().is_empty())
            .map(|n| n.chars().take(128).collect::<String>());
            if let Some(name) = name {
                let mut memory = memory.write().unwrap_or_else(|p| p.into_inner());
                memory.note_name(&team, &user, &name);
            }
        });
    }

    /// Add `delivery` (of `kind`) to `batch` with the word that it was stored.
    fn add(&self, batch: &mut Batch, kind: &str, payload: &Value, stored: oneshot::Sender<()>) {
        batch.stored.push(stored);
        if let Some(converted) = self.convert(kind, payload) {
            batch.updates.push(converted.inbound);
        }
    }

    async fn socket_batch(&self) -> Result<Batch, PlatformError> {
        let mut guard = self.socket.lock().await;
        loop {
            let connection = match guard.as_mut() {
                Some(connection) => connection,
                None => guard.insert(
                    socket::open(
                        &self.api,
                        &self.settings.app_token,
                        self.settings.ping_interval,
                    )
                    .await?,
                ),
            };
            let first = match tokio::time::timeout(IDLE, connection.incoming.recv()).await {
                Err(_) => return Ok(Batch::default()),
                Ok(first) => first,
            };
            let mut batch = Batch::default();
            let mut next = first;
            let mut ended = None;
            while let Some(incoming) = next.take() {
                match incoming {
                    socket::Incoming::Ended { why, refresh } => {
                        ended = Some((why, refresh));
                        break;
                    }
                    socket::Incoming::Envelope { id, kind, payload } => {
                        let (stored, told) = oneshot::channel();
                        let acks = connection.acks.clone();
                        let response = (kind == "slash_commands").then(|| {
                            let command = payload["command"].as_str().unwrap_or("/hermes");
                            json!({"response_type": "ephemeral", "text": format!("Running `{command}`…")})
                        });
                        tokio::spawn(async move {
                            if told.await.is_ok() {
                                let _ = acks.send((id, response));
                            }
                        });
                        self.add(&mut batch, &kind, &payload, stored);
                    }
                }
                next = connection.incoming.try_recv().ok();
            }
            let Some((why, refresh)) = ended else {
                return Ok(batch);
            };
            // What this batch holds is acked on no connection: Slack delivers it again, and
            // the store takes it once.
            *guard = None;
            if !batch.stored.is_empty() {
                return Ok(batch);
            }
            if !refresh {
                return Err(PlatformError::Unavailable(format!("Socket Mode: {why}")));
            }
            tracing::info!("slack: {why}; reconnecting");
        }
    }

    async fn events_batch(&self) -> Result<Batch, PlatformError> {
        let mut guard = self.events.lock().await;
        let Some(receiver) = guard.as_mut() else {
            return Err(PlatformError::Unavailable(
                "the Events API listener is not running".into(),
            ));
        };
        let first = match tokio::time::timeout(IDLE, receiver.rx.recv()).await {
            Err(_) => return Ok(Batch::default()),
            Ok(None) => {
                return Err(PlatformError::Unavailable(
                    "the Events API listener stopped".into(),
                ));
            }
            Ok(Some(first)) => first,
        };
        let mut batch = Batch::default();
        let mut next = Some(first);
        while let Some((kind, payload, stored)) = next.take() {
            self.add(&mut batch, &kind, &payload, stored);
            next = receiver.rx.try_recv().ok();
        }
        Ok(batch)
    }
}

#[async_trait::async_trait]
impl Adapter for Slack {
    fn platform(&self) -> &'static str {
        "slack"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            max_len: SLACK_MAX,
            measure: Measure::Source,
            edits: true,
            buttons: true,
        }
    }

    fn identity(&self) -> &str {
        // Hermes locks Socket Mode on the app token: one connection set per app.
        if self.settings.app_token.is_empty() {
            self.settings.primary_token()
        } else {
            &self.settings.app_token
        }
    }

    async fn connect(&self, commands: &[(String, String)]) -> Result<(), PlatformError> {
        if let Ok(mut names) = self.commands.write() {
            *names = commands.iter().map(|(name, _)| name.clone()).collect();
        }
        let mut workspaces = Vec::new();
        for token in &self.settings.bot_tokens {
            let me = self
                .api
                .call("auth.test", token, "auth", Args::None)
                .await?;
            let team = me["team_id"].as_str().unwrap_or_default().to_string();
            tracing::info!(
                team = %team,
                workspace = me["team"].as_str().unwrap_or_default(),
                "slack: the bot token is accepted"
            );
            workspaces.push(Workspace {
                team,
                token: token.clone(),
                bot_user: me["user_id"].as_str().unwrap_or_default().to_string(),
            });
        }
        self.memory_mut().workspaces = workspaces;
        if self.settings.app_token.is_empty() {
            let mut receiver = self.events.lock().await;
            if receiver.is_none() {
                *receiver = Some(
                    events::Receiver::start(
                        &self.settings.events_listen,
                        &self.settings.signing_secret,
                    )
                    .await?,
                );
            }
            return Ok(());
        }
        let connection = socket::open(
            &self.api,
            &self.settings.app_token,
            self.settings.ping_interval,
        )
        .await?;
        *self.socket.lock().await = Some(connection);
        Ok(())
    }

    async fn next_batch(&self, _offset: Option<i64>) -> Result<Batch, PlatformError> {
        if self.settings.app_token.is_empty() {
            self.events_batch().await
        } else {
            self.socket_batch().await
        }
    }

    fn poll_deadline(&self) -> Duration {
        IDLE.max(self.settings.ping_interval * 3) + Duration::from_secs(15)
    }

    async fn send(&self, chat: &ChatRef, message: &Outgoing) -> Result<String, PlatformError> {
        match self.post(chat, message, true).await {
            Err(PlatformError::BadMarkup(why)) => {
                tracing::debug!(%why, "slack: the blocks were refused; sending the text alone");
                self.post(chat, message, false).await
            }
            other => other,
        }
    }

    async fn edit(
        &self,
        chat: &ChatRef,
        message_id: &str,
        message: &Outgoing,
    ) -> Result<(), PlatformError> {
        match self.update(chat, message_id, message, true).await {
            Err(PlatformError::BadMarkup(_)) => self.update(chat, message_id, message, false).await,
            other => other,
        }
    }

    async fn typing(&self, _chat: &ChatRef) -> Result<(), PlatformError> {
        // A Slack bot has no typing indicator outside assistant threads.
        Ok(())
    }

    async fn answer_press(&self, press_id: &str, note: &str) -> Result<(), PlatformError> {
        // The press itself was acknowledged with its envelope; a note goes to the presser alone.
        let mut parts = press_id.split(' ');
        let (_team, channel, user) = (parts.next(), parts.next(), parts.next());
        let thread = parts.next().unwrap_or_default();
        let (Some(channel), Some(user)) = (channel, user) else {
            return Ok(());
        };
        if note.is_empty() {
            return Ok(());
        }
        let mut args = json!({"channel": channel, "user": user, "text": to_mrkdwn(note)});
        if !thread.is_empty() {
            args["thread_ts"] = json!(thread);
        }
        self.call_for(channel, "chat.postEphemeral", &args)
            .await
            .map(drop)
    }

    async fn send_file(
        &self,
        chat: &ChatRef,
        path: &std::path::Path,
        _as_voice: bool,
    ) -> Result<String, PlatformError> {
        self.upload(chat, path).await
    }

    async fn fetch_file(
        &self,
        attachment: &Attachment,
        max_bytes: u64,
    ) -> Result<Vec<u8>, PlatformError> {
        if attachment.size > max_bytes {
            return Err(PlatformError::Rejected(format!(
                "the {} is {} bytes; the limit is {max_bytes}",
                attachment.kind, attachment.size
            )));
        }
        let (team, url) = convert::file_url(&attachment.file_id)
            .ok_or_else(|| PlatformError::Rejected("not a Slack file".into()))?;
        if !self.files_host(&url) {
            // The bot token goes only where Slack keeps files.
            return Err(PlatformError::Rejected("the file is not on Slack".into()));
        }
        let token = self
            .memory()
            .workspace(team)
            .map(|w| w.token.clone())
            .ok_or_else(|| PlatformError::Rejected("no Slack workspace is connected".into()))?;
        self.api.download(&url, &token, max_bytes).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bot_token_goes_only_to_slacks_file_hosts_or_the_configured_api() {
        let settings = SlackSettings {
            bot_tokens: vec!["xoxb-1".into()],
            app_token: String::new(),
            api_base: "http://127.0.0.1:4000/api".into(),
            signing_secret: String::new(),
            events_listen: String::new(),
            reply_in_thread: true,
            dm_threads: true,
            ping_interval: Duration::from_secs(10),
            pace_calls: true,
        };
        let slack = Slack::new(settings, HttpClient::new(Duration::from_secs(1)).unwrap());
        assert!(slack.files_host("https://files.slack.com/files-pri/T1-F1/download/a.png"));
        assert!(slack.files_host("http://127.0.0.1:4000/files-pri/T1-F1/a.png"));
        assert!(!slack.files_host("http://127.0.0.1:4001/files-pri/T1-F1/a.png"));
        assert!(!slack.files_host("https://evil.example/slack.com/a.png"));
        assert!(
            !slack.files_host("http://files.slack.com/a.png"),
            "not over plain HTTP"
        );
        assert!(!slack.files_host("https://x@files.slack.com.evil.example/a"));
    }
}
