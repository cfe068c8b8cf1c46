//! What users do, as the test scripts it: guilds, channels, threads and DMs made; messages
//! written (with mentions, replies and attachments served by the fake CDN); buttons pressed and
//! application commands run. Each becomes the Gateway dispatch Discord sends the bot.

use std::time::Instant;

use serde_json::{Value, json};

use super::{
    FakeDiscord, SentMessage, User,
    state::{Channel, Interaction, World},
};

/// A message a user writes.
#[derive(Debug, Clone)]
pub struct Post {
    pub channel: String,
    pub author: User,
    pub content: String,
    pub reply_to: Option<String>,
    /// `(file name, bytes, content type)`.
    pub files: Vec<(String, Vec<u8>, String)>,
}

impl Post {
    pub fn new(channel: &str, author: &User, content: &str) -> Self {
        Self {
            channel: channel.to_string(),
            author: author.clone(),
            content: content.to_string(),
            reply_to: None,
            files: Vec::new(),
        }
    }

    pub fn reply_to(mut self, message_id: &str) -> Self {
        self.reply_to = Some(message_id.to_string());
        self
    }

    pub fn file(mut self, name: &str, bytes: &[u8], content_type: &str) -> Self {
        self.files
            .push((name.to_string(), bytes.to_vec(), content_type.to_string()));
        self
    }
}

fn channel_of(world: &World, id: &str) -> Channel {
    world
        .channels
        .get(id)
        .cloned()
        .unwrap_or_else(|| panic!("fake-discord: no channel {id}"))
}

/// The interaction fields every kind shares.
fn interaction_base(
    world: &mut World,
    kind: u8,
    channel: &Channel,
    user: &User,
) -> (String, Value) {
    let id = world.snowflake();
    let token = format!("itok-{id}-secret");
    world.interactions.insert(
        id.clone(),
        Interaction {
            token: token.clone(),
            created: Instant::now(),
        },
    );
    let mut data = json!({"id": id, "application_id": world.application_id, "type": kind,
        "token": token, "version": 1, "channel_id": channel.id, "channel": channel.json(),
        "locale": "en-US"});
    if channel.guild_id.is_empty() {
        data["user"] = user.json();
    } else {
        data["guild_id"] = json!(channel.guild_id);
        data["member"] = json!({"user": user.json(), "nick": null, "roles": []});
    }
    (id, data)
}

impl FakeDiscord {
    /// A guild (server) the bot is in; returns its id.
    pub fn guild(&self, name: &str) -> String {
        self.shared.write(|world| {
            let id = world.snowflake();
            world.guilds.insert(id.clone(), name.to_string());
            id
        })
    }

    /// A text channel of `guild`; returns its id.
    pub fn channel(&self, guild: &str, name: &str) -> String {
        self.add_channel(guild, "", 0, name, None)
    }

    /// A public thread in the channel `parent`, announced to the bot; returns its id.
    pub fn thread(&self, parent: &str, name: &str) -> String {
        let guild = self.shared.read(|w| channel_of(w, parent).guild_id);
        self.add_channel(&guild, parent, 11, name, None)
    }

    /// The DM channel of `user` with the bot; returns its id.
    pub fn dm(&self, user: &User) -> String {
        self.add_channel("", "", 1, "", Some(user.clone()))
    }

    fn add_channel(
        &self,
        guild: &str,
        parent: &str,
        kind: u64,
        name: &str,
        recipient: Option<User>,
    ) -> String {
        self.shared.write(|world| {
            let id = world.snowflake();
            let channel = Channel {
                id: id.clone(),
                kind,
                guild_id: guild.to_string(),
                parent_id: parent.to_string(),
                name: name.to_string(),
                recipient,
            };
            let event = match kind {
                11 => Some("THREAD_CREATE"),
                0 => Some("CHANNEL_CREATE"),
                _ => None,
            };
            if let Some(event) = event {
                world.dispatch(event, channel.json());
            }
            world.channels.insert(id.clone(), channel);
            id
        })
    }

    /// A user writes `post`; returns the message's id.
    pub fn push(&self, post: &Post) -> String {
        let base = self.base();
        self.shared.write(|world| {
            world.remember(&post.author);
            let id = world.snowflake();
            let mut attachments = Vec::new();
            for (index, (name, bytes, content_type)) in post.files.iter().enumerate() {
                let stored = format!("{id}-{index}-{name}");
                world
                    .files
                    .insert(stored.clone(), (bytes.clone().into(), content_type.clone()));
                attachments.push(json!({"id": format!("{id}{index}"), "filename": name,
                    "size": bytes.len(), "url": format!("{base}/attachments/{stored}"),
                    "proxy_url": format!("{base}/attachments/{stored}"),
                    "content_type": content_type}));
            }
            let message = SentMessage {
                id: id.clone(),
                channel_id: post.channel.clone(),
                author_id: post.author.id.clone(),
                content: post.content.clone(),
                buttons: Vec::new(),
                edits: 0,
                deleted: false,
                files: post.files.iter().map(|(n, ..)| n.clone()).collect(),
                reply_to: post.reply_to.clone(),
            };
            let mut mentions = world.mentioned(&post.content);
            let replied_to_bot = post.reply_to.as_ref().is_some_and(|r| {
                world
                    .messages
                    .iter()
                    .any(|m| &m.id == r && m.author_id == world.bot.id)
            });
            if replied_to_bot && !mentions.iter().any(|m| m["id"] == json!(world.bot.id)) {
                // A reply pings the author it answers.
                mentions.push(world.bot.json());
            }
            let mut json = world.message_json(&message, &post.author, mentions);
            json["attachments"] = Value::Array(attachments);
            world.messages.push(message);
            world.dispatch("MESSAGE_CREATE", json);
            id
        })
    }

    /// `user` presses the button `custom_id` of the message `message_id`; returns the
    /// interaction's id.
    pub fn press(&self, message_id: &str, custom_id: &str, user: &User) -> String {
        self.shared.write(|world| {
            let message = world
                .messages
                .iter()
                .find(|m| m.id == message_id)
                .cloned()
                .unwrap_or_else(|| panic!("fake-discord: no message {message_id}"));
            let channel = channel_of(world, &message.channel_id);
            let (id, mut data) = interaction_base(world, 3, &channel, user);
            let bot = world.bot.clone();
            data["message"] = world.message_json(&message, &bot, Vec::new());
            data["data"] = json!({"custom_id": custom_id, "component_type": 2});
            world.dispatch("INTERACTION_CREATE", data);
            id
        })
    }

    /// `user` runs the application command `/name` in `channel`, with `args` as its `args`
    /// option (none when empty); returns the interaction's id.
    pub fn slash(&self, channel: &str, user: &User, name: &str, args: &str) -> String {
        self.shared.write(|world| {
            let channel = channel_of(world, channel);
            let (id, mut data) = interaction_base(world, 2, &channel, user);
            let options: Vec<Value> = if args.is_empty() {
                Vec::new()
            } else {
                vec![json!({"name": "args", "type": 3, "value": args})]
            };
            let command_id = world.snowflake();
            data["data"] = json!({"id": command_id, "name": name, "type": 1, "options": options});
            world.dispatch("INTERACTION_CREATE", data);
            id
        })
    }
}
