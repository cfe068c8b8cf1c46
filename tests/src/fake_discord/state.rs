//! The fake's state: one bot's world (its tokens and user, guilds, channels and threads (and
//! which the bot opened on a message), every message, the Gateway session with its numbered events, interactions and their answers,
//! registered commands, files, calls, queued faults and rate-limit blocks) behind one lock, and
//! a change counter bumped after every write, which Gateway connections and waiters watch.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::{Mutex, MutexGuard, PoisonError},
    time::Instant,
};

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{Call, Fault, GatewayStats, InteractionAnswer, OpenedThread, SentMessage, User};

/// The state shared by the servers and every handle.
pub(super) struct Shared {
    world: Mutex<World>,
    changed: watch::Sender<u64>,
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

    pub(super) fn read<R>(&self, look: impl FnOnce(&World) -> R) -> R {
        look(&self.lock())
    }

    /// Changes the world, then tells every watcher.
    pub(super) fn write<R>(&self, change: impl FnOnce(&mut World) -> R) -> R {
        let result = change(&mut self.lock());
        self.changed.send_modify(|version| *version += 1);
        result
    }

    pub(super) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}

/// A channel: a guild text channel, a thread in one, or a DM.
#[derive(Debug, Clone)]
pub(super) struct Channel {
    pub(super) id: String,
    /// Discord's channel type: 0 text, 1 DM, 11 public thread.
    pub(super) kind: u64,
    pub(super) guild_id: String,
    pub(super) parent_id: String,
    pub(super) name: String,
    /// A DM's other person.
    pub(super) recipient: Option<User>,
}

impl Channel {
    pub(super) fn json(&self) -> Value {
        let mut channel = json!({"id": self.id, "type": self.kind});
        if !self.guild_id.is_empty() {
            channel["guild_id"] = json!(self.guild_id);
            channel["name"] = json!(self.name);
        }
        if !self.parent_id.is_empty() {
            channel["parent_id"] = json!(self.parent_id);
        }
        if let Some(user) = &self.recipient {
            channel["recipients"] = json!([user.json()]);
        }
        channel
    }
}

/// The Gateway session: its id and every event, numbered.
#[derive(Debug, Clone)]
pub(super) struct Session {
    pub(super) id: String,
    pub(super) events: Vec<(i64, String, Value)>,
}

impl Session {
    pub(super) fn seq(&self) -> i64 {
        self.events.last().map_or(0, |(seq, ..)| *seq)
    }
}

/// The Gateway's switches and counters.
#[derive(Debug, Default)]
pub(super) struct Gateway {
    pub(super) heartbeat_ms: u64,
    pub(super) session: Option<Session>,
    pub(super) stats: GatewayStats,
    pub(super) next_connection: u64,
    pub(super) live: HashSet<u64>,
    /// Connections that went deaf: no ACKs, no events.
    pub(super) zombies: HashSet<u64>,
    /// Close every live connection with this code.
    pub(super) close_with: Option<u16>,
    /// Send every live connection RECONNECT.
    pub(super) reconnect: bool,
    /// Send every live connection INVALID_SESSION with this `d`.
    pub(super) invalidate: Option<bool>,
}

/// An interaction handed to the bot.
#[derive(Debug, Clone)]
pub(super) struct Interaction {
    pub(super) token: String,
    pub(super) created: Instant,
}

/// Everything the fake Discord knows about its one bot.
pub(super) struct World {
    pub(super) tokens: Vec<String>,
    /// The Gateway's URL, as `GET /gateway/bot` names it.
    pub(super) ws_url: String,
    pub(super) bot: User,
    pub(super) application_id: String,
    next_id: u64,
    pub(super) guilds: BTreeMap<String, String>,
    /// Users seen (authors, mentioned bots), for mentions.
    pub(super) users: Vec<User>,
    pub(super) channels: BTreeMap<String, Channel>,
    pub(super) messages: Vec<SentMessage>,
    /// Threads the bot opened on messages, in order.
    pub(super) opened_threads: Vec<OpenedThread>,
    pub(super) calls: Vec<Call>,
    pub(super) faults: Vec<(String, String, Fault)>,
    /// Buckets blocked after a 429, and the global block.
    pub(super) blocked: HashMap<String, Instant>,
    pub(super) global_block: Option<Instant>,
    /// Requests that came while their bucket was blocked.
    pub(super) violations: usize,
    /// Requests per bucket in the current window: `(window start, count)`.
    pub(super) windows: HashMap<String, (Instant, u32)>,
    pub(super) gateway: Gateway,
    pub(super) interactions: HashMap<String, Interaction>,
    pub(super) answers: Vec<InteractionAnswer>,
    pub(super) followups: Vec<Value>,
    pub(super) commands: Vec<(String, Value)>,
    pub(super) files: HashMap<String, (Bytes, String)>,
}

impl World {
    pub(super) fn new(token: &str) -> Self {
        let mut world = Self {
            tokens: vec![token.to_string()],
            ws_url: String::new(),
            bot: User::bot("", "Hermes"),
            application_id: String::new(),
            next_id: 1_200_000_000_000_000_000,
            guilds: BTreeMap::new(),
            users: Vec::new(),
            channels: BTreeMap::new(),
            messages: Vec::new(),
            opened_threads: Vec::new(),
            calls: Vec::new(),
            faults: Vec::new(),
            blocked: HashMap::new(),
            global_block: None,
            violations: 0,
            windows: HashMap::new(),
            gateway: Gateway {
                heartbeat_ms: 41_250,
                ..Gateway::default()
            },
            interactions: HashMap::new(),
            answers: Vec::new(),
            followups: Vec::new(),
            commands: Vec::new(),
            files: HashMap::new(),
        };
        world.bot.id = world.snowflake();
        world.application_id = world.bot.id.clone();
        world
    }

    /// A new snowflake, later than every one before.
    pub(super) fn snowflake(&mut self) -> String {
        self.next_id += 1;
        self.next_id.to_string()
    }

    /// Send the dispatch `name` to the bot's session (lost when no session is up, as on
    /// Discord).
    pub(super) fn dispatch(&mut self, name: &str, data: Value) {
        if let Some(session) = self.gateway.session.as_mut() {
            let seq = session.seq() + 1;
            session.events.push((seq, name.to_string(), data));
        }
    }

    /// Remember `user` (for mentions of them).
    pub(super) fn remember(&mut self, user: &User) {
        if !self.users.iter().any(|u| u.id == user.id) {
            self.users.push(user.clone());
        }
    }

    /// The users a message's text mentions (`<@id>`, `<@!id>`), of those the fake knows.
    pub(super) fn mentioned(&self, content: &str) -> Vec<Value> {
        self.users
            .iter()
            .chain(std::iter::once(&self.bot))
            .filter(|u| {
                content.contains(&format!("<@{}>", u.id))
                    || content.contains(&format!("<@!{}>", u.id))
            })
            .map(User::json)
            .collect()
    }

    /// The message object of `message` (with `author`), as Discord sends it.
    pub(super) fn message_json(
        &self,
        message: &SentMessage,
        author: &User,
        mentions: Vec<Value>,
    ) -> Value {
        let channel = self.channels.get(&message.channel_id);
        let mut json = json!({
            "id": message.id,
            "type": if message.reply_to.is_some() { 19 } else { 0 },
            "channel_id": message.channel_id,
            "author": author.json(),
            "content": message.content,
            "timestamp": "2026-01-01T00:00:00.000000+00:00",
            "edited_timestamp": null,
            "mentions": mentions,
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "components": buttons_json(&message.buttons),
            "flags": 0,
        });
        if let Some(guild) = channel
            .map(|c| c.guild_id.clone())
            .filter(|g| !g.is_empty())
        {
            json["guild_id"] = json!(guild);
            json["member"] = json!({"nick": null, "roles": []});
        }
        if let Some(reply) = &message.reply_to {
            json["message_reference"] =
                json!({"message_id": reply, "channel_id": message.channel_id});
            if let Some(original) = self.messages.iter().find(|m| &m.id == reply) {
                let author = if original.author_id == self.bot.id {
                    self.bot.json()
                } else {
                    json!({"id": original.author_id, "username": "someone"})
                };
                json["referenced_message"] = json!({"id": original.id,
                    "channel_id": original.channel_id, "author": author,
                    "content": original.content});
            }
        }
        json
    }

    pub(super) fn take_fault(&mut self, method: &str, path: &str) -> Option<Fault> {
        let at = self
            .faults
            .iter()
            .position(|(m, p, _)| m == method && path.contains(p.as_str()))?;
        Some(self.faults.remove(at).2)
    }

    pub(super) fn gateway_stats(&self) -> GatewayStats {
        let mut stats = self.gateway.stats.clone();
        stats.live = self.gateway.live.len();
        stats
    }
}

/// The components of a message's buttons (one row).
pub(super) fn buttons_json(buttons: &[(String, String)]) -> Value {
    if buttons.is_empty() {
        return json!([]);
    }
    let row: Vec<Value> = buttons
        .iter()
        .map(|(label, id)| json!({"type": 2, "style": 1, "label": label, "custom_id": id}))
        .collect();
    json!([{"type": 1, "components": row}])
}

/// The buttons of a request's `components`.
pub(super) fn buttons_of(components: &Value) -> Vec<(String, String)> {
    components
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|row| row["components"].as_array().cloned().unwrap_or_default())
        .map(|b| {
            (
                b["label"].as_str().unwrap_or_default().to_string(),
                b["custom_id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}
