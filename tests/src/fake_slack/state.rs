//! The fake's state: the workspaces (each with its bot token and bot user), the app token, the
//! users, every message (the test's users' and the bot's, with their edit history), the files,
//! the Web API calls, the POSTs of bytes to upload URLs, queued faults, and the Socket Mode
//! envelopes with their delivery and ack state, behind one lock, with a change counter bumped
//! after every write that the socket connections and the test's waiters watch.

use std::{
    collections::{HashMap, VecDeque},
    sync::{Mutex, MutexGuard, PoisonError},
};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// One workspace the app is installed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    pub id: String,
    pub name: String,
    /// The workspace's bot token (`xoxb-…`).
    pub bot_token: String,
    /// The bot's user id (`U…`), as `auth.test` answers and mentions name it.
    pub bot_user_id: String,
    /// The bot's bot id (`B…`), on the messages it posts.
    pub bot_id: String,
}

/// A message in a channel: a user's (pushed by the test) or the bot's.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub team: String,
    pub channel: String,
    pub ts: String,
    /// The thread it is in (`None`: top level).
    pub thread_ts: Option<String>,
    pub text: String,
    pub blocks: Value,
    /// The author's user id (the bot's user id for its own messages).
    pub user: String,
    pub from_bot: bool,
    /// How many times `chat.update` changed it.
    pub updates: u32,
    /// Its texts, oldest first (the last is `text`).
    pub history: Vec<String>,
}

/// A Web API request as it arrived, with its HTTP status once answered.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: String,
    pub params: Value,
    /// The token it carried (bearer or `token` parameter).
    pub token: String,
    pub status: Option<u16>,
    pub at: std::time::Instant,
}

/// A fault the next call of a method suffers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// HTTP 429 `ratelimited` with `Retry-After: secs`.
    RateLimited(u64),
    /// `{"ok": false, "error": code}` with HTTP 200.
    Error(String),
    /// A bare HTTP status (a 5xx, say).
    Status(u16),
}

/// A Socket Mode envelope and its delivery.
#[derive(Debug, Clone)]
pub struct Envelope {
    pub id: String,
    /// `events_api`, `interactive` or `slash_commands`.
    pub kind: String,
    pub payload: Value,
    /// Times it was sent (the first send is attempt 0).
    pub sends: u32,
    /// The connection it was last sent on.
    pub sent_on: Option<u64>,
    pub acked: bool,
    /// The `payload` of its ack, when it had one.
    pub ack_payload: Option<Value>,
}

/// A file: uploaded by the bot, or attached by the test to a user's message.
#[derive(Debug, Clone)]
pub struct File {
    pub id: String,
    pub team: String,
    pub name: String,
    pub title: String,
    pub bytes: Option<Bytes>,
    /// Where `files.completeUploadExternal` shared it (channel, thread).
    pub shared_to: Option<(String, Option<String>)>,
    /// The length `files.getUploadURLExternal` announced.
    pub announced: u64,
}

/// A POST of bytes to an upload URL `files.getUploadURLExternal` handed out (the middle step of
/// Slack's upload flow, which is no Web API method and so no [`Call`]).
#[derive(Debug, Clone)]
pub struct Upload {
    /// The file id in the URL.
    pub file_id: String,
    pub bytes: Bytes,
    /// How many Web API calls had arrived before it: its place among them.
    pub after_calls: usize,
    /// Whether the URL named a file the fake knows (otherwise it was answered 404).
    pub known: bool,
}

/// An ephemeral message (`chat.postEphemeral`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ephemeral {
    pub channel: String,
    pub user: String,
    pub text: String,
}

/// A Socket Mode connection's state.
#[derive(Debug, Clone, Default)]
pub struct Link {
    pub id: u64,
    pub open: bool,
    /// It neither reads (so pings go unanswered) nor sends.
    pub silent: bool,
    /// A `disconnect` waits to be sent on it (its reason).
    pub disconnect: Option<String>,
    /// A `disconnect` was sent: nothing more is sent on it.
    pub retired: bool,
}

/// Everything the fake knows.
#[derive(Debug, Default)]
pub struct World {
    pub teams: Vec<Team>,
    pub app_token: String,
    /// User id → display name.
    pub users: HashMap<String, String>,
    pub messages: Vec<Message>,
    pub ephemerals: Vec<Ephemeral>,
    pub files: Vec<File>,
    pub calls: Vec<Call>,
    pub uploads: Vec<Upload>,
    pub faults: HashMap<String, VecDeque<Fault>>,
    pub envelopes: Vec<Envelope>,
    pub links: Vec<Link>,
    /// Tickets handed out by `apps.connections.open`, not yet used.
    pub tickets: Vec<String>,
    /// Whether the bot's own posts come back as `message` events (Slack sends them).
    pub echo_bot_messages: bool,
    /// The next message's ts counter.
    pub clock: u64,
    pub next_id: u64,
    /// Whether calls past their method's tier get a 429.
    pub enforce_tiers: bool,
    /// `http://127.0.0.1:PORT` of the Web API.
    pub base_url: String,
    /// `ws://127.0.0.1:PORT` of Socket Mode.
    pub socket_url: String,
    /// Channel id → `channel_type` (`im`, `mpim`, `channel`, `group`), as the test named it.
    pub channel_kinds: HashMap<String, String>,
}

impl World {
    /// A fresh id with `prefix` (`Ev`, `F`, envelope ids…).
    pub fn fresh_id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}{:08X}", self.next_id)
    }

    /// A fresh message ts (`1700000000.000123`), strictly increasing.
    pub fn fresh_ts(&mut self) -> String {
        self.clock += 1;
        format!(
            "{}.{:06}",
            1_700_000_000 + self.clock / 1_000_000,
            self.clock % 1_000_000
        )
    }

    /// The `channel_type` of `channel`: as the test named it, else from its id.
    pub fn channel_kind(&self, channel: &str) -> String {
        self.channel_kinds
            .get(channel)
            .cloned()
            .unwrap_or_else(|| super::payloads::channel_type(channel).to_owned())
    }

    /// The team whose bot token is `token`.
    pub fn team_of_token(&self, token: &str) -> Option<&Team> {
        self.teams.iter().find(|t| t.bot_token == token)
    }

    pub fn team(&self, id: &str) -> Option<&Team> {
        self.teams.iter().find(|t| t.id == id)
    }

    /// The next queued fault of `method`.
    pub fn take_fault(&mut self, method: &str) -> Option<Fault> {
        self.faults.get_mut(method)?.pop_front()
    }

    /// Queue an envelope for Socket Mode.
    pub fn enqueue(&mut self, kind: &str, payload: Value) -> String {
        let id = self.fresh_id("env-");
        self.envelopes.push(Envelope {
            id: id.clone(),
            kind: kind.to_owned(),
            payload,
            sends: 0,
            sent_on: None,
            acked: false,
            ack_payload: None,
        });
        id
    }

    /// The message `ts` in `channel`.
    pub fn message_mut(&mut self, channel: &str, ts: &str) -> Option<&mut Message> {
        self.messages
            .iter_mut()
            .find(|m| m.channel == channel && m.ts == ts)
    }

    /// The connection envelopes go to: the newest open one that neither is silent nor was told
    /// to disconnect.
    pub fn live_link(&self) -> Option<u64> {
        self.links
            .iter()
            .rev()
            .find(|l| l.open && !l.silent && !l.retired && l.disconnect.is_none())
            .map(|l| l.id)
    }

    pub fn link_mut(&mut self, id: u64) -> Option<&mut Link> {
        self.links.iter_mut().find(|l| l.id == id)
    }
}

/// The state shared by the servers and every handle.
pub struct Shared {
    world: Mutex<World>,
    changed: watch::Sender<u64>,
    /// Cancelled when the last handle is dropped.
    pub stop: CancellationToken,
}

impl Shared {
    pub fn new(world: World) -> Self {
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
    pub fn read<R>(&self, look: impl FnOnce(&World) -> R) -> R {
        look(&self.lock())
    }

    /// Changes the world, then tells every watcher.
    pub fn write<R>(&self, change: impl FnOnce(&mut World) -> R) -> R {
        let result = change(&mut self.lock());
        self.changed.send_modify(|version| *version += 1);
        result
    }

    /// A receiver that sees every later [`write`](Self::write).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}
