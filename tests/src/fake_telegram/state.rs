//! The server's state: one bot's world (its tokens, the update queue, the chats and their
//! messages, webhook, commands, files, queued faults, the long poll) behind one lock, and a
//! change counter bumped after every write, which the long poll and the test's waiters watch.

use std::{
    collections::{BTreeMap, HashMap, VecDeque},
    sync::{Mutex, MutexGuard, PoisonError},
    time::{SystemTime, UNIX_EPOCH},
};

use bytes::Bytes;
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{
    Call, CallbackAnswer, Chat, ChatAction, Fault, User, markup,
    reply::{ApiError, Outcome},
    text::Formatted,
};

/// The first `update_id` handed out.
pub(super) const FIRST_UPDATE_ID: i64 = 1000;

/// The state shared by the server and every handle.
pub(super) struct Shared {
    world: Mutex<World>,
    changed: watch::Sender<u64>,
    /// Cancelled when the last handle is dropped: requests held open answer then.
    pub(super) stop: CancellationToken,
}

impl Shared {
    pub(super) fn new(world: World) -> Self {
        Self {
            world: Mutex::new(world),
            changed: watch::Sender::new(0),
            stop: CancellationToken::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Looks at the world.
    pub(super) fn read<R>(&self, look: impl FnOnce(&World) -> R) -> R {
        look(&self.lock())
    }

    /// Changes the world, then tells every watcher.
    pub(super) fn write<R>(&self, change: impl FnOnce(&mut World) -> R) -> R {
        let result = change(&mut self.lock());
        self.changed.send_modify(|version| *version += 1);
        result
    }

    /// A receiver that sees every later [`write`](Self::write).
    pub(super) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Runs `work`, then waits for a `release_held` after the start (or the server's stop)
    /// before giving its outcome.
    pub(super) async fn hold(&self, work: impl Future<Output = Outcome>) -> Outcome {
        let mut changes = self.subscribe();
        let seen = self.read(|world| world.releases);
        let outcome = work.await;
        let released = async {
            while self.read(|world| world.releases) == seen {
                if changes.changed().await.is_err() {
                    break;
                }
            }
        };
        tokio::select! {
            () = released => outcome,
            () = self.stop.cancelled() => Err(ApiError::closing()),
        }
    }

    /// Never answers, until the server stops.
    pub(super) async fn hang(&self) -> Outcome {
        self.stop.cancelled().await;
        Err(ApiError::closing())
    }
}

/// Everything the fake Telegram knows about its one bot.
pub(super) struct World {
    /// The bot's User object.
    pub(super) bot: Value,
    pub(super) tokens: Vec<String>,
    pub(super) calls: Vec<Call>,
    /// Updates not yet confirmed, oldest first.
    pub(super) queue: VecDeque<QueuedUpdate>,
    pub(super) next_update_id: i64,
    /// Every update with a smaller id has been confirmed.
    pub(super) confirmed: i64,
    /// The last `allowed_updates` a poll or `setWebhook` gave (empty: the default set).
    pub(super) allowed_updates: Vec<String>,
    pub(super) chats: BTreeMap<i64, ChatState>,
    /// Callback query ids pushed, and whether they were answered.
    pub(super) callbacks: BTreeMap<String, bool>,
    pub(super) answers: Vec<CallbackAnswer>,
    pub(super) files: BTreeMap<String, StoredFile>,
    pub(super) webhook: Option<Webhook>,
    /// Command lists by scope and language (see `methods::command_key`).
    pub(super) commands: BTreeMap<String, Value>,
    /// Faults queued per method (lower-case name).
    pub(super) faults: HashMap<String, VecDeque<Fault>>,
    pub(super) hang_polls: bool,
    pub(super) conflict: bool,
    /// Bumped by `release_held`: a held answer goes out once this passes what it saw.
    pub(super) releases: u64,
    pub(super) polls: PollState,
    pub(super) next_callback: u64,
    pub(super) next_file: u64,
    /// Files the bot sent (`sendVoice`, `sendAudio`, `sendDocument`), in order.
    pub(super) uploads: Vec<super::Upload>,
}

impl World {
    /// A world for the bot whose first token is `token` (its id is the part before the `:`).
    pub(super) fn new(token: &str) -> Self {
        let id: i64 = token
            .split(':')
            .next()
            .and_then(|id| id.parse().ok())
            .unwrap_or(123_456);
        Self {
            bot: json!({
                "id": id,
                "is_bot": true,
                "first_name": "Fake Bot",
                "username": "fake_bot",
            }),
            tokens: vec![token.to_owned()],
            calls: Vec::new(),
            queue: VecDeque::new(),
            next_update_id: FIRST_UPDATE_ID,
            confirmed: 0,
            allowed_updates: Vec::new(),
            chats: BTreeMap::new(),
            callbacks: BTreeMap::new(),
            answers: Vec::new(),
            files: BTreeMap::new(),
            webhook: None,
            commands: BTreeMap::new(),
            faults: HashMap::new(),
            hang_polls: false,
            conflict: false,
            releases: 0,
            polls: PollState::default(),
            next_callback: 1,
            next_file: 1,
            uploads: Vec::new(),
        }
    }

    /// Queues an update of `kind` (`message`, `callback_query`, …); returns its id.
    pub(super) fn enqueue(&mut self, kind: &str, payload: Value) -> i64 {
        let id = self.next_update_id;
        self.next_update_id += 1;
        let mut update = json!({"update_id": id});
        update[kind] = payload;
        self.queue.push_back(QueuedUpdate {
            id,
            kind: kind.to_owned(),
            json: update,
        });
        id
    }

    /// The chat `chat.id`, registered on first use (a private chat named after `from`).
    pub(super) fn chat_mut(&mut self, chat: &Chat, from: Option<&User>) -> &mut ChatState {
        self.chats.entry(chat.id).or_insert_with(|| ChatState {
            chat: chat.clone(),
            json: chat.json(from),
            next_message_id: 1,
            messages: BTreeMap::new(),
            actions: Vec::new(),
        })
    }

    /// The chat a `chat_id` parameter names: its id, or `@username`.
    pub(super) fn resolve_chat(&self, chat_id: &str) -> Option<i64> {
        if let Some(username) = chat_id.strip_prefix('@') {
            return self
                .chats
                .values()
                .find(|c| {
                    c.json["username"]
                        .as_str()
                        .is_some_and(|u| u.eq_ignore_ascii_case(username))
                })
                .map(|c| c.chat.id);
        }
        let id = chat_id.trim().parse().ok()?;
        self.chats.contains_key(&id).then_some(id)
    }

    /// The next fault queued for `method`.
    pub(super) fn take_fault(&mut self, method: &str) -> Option<Fault> {
        self.faults.get_mut(method)?.pop_front()
    }

    /// Makes the waiting long poll answer 409 with `reason`.
    pub(super) fn abort_waiting_poll(&mut self, reason: &'static str) {
        if let Some(id) = self.polls.waiting.take() {
            self.polls.terminated.insert(id, reason);
        }
    }
}

/// One queued update.
pub(super) struct QueuedUpdate {
    pub(super) id: i64,
    /// The update's field: `message`, `edited_message`, `callback_query`, …
    pub(super) kind: String,
    pub(super) json: Value,
}

/// The long poll's bookkeeping.
#[derive(Default)]
pub(super) struct PollState {
    pub(super) next_id: u64,
    /// The poll waiting for updates, if any; a newer waiting poll terminates it.
    pub(super) waiting: Option<u64>,
    /// Waiting polls told to answer 409, with the description.
    pub(super) terminated: HashMap<u64, &'static str>,
    /// `getUpdates` requests whose client is still connected (held or hung ones included).
    pub(super) in_flight: usize,
}

/// The webhook `setWebhook` recorded.
#[derive(Clone, Debug)]
pub(super) struct Webhook {
    pub(super) url: String,
    pub(super) secret: Option<String>,
    pub(super) max_connections: i64,
}

/// A file users sent, for `getFile` and the download endpoint.
#[derive(Clone, Debug)]
pub(super) struct StoredFile {
    pub(super) file_id: String,
    pub(super) file_unique_id: String,
    pub(super) file_path: String,
    pub(super) bytes: Bytes,
}

/// One chat and its messages.
pub(super) struct ChatState {
    pub(super) chat: Chat,
    /// The Chat object messages carry.
    pub(super) json: Value,
    next_message_id: i64,
    pub(super) messages: BTreeMap<i64, StoredMessage>,
    pub(super) actions: Vec<ChatAction>,
}

impl ChatState {
    /// The id of the chat's next message (both directions share the sequence).
    pub(super) fn next_message_id(&mut self) -> i64 {
        let id = self.next_message_id;
        self.next_message_id += 1;
        id
    }

    /// The message `id` unless it is unknown or deleted.
    pub(super) fn live(&self, id: i64) -> Option<&StoredMessage> {
        self.messages.get(&id).filter(|m| !m.deleted)
    }

    /// The Message object of `message`, with the message it replies to (one level deep): the
    /// replied message, or in a forum topic the topic's first message.
    pub(super) fn message_json(&self, message: &StoredMessage) -> Value {
        let mut json = self.message_body(message);
        let replied = message.reply_to.and_then(|id| self.live(id));
        if let Some(replied) = replied {
            json["reply_to_message"] = self.message_body(replied);
        } else if let Some(thread) = message.thread_id.filter(|_| self.chat.is_forum) {
            json["reply_to_message"] = json!({
                "message_id": thread,
                "from": message.from,
                "chat": self.json,
                "date": message.date,
                "message_thread_id": thread,
                "forum_topic_created": {"name": format!("Topic {thread}"), "icon_color": 7_322_096},
                "is_topic_message": true,
            });
        }
        json
    }

    fn message_body(&self, message: &StoredMessage) -> Value {
        let mut json = json!({
            "message_id": message.id,
            "from": message.from,
            "chat": self.json,
            "date": message.date,
        });
        if let Some(date) = message.edit_date {
            json["edit_date"] = date.into();
        }
        if let Some(thread) = message.thread_id {
            json["message_thread_id"] = thread.into();
            if self.chat.is_forum {
                json["is_topic_message"] = true.into();
            }
        }
        if let Some(text) = &message.text {
            json["text"] = text.text.clone().into();
            if !text.entities.is_empty() {
                json["entities"] = text.entities.clone().into();
            }
        }
        for (name, value) in &message.media {
            json[name] = value.clone();
        }
        if let Some(inline) = message.reply_markup.as_ref().and_then(markup::inline) {
            json["reply_markup"] = inline;
        }
        json
    }
}

/// A message of a chat, either direction.
#[derive(Clone, Debug)]
pub(super) struct StoredMessage {
    pub(super) id: i64,
    /// The sender's User object.
    pub(super) from: Value,
    pub(super) from_bot: bool,
    pub(super) date: i64,
    pub(super) edit_date: Option<i64>,
    pub(super) text: Option<Formatted>,
    /// The text as sent (the bot's raw text; a user's text).
    pub(super) raw: String,
    pub(super) parse_mode: Option<String>,
    /// `photo`, `document`, `voice`, `caption`… of a media message.
    pub(super) media: Map<String, Value>,
    /// The reply markup as given (any kind); only an inline keyboard is shown on the message.
    pub(super) reply_markup: Option<Value>,
    pub(super) edits: u32,
    pub(super) thread_id: Option<i64>,
    pub(super) reply_to: Option<i64>,
    pub(super) deleted: bool,
}

impl StoredMessage {
    /// A new message `id` from `from`, dated now.
    pub(super) fn new(id: i64, from: Value, from_bot: bool) -> Self {
        Self {
            id,
            from,
            from_bot,
            date: now(),
            edit_date: None,
            text: None,
            raw: String::new(),
            parse_mode: None,
            media: Map::new(),
            reply_markup: None,
            edits: 0,
            thread_id: None,
            reply_to: None,
            deleted: false,
        }
    }
}

/// The Unix time now, in seconds.
pub(super) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}
