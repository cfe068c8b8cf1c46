//! What a test hands the fake Discord and gets back: users, calls, faults, the bot's messages
//! and the answers it gave interactions.

use std::time::Instant;

use serde_json::{Value, json};

/// A Discord user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: String,
    pub name: String,
    pub bot: bool,
}

impl User {
    pub fn new(id: &str, name: &str) -> Self {
        Self {
            id: id.to_string(),
            name: name.to_string(),
            bot: false,
        }
    }

    /// Another bot.
    pub fn bot(id: &str, name: &str) -> Self {
        Self {
            bot: true,
            ..Self::new(id, name)
        }
    }

    /// The user object Discord sends.
    pub fn json(&self) -> Value {
        json!({"id": self.id, "username": self.name.to_lowercase(), "global_name": self.name,
            "discriminator": "0", "avatar": null, "bot": self.bot})
    }

    /// `<@id>`, a mention of this user.
    pub fn mention(&self) -> String {
        format!("<@{}>", self.id)
    }
}

/// One REST request, as it arrived, and its status once answered.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: String,
    /// The path below the API base (`/channels/1/messages`).
    pub path: String,
    pub body: Value,
    pub status: Option<u16>,
    pub at: Instant,
    /// Whether it carried the bot's `Authorization: Bot <token>`.
    pub authorized: bool,
}

/// A failure the next matching request gets.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// 429 with `retry_after` (seconds), on the route's bucket or, `global`, on every route.
    RateLimited { retry_after: f64, global: bool },
    /// This status with Discord's error body.
    Status(u16),
}

/// A message in a channel (the bot's or a user's), as it stands.
#[derive(Debug, Clone)]
pub struct SentMessage {
    pub id: String,
    pub channel_id: String,
    pub author_id: String,
    pub content: String,
    /// The buttons' `(label, custom_id)`, row by row flattened.
    pub buttons: Vec<(String, String)>,
    pub edits: usize,
    pub deleted: bool,
    /// File names of its attachments.
    pub files: Vec<String>,
    /// The message it replies to.
    pub reply_to: Option<String>,
}

impl SentMessage {
    /// The `custom_id` of the button whose `custom_id` ends with `:{choice}`.
    pub fn button(&self, choice: &str) -> String {
        self.buttons
            .iter()
            .find(|(_, id)| id.ends_with(&format!(":{choice}")))
            .map(|(_, id)| id.clone())
            .unwrap_or_else(|| panic!("fake-discord: no {choice} button on {self:?}"))
    }
}

/// A thread the bot opened on a message (`POST /channels/{c}/messages/{m}/threads`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedThread {
    /// The thread's id: the message's, as on Discord.
    pub id: String,
    pub parent_id: String,
    pub message_id: String,
    pub name: String,
    /// The `auto_archive_duration` asked for, in minutes.
    pub auto_archive_duration: Option<u64>,
}

/// What the bot answered an interaction.
#[derive(Debug, Clone)]
pub struct InteractionAnswer {
    pub interaction_id: String,
    /// The callback's body (`type` 4, 5, 6 or 7 …).
    pub response: Value,
    /// How long after the interaction was created the answer came.
    pub after: std::time::Duration,
}

/// The Gateway as the fake saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GatewayStats {
    pub connections: usize,
    pub live: usize,
    pub identifies: usize,
    /// Each RESUME's `(session_id, seq)`.
    pub resumes: Vec<(String, i64)>,
    pub heartbeats: usize,
    /// Sessions that began (READY sent).
    pub sessions: usize,
}
