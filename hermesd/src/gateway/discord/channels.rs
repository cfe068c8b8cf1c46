//! What hermesd knows of Discord's channels and guilds, learnt from the Gateway (`GUILD_CREATE`
//! lists a guild's channels and active threads; `CHANNEL_*`, `THREAD_*` keep them current) or
//! asked of the REST API when a message comes from a channel not seen yet: whether a channel is
//! a thread (and of which channel), and the names a chat is shown by. Bounded.

use std::collections::HashMap;

use serde_json::Value;

/// Channels and guilds remembered at most; past that the maps start over.
const MAX_ENTRIES: usize = 10_000;

/// Channel types that are threads (announcement, public and private threads).
const THREAD_TYPES: [u64; 3] = [10, 11, 12];

/// One channel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Channel {
    pub name: String,
    pub guild_id: String,
    /// The channel a thread is in; empty for a channel that is no thread.
    pub parent_id: String,
}

impl Channel {
    /// The channel of a Discord channel object; `None` for a malformed one.
    pub fn from_json(channel: &Value, guild_id: &str) -> Option<(String, Self)> {
        let id = channel["id"].as_str()?.to_string();
        let thread = channel["type"]
            .as_u64()
            .is_some_and(|t| THREAD_TYPES.contains(&t));
        let parent_id = if thread {
            channel["parent_id"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        } else {
            String::new()
        };
        let guild_id = channel["guild_id"].as_str().unwrap_or(guild_id).to_string();
        let name = channel["name"].as_str().unwrap_or_default();
        Some((
            id,
            Self {
                name: name.chars().take(100).collect(),
                guild_id,
                parent_id,
            },
        ))
    }
}

/// The channels and guild names known.
#[derive(Debug, Default)]
pub struct Channels {
    channels: HashMap<String, Channel>,
    guilds: HashMap<String, String>,
}

impl Channels {
    pub fn get(&self, id: &str) -> Option<&Channel> {
        self.channels.get(id)
    }

    pub fn guild_name(&self, id: &str) -> &str {
        self.guilds.get(id).map_or("", String::as_str)
    }

    pub fn insert(&mut self, id: String, channel: Channel) {
        if self.channels.len() >= MAX_ENTRIES && !self.channels.contains_key(&id) {
            self.channels.clear();
        }
        self.channels.insert(id, channel);
    }

    /// Learn from a dispatch (`name`, `data`) what it says of channels and guilds.
    pub fn learn(&mut self, name: &str, data: &Value) {
        match name {
            "GUILD_CREATE" | "GUILD_UPDATE" => {
                let Some(guild_id) = data["id"].as_str() else {
                    return;
                };
                if let Some(name) = data["name"].as_str() {
                    if self.guilds.len() >= MAX_ENTRIES && !self.guilds.contains_key(guild_id) {
                        self.guilds.clear();
                    }
                    self.guilds
                        .insert(guild_id.to_string(), name.chars().take(100).collect());
                }
                for list in ["channels", "threads"] {
                    for channel in data[list].as_array().into_iter().flatten() {
                        if let Some((id, channel)) = Channel::from_json(channel, guild_id) {
                            self.insert(id, channel);
                        }
                    }
                }
            }
            "CHANNEL_CREATE" | "CHANNEL_UPDATE" | "THREAD_CREATE" | "THREAD_UPDATE" => {
                if let Some((id, channel)) = Channel::from_json(data, "") {
                    self.insert(id, channel);
                }
            }
            "THREAD_LIST_SYNC" => {
                let guild_id = data["guild_id"].as_str().unwrap_or_default();
                for thread in data["threads"].as_array().into_iter().flatten() {
                    if let Some((id, channel)) = Channel::from_json(thread, guild_id) {
                        self.insert(id, channel);
                    }
                }
            }
            "CHANNEL_DELETE" | "THREAD_DELETE" => {
                if let Some(id) = data["id"].as_str() {
                    self.channels.remove(id);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn guilds_channels_and_threads_are_learnt() {
        let mut known = Channels::default();
        known.learn(
            "GUILD_CREATE",
            &json!({"id": "1", "name": "Friends",
                "channels": [{"id": "10", "type": 0, "name": "general"}],
                "threads": [{"id": "11", "type": 11, "name": "plans", "parent_id": "10"}]}),
        );
        assert_eq!(known.guild_name("1"), "Friends");
        assert_eq!(known.get("10").unwrap().parent_id, "");
        assert_eq!(known.get("10").unwrap().guild_id, "1");
        assert_eq!(known.get("11").unwrap().parent_id, "10");
        known.learn(
            "THREAD_CREATE",
            &json!({"id": "12", "type": 12, "guild_id": "1", "parent_id": "10", "name": "p"}),
        );
        assert_eq!(known.get("12").unwrap().parent_id, "10");
        known.learn("THREAD_DELETE", &json!({"id": "12", "type": 12}));
        assert!(known.get("12").is_none());
        for i in 0..(MAX_ENTRIES + 5) {
            known.insert(i.to_string(), Channel::default());
        }
        assert!(known.channels.len() <= MAX_ENTRIES);
    }
}
