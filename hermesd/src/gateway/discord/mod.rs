//! Discord, a gateway platform: a bot token, the Gateway websocket for what arrives
//! (`connection.rs` owns the socket and its heartbeats; `session.rs` identifies or resumes and
//! turns dispatches into inbound updates, `convert.rs` reads them, `channels.rs` knows which
//! channel is a thread of which) and the REST API for what goes out (`rest.rs`, within the
//! rate-limit buckets of `limits.rs`): messages with Markdown as is and buttons, edits, typing, files,
//! interaction answers, uploads, downloads and the application commands (`outgoing.rs`), and
//! the threads Hermes opens on the messages it answers in a channel (`threads.rs`).

mod channels;
mod connection;
mod convert;
mod limits;
mod outgoing;
mod protocol;
mod rest;
mod session;
mod threads;

use std::{sync::Arc, time::Duration};

use serde_json::json;

pub use outgoing::DISCORD_MAX;

use self::{
    channels::Channels,
    connection::Live,
    convert::Me,
    rest::{Body, Rest, Verb},
    session::Session,
    threads::Replies,
};
use super::adapter::{Adapter, Attachment, Capabilities, ChatRef, Outgoing, PlatformError};
use crate::{config::settings::DiscordSettings, llm::HttpClient};

/// Discord's largest upload for a bot without boosts.
const MAX_UPLOAD_BYTES: u64 = 10 * 1024 * 1024;

/// Channels remembered as written in, at most.
const MAX_WRITTEN: usize = 10_000;

/// The connection's state: the live connection, and the session to resume with the sequence
/// number of the last batch stored.
#[derive(Debug, Default)]
struct State {
    live: Option<Live>,
    session: Option<Session>,
    stored_seq: Option<i64>,
    /// Resumes that failed in a row; after [`session::MAX_RESUME_FAILURES`] the session is
    /// given up and the next connection identifies afresh.
    resume_failures: u32,
}

/// The Discord adapter.
pub struct Discord {
    settings: DiscordSettings,
    rest: Arc<Rest>,
    state: tokio::sync::Mutex<State>,
    me: std::sync::RwLock<Me>,
    channels: std::sync::Mutex<Channels>,
    /// Channels and threads the bot wrote in (a thread it is in takes messages without a
    /// mention, unless `thread_require_mention`); bounded.
    written: std::sync::Mutex<std::collections::HashSet<String>>,
    /// The application commands last registered (not sent again while they stay the same).
    registered: std::sync::Mutex<Option<serde_json::Value>>,
    /// Recent messages that are replies (answered without a thread of their own); bounded.
    replies: std::sync::Mutex<Replies>,
    /// The free-response channels (answered without a thread, as in Hermes).
    free_channels: Vec<String>,
}

impl std::fmt::Debug for Discord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Discord")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Discord {
    pub fn new(settings: DiscordSettings, client: HttpClient) -> Self {
        let rest = Arc::new(Rest::new(client, &settings.api_base, &settings.token));
        Self {
            settings,
            rest,
            state: tokio::sync::Mutex::default(),
            me: std::sync::RwLock::default(),
            channels: std::sync::Mutex::default(),
            written: std::sync::Mutex::default(),
            registered: std::sync::Mutex::default(),
            replies: std::sync::Mutex::default(),
            free_channels: Vec::new(),
        }
    }

    /// The adapter, told the platform's free-response channels (ids, names or `#names`; `*`:
    /// all), where Hermes opens no threads.
    pub fn with_free_response(mut self, channels: Vec<String>) -> Self {
        self.free_channels = channels;
        self
    }

    fn me(&self) -> Me {
        match self.me.read() {
            Ok(me) => me.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn set_me(&self, change: impl FnOnce(&mut Me)) {
        match self.me.write() {
            Ok(mut me) => change(&mut me),
            Err(poisoned) => change(&mut poisoned.into_inner()),
        }
    }

    fn with_channels<T>(&self, f: impl FnOnce(&mut Channels) -> T) -> T {
        match self.channels.lock() {
            Ok(mut known) => f(&mut known),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// Note that the bot wrote in `channel`.
    fn note_written(&self, channel: &str) {
        let mut written = match self.written.lock() {
            Ok(w) => w,
            Err(poisoned) => poisoned.into_inner(),
        };
        if written.len() >= MAX_WRITTEN && !written.contains(channel) {
            written.clear();
        }
        written.insert(channel.to_string());
    }

    /// Whether the bot wrote in `channel`.
    fn wrote_in(&self, channel: &str) -> bool {
        match self.written.lock() {
            Ok(w) => w.contains(channel),
            Err(poisoned) => poisoned.into_inner().contains(channel),
        }
    }

    /// Register the command menu as the application's commands (in the guild the settings
    /// name, else globally), unless they are what was registered last or sync is off.
    async fn register(&self, commands: &[(String, String)]) {
        let application = self.me().application_id;
        if !self.settings.sync_commands || application.is_empty() || commands.is_empty() {
            return;
        }
        let list = outgoing::application_commands(commands);
        let same = match self.registered.lock() {
            Ok(last) => last.as_ref() == Some(&list),
            Err(_) => false,
        };
        if same {
            return;
        }
        let path = match self.settings.command_guild.as_str() {
            "" => format!("/applications/{application}/commands"),
            guild => format!("/applications/{application}/guilds/{guild}/commands"),
        };
        match self
            .rest
            .call(Verb::Put, &path, Body::Json(list.clone()))
            .await
        {
            Ok(_) => {
                if let Ok(mut last) = self.registered.lock() {
                    *last = Some(list);
                }
            }
            // The commands are a convenience: typed commands work without them.
            Err(e) => {
                tracing::warn!(error = %e, "discord: the application commands were not registered")
            }
        }
    }

    async fn post_message(&self, chat: &ChatRef, body: Body) -> Result<String, PlatformError> {
        let channel = outgoing::channel_of(chat);
        let path = format!("/channels/{channel}/messages");
        let sent = self.rest.call(Verb::Post, &path, body).await?;
        self.note_written(channel);
        sent["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| PlatformError::Unavailable("Discord named no message id".into()))
    }
}

#[async_trait::async_trait]
impl Adapter for Discord {
    fn platform(&self) -> &'static str {
        "discord"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            max_len: DISCORD_MAX,
            // Discord counts characters of the Markdown as sent; UTF-16 units are never fewer.
            measure: super::split::Measure::Source,
            edits: true,
            buttons: true,
        }
    }

    fn identity(&self) -> &str {
        &self.settings.token
    }

    async fn connect(&self, commands: &[(String, String)]) -> Result<(), PlatformError> {
        self.open().await?;
        self.register(commands).await;
        Ok(())
    }

    async fn next_batch(
        &self,
        offset: Option<i64>,
    ) -> Result<super::adapter::Batch, PlatformError> {
        self.take_batch(offset).await
    }

    fn poll_deadline(&self) -> Duration {
        // A poll answers after at most `IDLE` without events, plus the lookups of a batch's
        // channels.
        session::IDLE + Duration::from_secs(60)
    }

    async fn send(&self, chat: &ChatRef, message: &Outgoing) -> Result<String, PlatformError> {
        self.post_message(chat, Body::Json(outgoing::create(message)))
            .await
    }

    async fn edit(
        &self,
        chat: &ChatRef,
        message_id: &str,
        message: &Outgoing,
    ) -> Result<(), PlatformError> {
        let path = format!(
            "/channels/{}/messages/{message_id}",
            outgoing::channel_of(chat)
        );
        self.rest
            .call(Verb::Patch, &path, Body::Json(outgoing::edit(message)))
            .await
            .map(drop)
    }

    async fn typing(&self, chat: &ChatRef) -> Result<(), PlatformError> {
        let path = format!("/channels/{}/typing", outgoing::channel_of(chat));
        self.rest
            .call(Verb::Post, &path, Body::None)
            .await
            .map(drop)
    }

    async fn open_thread(
        &self,
        chat: &ChatRef,
        message_id: &str,
        text: &str,
    ) -> Result<Option<String>, PlatformError> {
        self.auto_thread(chat, message_id, text).await
    }

    async fn answer_press(&self, press_id: &str, note: &str) -> Result<(), PlatformError> {
        // The press was acknowledged when it was stored; a note follows as a message only the
        // presser sees.
        if note.is_empty() {
            return Ok(());
        }
        let Some((_, token)) = press_id.split_once(':') else {
            return Err(PlatformError::Rejected("not a Discord press id".into()));
        };
        let application = self.me().application_id;
        let path = format!("/webhooks/{application}/{token}");
        let body = json!({"content": outgoing::content(note), "flags": 64,
            "allowed_mentions": {"parse": []}});
        self.rest
            .call(Verb::Post, &path, Body::Json(body))
            .await
            .map(drop)
    }

    async fn send_file(
        &self,
        chat: &ChatRef,
        path: &std::path::Path,
        _as_voice: bool,
    ) -> Result<String, PlatformError> {
        let file_name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("audio")
            .to_string();
        let bytes = read_upload(path).await?;
        let mut form = crate::voice::multipart::Form::new();
        let payload = json!({"attachments": [{"id": 0, "filename": file_name}]});
        form.text("payload_json", &payload.to_string());
        form.file(
            "files[0]",
            &file_name,
            crate::voice::mime_of(&file_name),
            &bytes,
        );
        let (body, content_type) = form.finish();
        self.post_message(chat, Body::Form(body.into(), content_type))
            .await
    }

    async fn fetch_file(
        &self,
        attachment: &Attachment,
        max_bytes: u64,
    ) -> Result<Vec<u8>, PlatformError> {
        let max_bytes = match self.settings.max_attachment_bytes {
            0 => max_bytes,
            own => own.min(max_bytes),
        };
        let (url, size) = convert::decode_file(&attachment.file_id)
            .filter(|(url, _)| url.starts_with("https://") || url.starts_with("http://"))
            .ok_or_else(|| PlatformError::Rejected("not a Discord attachment".into()))?;
        let size = size.max(attachment.size);
        if size > max_bytes {
            return Err(PlatformError::Rejected(format!(
                "the {} is {size} bytes; the limit is {max_bytes}",
                attachment.kind
            )));
        }
        self.rest.download(&url, max_bytes).await
    }
}

/// The bytes of a file to upload: a plain file of at most [`MAX_UPLOAD_BYTES`].
async fn read_upload(path: &std::path::Path) -> Result<Vec<u8>, PlatformError> {
    let meta = tokio::fs::symlink_metadata(path)
        .await
        .map_err(|e| PlatformError::Rejected(format!("cannot read {}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(PlatformError::Rejected(format!(
            "{} is not a plain file",
            path.display()
        )));
    }
    if meta.len() > MAX_UPLOAD_BYTES {
        return Err(PlatformError::Rejected(format!(
            "{} is {} bytes; Discord takes at most {MAX_UPLOAD_BYTES}",
            path.display(),
            meta.len()
        )));
    }
    tokio::fs::read(path)
        .await
        .map_err(|e| PlatformError::Rejected(format!("cannot read {}: {e}", path.display())))
}
