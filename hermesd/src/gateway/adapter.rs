//! What a chat platform is to the gateway: an adapter that connects, yields batches of inbound
//! updates, and sends, edits and shows typing, with its capabilities (message length, markup,
//! buttons) and its errors classified so the runner knows what to retry, what to wait for and
//! what is fatal.

use std::time::Duration;

/// A chat (and thread) messages go to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ChatRef {
    pub chat_id: String,
    /// Empty when the chat has no threads (topics).
    pub thread_id: String,
}

/// The kind of chat a message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatKind {
    Dm,
    Group,
    Channel,
}

impl ChatKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dm => "dm",
            Self::Group => "group",
            Self::Channel => "channel",
        }
    }
}

/// A button the user pressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ButtonPress {
    /// The platform's id of the press (answered to stop the client's spinner).
    pub id: String,
    pub data: String,
    /// The message holding the button.
    pub message_id: String,
}

/// How a message addresses bots, as its platform reads it (all false when it cannot tell).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Addressing {
    /// It names this bot (a mention, or a command addressed to it).
    pub mentions_me: bool,
    /// It answers a message of this bot.
    pub replies_to_me: bool,
    /// It names other bots by handle, and not this one.
    pub names_only_other_bots: bool,
    /// It is in a thread the bot started or answered in (Discord's threads).
    pub in_my_thread: bool,
}

/// A file attached to a message, fetched with [`Adapter::fetch_file`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// `photo`, `document`, `voice`, `audio` or `video`.
    pub kind: &'static str,
    pub file_id: String,
    /// The sender's name for it, when it had one.
    pub file_name: String,
    pub size: u64,
}

/// One inbound update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound {
    pub update_id: i64,
    pub chat: ChatRef,
    pub kind: ChatKind,
    /// Empty when the platform gave none (the message is then dropped: nobody to authorise).
    pub user_id: String,
    pub user_name: String,
    /// The chat's title (a DM's: the other person's name); empty when the platform gave none.
    pub chat_name: String,
    pub message_id: String,
    /// The text or caption; an edited message's new text.
    pub text: String,
    pub edited: bool,
    /// The text of the message this one replies to, if any.
    pub reply_to: Option<String>,
    pub attachments: Vec<Attachment>,
    pub press: Option<ButtonPress>,
    pub addressing: Addressing,
    /// The chat is a forum (a group with topics): a message without a topic is in General.
    pub in_forum: bool,
}

/// What one poll brought: updates to take, and the offset that confirms them.
#[derive(Debug, Default)]
pub struct Batch {
    pub updates: Vec<Inbound>,
    /// The platform offset after this batch (confirming it), when it moved.
    pub next_offset: Option<i64>,
    /// Told once the batch is stored (a webhook answers its delivery only then).
    pub stored: Vec<tokio::sync::oneshot::Sender<()>>,
}

/// A button of an outgoing message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    pub label: String,
    pub data: String,
}

/// An outgoing message's content: Markdown, which the adapter renders in its own markup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outgoing {
    pub markdown: String,
    /// One row of buttons (empty: none; an edit with none removes them).
    pub buttons: Vec<Button>,
    /// The message this one answers, when the platform threads replies.
    pub reply_to: Option<String>,
}

impl Outgoing {
    pub fn text(markdown: impl Into<String>) -> Self {
        Self {
            markdown: markdown.into(),
            ..Self::default()
        }
    }
}

/// What a platform can do.
#[derive(Debug, Clone, Copy)]
pub struct Capabilities {
    /// Longest message text, in UTF-16 code units of what `measure` counts.
    pub max_len: usize,
    /// Whether the limit counts the Markdown as sent or its rendering.
    pub measure: super::split::Measure,
    pub edits: bool,
    pub buttons: bool,
}

/// A platform call that failed, classified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlatformError {
    /// The credentials were refused: retrying cannot help.
    #[error("the platform refused the credentials: {0}")]
    Fatal(String),
    /// Another client holds the connection (Telegram's 409).
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("rate limited; retry after {} s", .0.as_secs())]
    RateLimited(Duration),
    /// The markup was rejected (the plain text may go through).
    #[error("the markup was rejected: {0}")]
    BadMarkup(String),
    /// An edit that changes nothing: not a failure.
    #[error("the message is not modified")]
    NotModified,
    /// The request was refused for good (a bad chat, a deleted message).
    #[error("refused: {0}")]
    Rejected(String),
    /// The request was sent but no answer came in time: it may have taken effect.
    #[error("no answer in time; it may or may not have taken effect")]
    NoAnswer,
    /// Unreachable, a 5xx, a broken connection before the request was taken.
    #[error("unavailable: {0}")]
    Unavailable(String),
}

/// A chat platform connection. One adapter per platform; the runner drives it.
#[async_trait::async_trait]
pub trait Adapter: Send + Sync + 'static {
    /// The platform's name, as in sessions' `source` (`telegram`).
    fn platform(&self) -> &'static str;

    fn capabilities(&self) -> Capabilities;

    /// A key naming the platform identity (a bot token) for the machine-wide lock, never
    /// shown: the lock file is named by its hash.
    fn identity(&self) -> &str;

    /// Check the credentials and prepare receiving (polling or webhook), with the command
    /// menu `commands` (`(name, description)`).
    async fn connect(&self, commands: &[(String, String)]) -> Result<(), PlatformError>;

    /// Wait for the next updates after `offset` (`None`: the platform's own position).
    async fn next_batch(&self, offset: Option<i64>) -> Result<Batch, PlatformError>;

    /// How long [`Adapter::next_batch`] may take before it counts as deaf and is abandoned.
    fn poll_deadline(&self) -> Duration;

    /// Send a message; returns its id.
    async fn send(&self, chat: &ChatRef, message: &Outgoing) -> Result<String, PlatformError>;

    /// Replace the text (and buttons) of a sent message.
    async fn edit(
        &self,
        chat: &ChatRef,
        message_id: &str,
        message: &Outgoing,
    ) -> Result<(), PlatformError>;

    /// Show that the agent is working (a few seconds' worth).
    async fn typing(&self, chat: &ChatRef) -> Result<(), PlatformError>;

    /// Open a thread on the group message `message_id` (whose text is `text`) for its answer,
    /// where the platform answers so (Discord's `auto_thread`); returns the thread's id, or
    /// `None` to answer in the chat itself. Asked only for a message the agent takes.
    async fn open_thread(
        &self,
        _chat: &ChatRef,
        _message_id: &str,
        _text: &str,
    ) -> Result<Option<String>, PlatformError> {
        Ok(None)
    }

    /// Acknowledge a button press, with a short note shown to the user.
    async fn answer_press(&self, press_id: &str, note: &str) -> Result<(), PlatformError>;

    /// Send a file: a voice message (`as_voice`, OGG/Opus), else an audio file (MP3/M4A) or any
    /// other file, as the platform shows each. Returns the message's id. Platforms without
    /// files refuse.
    async fn send_file(
        &self,
        _chat: &ChatRef,
        _path: &std::path::Path,
        _as_voice: bool,
    ) -> Result<String, PlatformError> {
        Err(PlatformError::Rejected(format!(
            "{} cannot take files",
            self.platform()
        )))
    }

    /// Download an attachment, at most `max_bytes`.
    async fn fetch_file(
        &self,
        attachment: &Attachment,
        max_bytes: u64,
    ) -> Result<Vec<u8>, PlatformError>;
}
