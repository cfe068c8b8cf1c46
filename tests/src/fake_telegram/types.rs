//! The test-facing value types: the chats and users updates come from, what an incoming message
//! carries, the faults a method can be made to answer with, and the records the inspectors
//! return.

use std::time::Instant;

use bytes::Bytes;
use serde_json::{Value, json};

/// Telegram's chat types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatKind {
    Private,
    Group,
    Supergroup,
    Channel,
}

impl ChatKind {
    /// The `type` field of a Chat object.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Private => "private",
            Self::Group => "group",
            Self::Supergroup => "supergroup",
            Self::Channel => "channel",
        }
    }
}

/// A chat the bot talks in. A private chat's `title` is the other party's first name (taken from
/// the first user who writes when unset).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chat {
    pub id: i64,
    pub kind: ChatKind,
    pub title: Option<String>,
    pub username: Option<String>,
    /// A supergroup with topics: messages may carry `message_thread_id`.
    pub is_forum: bool,
}

impl Chat {
    /// The private chat with user `id` (Telegram gives it the user's id).
    pub fn private(id: i64) -> Self {
        Self::new(id, ChatKind::Private, None, false)
    }

    /// A basic group (Telegram's ids for these are negative).
    pub fn group(id: i64, title: &str) -> Self {
        Self::new(id, ChatKind::Group, Some(title), false)
    }

    /// A supergroup without topics (ids look like `-100…`).
    pub fn supergroup(id: i64, title: &str) -> Self {
        Self::new(id, ChatKind::Supergroup, Some(title), false)
    }

    /// A supergroup with topics.
    pub fn forum(id: i64, title: &str) -> Self {
        Self::new(id, ChatKind::Supergroup, Some(title), true)
    }

    /// A channel.
    pub fn channel(id: i64, title: &str) -> Self {
        Self::new(id, ChatKind::Channel, Some(title), false)
    }

    /// Sets the public username (`@name` addresses the chat as `chat_id`).
    pub fn with_username(mut self, username: &str) -> Self {
        self.username = Some(username.to_owned());
        self
    }

    fn new(id: i64, kind: ChatKind, title: Option<&str>, is_forum: bool) -> Self {
        Self {
            id,
            kind,
            title: title.map(str::to_owned),
            username: None,
            is_forum,
        }
    }

    /// The Chat object, naming a private chat after `from` when it has no title of its own.
    pub(super) fn json(&self, from: Option<&User>) -> Value {
        let mut chat = json!({"id": self.id, "type": self.kind.as_str()});
        let username = self
            .username
            .clone()
            .or_else(|| from.and_then(|u| u.username.clone()));
        if self.kind == ChatKind::Private {
            let name = self
                .title
                .clone()
                .or_else(|| from.map(|u| u.first_name.clone()));
            chat["first_name"] = name.unwrap_or_else(|| "User".to_owned()).into();
            if let Some(username) = username {
                chat["username"] = username.into();
            }
            return chat;
        }
        chat["title"] = self.title.clone().unwrap_or_default().into();
        if let Some(username) = &self.username {
            chat["username"] = username.clone().into();
        }
        if self.is_forum {
            chat["is_forum"] = true.into();
        }
        chat
    }
}

/// A (human) Telegram user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub id: i64,
    pub first_name: String,
    pub username: Option<String>,
}

impl User {
    pub fn new(id: i64, first_name: &str) -> Self {
        Self {
            id,
            first_name: first_name.to_owned(),
            username: None,
        }
    }

    pub fn with_username(mut self, username: &str) -> Self {
        self.username = Some(username.to_owned());
        self
    }

    /// The User object.
    pub(super) fn json(&self) -> Value {
        let mut user = json!({
            "id": self.id,
            "is_bot": false,
            "first_name": self.first_name,
            "language_code": "en",
        });
        if let Some(username) = &self.username {
            user["username"] = username.clone().into();
        }
        user
    }
}

/// What an incoming message carries.
#[derive(Clone, Debug)]
pub(super) enum Content {
    Text(String),
    Photo {
        bytes: Bytes,
    },
    Document {
        bytes: Bytes,
        file_name: String,
        mime_type: String,
    },
    Voice {
        bytes: Bytes,
        duration: u32,
    },
}

/// A message a user sends the bot, built up and handed to
/// [`FakeTelegram::push`](super::FakeTelegram::push).
#[derive(Clone, Debug)]
pub struct Incoming {
    pub(super) chat: Chat,
    pub(super) from: User,
    pub(super) content: Content,
    pub(super) caption: Option<String>,
    pub(super) thread_id: Option<i64>,
    pub(super) reply_to: Option<i64>,
}

impl Incoming {
    /// A text message (a leading `/command` gets its `bot_command` entity, as Telegram adds).
    pub fn text(chat: &Chat, from: &User, text: &str) -> Self {
        Self::new(chat, from, Content::Text(text.to_owned()))
    }

    /// A photo; its bytes are served by `getFile` and the file endpoint.
    pub fn photo(chat: &Chat, from: &User, bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        Self::new(chat, from, Content::Photo { bytes })
    }

    /// A file sent as a document.
    pub fn document(
        chat: &Chat,
        from: &User,
        bytes: impl Into<Bytes>,
        file_name: &str,
        mime_type: &str,
    ) -> Self {
        let content = Content::Document {
            bytes: bytes.into(),
            file_name: file_name.to_owned(),
            mime_type: mime_type.to_owned(),
        };
        Self::new(chat, from, content)
    }

    /// A voice note (`audio/ogg`) of `duration` seconds.
    pub fn voice(chat: &Chat, from: &User, bytes: impl Into<Bytes>, duration: u32) -> Self {
        let content = Content::Voice {
            bytes: bytes.into(),
            duration,
        };
        Self::new(chat, from, content)
    }

    /// The caption of a photo, document or voice note (ignored on text).
    pub fn caption(mut self, caption: &str) -> Self {
        self.caption = Some(caption.to_owned());
        self
    }

    /// Posts the message in forum topic `thread_id`.
    pub fn in_thread(mut self, thread_id: i64) -> Self {
        self.thread_id = Some(thread_id);
        self
    }

    /// Makes the message a reply to message `message_id` of the same chat.
    pub fn replying_to(mut self, message_id: i64) -> Self {
        self.reply_to = Some(message_id);
        self
    }

    fn new(chat: &Chat, from: &User, content: Content) -> Self {
        Self {
            chat: chat.clone(),
            from: from.clone(),
            content,
            caption: None,
            thread_id: None,
            reply_to: None,
        }
    }
}

/// What pushing an incoming message produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pushed {
    pub update_id: i64,
    /// The message's id in its chat.
    pub message_id: i64,
    /// The `file_id` of a photo, document or voice note.
    pub file_id: Option<String>,
}

/// How the next call of a method fails instead of (or after) doing its work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// 429 `Too Many Requests: retry after N`, with `parameters.retry_after` and `Retry-After`.
    TooManyRequests { retry_after: u32 },
    /// A JSON error with this status: 500 `Internal Server Error`, 502 `Bad Gateway`, …
    Server(u16),
    /// An HTML error page with this status, as the front proxy sends for a 502 or 504.
    Html(u16),
    /// 401 `Unauthorized` (a revoked token).
    Unauthorized,
    /// 403 `Forbidden: <text>`, e.g. `bot was blocked by the user`.
    Forbidden(String),
    /// 400 `Bad Request: <text>` (the prefix is added unless already there).
    BadRequest(String),
    /// 400 `Bad Request: group chat was upgraded to a supergroup chat` with
    /// `parameters.migrate_to_chat_id`.
    MigrateToChat(i64),
    /// Reads the request and never answers; the client has to time out.
    Hang,
    /// Does the method's work (the message appears in the chat), then never answers.
    DeliverThenHang,
    /// Does the method's work, then answers only after
    /// [`release_held`](super::FakeTelegram::release_held): the message is in the chat while
    /// the client still waits for its id.
    DeliverThenHold,
}

/// One request the server received, recorded on arrival.
#[derive(Clone, Debug)]
pub struct Call {
    /// The method as the client spelled it (Telegram matches method names case-insensitively).
    pub method: String,
    /// Query, form and JSON body parameters merged into one object (form values are strings).
    pub params: Value,
    pub at: Instant,
    pub token: String,
    /// The HTTP status answered; `None` while the request is pending or hung.
    pub status: Option<u16>,
}

impl Call {
    /// Whether this is a call of `method` (case-insensitive).
    pub fn is(&self, method: &str) -> bool {
        self.method.eq_ignore_ascii_case(method)
    }

    /// Parameter `name`, `Null` when absent.
    pub fn param(&self, name: &str) -> &Value {
        &self.params[name]
    }
}

/// A message the bot sent, as the chat shows it now.
#[derive(Clone, Debug, PartialEq)]
pub struct SentMessage {
    pub message_id: i64,
    /// The visible text: tags stripped, entities decoded, trimmed as Telegram trims.
    pub text: String,
    /// The text as the client sent it last.
    pub raw: String,
    /// The `parse_mode` the client sent last.
    pub parse_mode: Option<String>,
    /// The MessageEntity objects of the visible text.
    pub entities: Vec<Value>,
    /// Successful `editMessageText` calls so far.
    pub edits: u32,
    /// The reply markup as sent last (any kind); `None` once an edit dropped it.
    pub reply_markup: Option<Value>,
    pub deleted: bool,
    pub thread_id: Option<i64>,
    pub reply_to_message_id: Option<i64>,
}

impl SentMessage {
    /// The callback data of the inline buttons of its first row, in order.
    pub fn buttons(&self) -> Vec<String> {
        let row = self
            .reply_markup
            .as_ref()
            .and_then(|markup| markup["inline_keyboard"][0].as_array().cloned())
            .unwrap_or_default();
        row.iter()
            .filter_map(|b| b["callback_data"].as_str().map(str::to_string))
            .collect()
    }

    /// The callback data of the button whose data ends in `:{choice}`; panics when there is none.
    pub fn button(&self, choice: &str) -> String {
        let suffix = format!(":{choice}");
        let buttons = self.buttons();
        buttons
            .iter()
            .find(|data| data.ends_with(&suffix))
            .cloned()
            .unwrap_or_else(|| panic!("no `{choice}` button among {buttons:?}"))
    }
}

/// A file the bot sent: `sendVoice`, `sendAudio` or `sendDocument`, with its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upload {
    pub method: String,
    pub chat_id: i64,
    pub message_id: i64,
    pub thread_id: Option<i64>,
    pub file_name: String,
    pub content_type: String,
    pub bytes: Bytes,
}

/// A `sendChatAction` the bot made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatAction {
    pub action: String,
    pub thread_id: Option<i64>,
    pub at: Instant,
}

/// An `answerCallbackQuery` the bot made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallbackAnswer {
    pub callback_query_id: String,
    pub text: Option<String>,
    pub show_alert: bool,
}
