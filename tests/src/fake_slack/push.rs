//! What the test's users do: post a message (in a DM, a channel, a thread, with files), press a
//! button on one of the bot's messages, run a slash command. Each is recorded and, for Socket
//! Mode, queued as an envelope; its Events API payloads are returned too, for a test that
//! delivers them over HTTP instead.

use bytes::Bytes;
use serde_json::{Value, json};

use super::{
    FakeSlack, payloads,
    state::{File, Message},
};

/// A message a user posts.
#[derive(Debug, Clone)]
pub struct UserMessage {
    pub team: Option<String>,
    pub channel: String,
    pub user: String,
    pub text: String,
    pub thread_ts: Option<String>,
    /// (name, mimetype, bytes)
    pub files: Vec<(String, String, Vec<u8>)>,
}

impl UserMessage {
    pub fn new(channel: &str, user: &str, text: &str) -> Self {
        Self {
            team: None,
            channel: channel.to_owned(),
            user: user.to_owned(),
            text: text.to_owned(),
            thread_ts: None,
            files: Vec::new(),
        }
    }

    /// In the thread under `ts`.
    pub fn in_thread(mut self, ts: &str) -> Self {
        self.thread_ts = Some(ts.to_owned());
        self
    }

    /// In workspace `team` (default: the first).
    pub fn in_team(mut self, team: &str) -> Self {
        self.team = Some(team.to_owned());
        self
    }

    pub fn with_file(mut self, name: &str, mimetype: &str, bytes: &[u8]) -> Self {
        self.files
            .push((name.to_owned(), mimetype.to_owned(), bytes.to_vec()));
        self
    }
}

/// A pushed message: its ts and the `event_callback` payloads Slack sends for it (the
/// `message` event, and `app_mention` when it names the bot outside a DM).
#[derive(Debug, Clone)]
pub struct Pushed {
    pub ts: String,
    pub callbacks: Vec<Value>,
}

impl FakeSlack {
    /// A user posts `message`; its events go out over Socket Mode.
    pub fn push(&self, message: &UserMessage) -> Pushed {
        self.post(message, true)
    }

    /// A user posts `message`; nothing is queued for Socket Mode (deliver the callbacks with
    /// [`FakeSlack::post_event`]).
    pub fn compose(&self, message: &UserMessage) -> Pushed {
        self.post(message, false)
    }

    fn post(&self, message: &UserMessage, queue: bool) -> Pushed {
        self.shared.write(|world| {
            let team = match &message.team {
                Some(team) => team.clone(),
                None => world
                    .teams
                    .first()
                    .map(|t| t.id.clone())
                    .unwrap_or_default(),
            };
            let ts = world.fresh_ts();
            let mut files = Vec::new();
            for (name, mimetype, bytes) in &message.files {
                let id = world.fresh_id("F");
                let base = format!("{}/files-pri/{team}-{id}", world.base_url);
                files.push(
                    json!({"id": id, "name": name, "title": name, "mimetype": mimetype,
                    "filetype": name.rsplit('.').next().unwrap_or_default(), "size": bytes.len(),
                    "url_private": format!("{base}/{name}"),
                    "url_private_download": format!("{base}/download/{name}")}),
                );
                world.files.push(File {
                    id,
                    team: team.clone(),
                    name: name.clone(),
                    title: name.clone(),
                    bytes: Some(Bytes::from(bytes.clone())),
                    shared_to: Some((message.channel.clone(), message.thread_ts.clone())),
                    announced: bytes.len() as u64,
                });
            }
            let stored = Message {
                team: team.clone(),
                channel: message.channel.clone(),
                ts: ts.clone(),
                thread_ts: message.thread_ts.clone(),
                text: message.text.clone(),
                blocks: json!([]),
                user: message.user.clone(),
                from_bot: false,
                updates: 0,
                history: vec![message.text.clone()],
            };
            let kind = world.channel_kind(&message.channel);
            let mut callbacks = vec![{
                let event = payloads::message_event(world, &stored, &kind, &files);
                payloads::event_callback(world, &team, event)
            }];
            let bot = world
                .team(&team)
                .map(|t| t.bot_user_id.clone())
                .unwrap_or_default();
            if kind != "im" && message.text.contains(&format!("<@{bot}>")) {
                let event = payloads::app_mention_event(&stored);
                callbacks.push(payloads::event_callback(world, &team, event));
            }
            world.messages.push(stored);
            if queue {
                for callback in &callbacks {
                    world.enqueue("events_api", callback.clone());
                }
            }
            Pushed { ts, callbacks }
        })
    }

    /// `user` presses the button `action_id` with `value` on the bot's message `ts` in
    /// `channel`; returns the interaction's envelope id.
    pub fn press(
        &self,
        channel: &str,
        ts: &str,
        user: &str,
        action_id: &str,
        value: &str,
    ) -> String {
        self.shared.write(|world| {
            let message = world
                .messages
                .iter()
                .find(|m| m.channel == channel && m.ts == ts)
                .cloned()
                .unwrap_or_else(|| panic!("fake-slack: no message {ts} in {channel}"));
            let payload = payloads::block_actions(world, &message, user, action_id, value);
            world.enqueue("interactive", payload)
        })
    }

    /// `user` runs `command` (`/hermes`) with `text` in `channel` of the first workspace;
    /// returns the envelope id.
    pub fn slash(&self, channel: &str, user: &str, command: &str, text: &str) -> String {
        self.shared.write(|world| {
            let team = world
                .teams
                .first()
                .map(|t| t.id.clone())
                .unwrap_or_default();
            let payload = payloads::slash_command(world, &team, channel, user, command, text);
            world.enqueue("slash_commands", payload)
        })
    }
}
