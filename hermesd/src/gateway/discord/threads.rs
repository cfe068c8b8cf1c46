//! Hermes' automatic threads (`DISCORD_AUTO_THREAD`): a message in a server channel that the
//! agent answers is answered in a new public thread made on it
//! (`POST /channels/{channel}/messages/{message}/threads`, named from its text as Hermes names
//! it, archived after a day without activity), which is then its conversation. None when the
//! setting is off, in a channel of `DISCORD_NO_THREAD_CHANNELS` or a free-response channel (by
//! id, name or `#name`, as Hermes matches them), or for a message that is itself a reply (whose
//! id the adapter remembers, a bounded few, as it reads messages). The new thread is remembered
//! as a thread of its channel and as one the bot is in, so later messages there need no mention.
//! A thread Discord says the message already has (code 160004: opened before a restart) has the
//! message's id, as every thread made on a message does, and is taken as the one opened.

use std::collections::{HashSet, VecDeque};

use serde_json::json;

use super::{
    Discord,
    channels::Channel,
    rest::{Body, Verb},
};
use crate::gateway::adapter::{ChatRef, PlatformError};

/// Hermes' `auto_archive_duration` for the threads it opens, in minutes.
pub const AUTO_ARCHIVE_MINUTES: u64 = 1440;
/// A thread name's length before Hermes cuts it (Discord takes at most 100 characters).
const NAME_CHARS: usize = 80;
/// Reply ids remembered at most.
const MAX_REPLIES: usize = 1024;
/// Discord's code for a message that already has a thread.
const ALREADY_THREADED: &str = "(160004)";

/// The ids of recent messages that are replies, oldest dropped first.
#[derive(Debug, Default)]
pub struct Replies {
    order: VecDeque<String>,
    ids: HashSet<String>,
}

impl Replies {
    pub fn note(&mut self, id: &str) {
        if id.is_empty() || self.ids.contains(id) {
            return;
        }
        if self.order.len() >= MAX_REPLIES
            && let Some(oldest) = self.order.pop_front()
        {
            self.ids.remove(&oldest);
        }
        self.order.push_back(id.to_string());
        self.ids.insert(id.to_string());
    }

    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }
}

/// The name Hermes gives a thread opened on a message of `text`: mentions of users, roles and
/// channels (`<@id>`, `<@!id>`, `<@&id>`, `<#id>`) removed, whitespace collapsed to single
/// spaces (one line), at most 80 characters (a longer text: 77 and `...`), `Hermes` when
/// nothing is left.
pub fn thread_name(text: &str) -> String {
    let collapsed = strip_mentions(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if collapsed.is_empty() {
        return "Hermes".to_string();
    }
    if collapsed.chars().count() <= NAME_CHARS {
        return collapsed;
    }
    let mut cut: String = collapsed.chars().take(NAME_CHARS - 3).collect();
    cut.push_str("...");
    cut
}

/// `text` without `<@id>`, `<@!id>`, `<@&id>` and `<#id>`.
fn strip_mentions(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        match mention_len(tail) {
            Some(len) => rest = &tail[len..],
            None => {
                out.push('<');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The length of the mention `tail` starts with, if it starts with one.
fn mention_len(tail: &str) -> Option<usize> {
    let body = if let Some(user) = tail.strip_prefix("<@") {
        user.strip_prefix(['!', '&']).unwrap_or(user)
    } else {
        tail.strip_prefix("<#")?
    };
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || body.as_bytes().get(digits) != Some(&b'>') {
        return None;
    }
    Some(tail.len() - body.len() + digits + 1)
}

/// Whether `list` names the channel `id` (or `name`, `#name`); `*` counts when `wildcard`.
fn listed(list: &[String], id: &str, name: &str, wildcard: bool) -> bool {
    list.iter().any(|entry| {
        (wildcard && entry == "*")
            || entry == id
            || (!name.is_empty() && (entry == name || entry.strip_prefix('#') == Some(name)))
    })
}

impl Discord {
    /// Note that the message `id` replies to another (it is answered where it was written).
    pub(super) fn note_reply(&self, id: &str) {
        match self.replies.lock() {
            Ok(mut replies) => replies.note(id),
            Err(poisoned) => poisoned.into_inner().note(id),
        }
    }

    fn is_reply(&self, id: &str) -> bool {
        match self.replies.lock() {
            Ok(replies) => replies.contains(id),
            Err(poisoned) => poisoned.into_inner().contains(id),
        }
    }

    /// The thread opened on the message `message_id` (of `text`) in `chat` for its answer; `None`
    /// where Hermes answers in the channel.
    pub(super) async fn auto_thread(
        &self,
        chat: &ChatRef,
        message_id: &str,
        text: &str,
    ) -> Result<Option<String>, PlatformError> {
        if !self.settings.auto_thread
            || !chat.thread_id.is_empty()
            || message_id.is_empty()
            || self.is_reply(message_id)
        {
            return Ok(None);
        }
        let channel_id = chat.chat_id.as_str();
        let channel = self
            .with_channels(|known| known.get(channel_id).cloned())
            .unwrap_or_default();
        if !channel.parent_id.is_empty() {
            return Ok(None);
        }
        let name = channel.name.as_str();
        if listed(&self.settings.no_thread_channels, channel_id, name, false)
            || listed(&self.free_channels, channel_id, name, true)
        {
            return Ok(None);
        }
        let thread_name = thread_name(text);
        let path = format!("/channels/{channel_id}/messages/{message_id}/threads");
        let body = json!({"name": thread_name, "auto_archive_duration": AUTO_ARCHIVE_MINUTES});
        let made = match self.rest.call(Verb::Post, &path, Body::Json(body)).await {
            Ok(made) => made,
            Err(PlatformError::Rejected(why)) if why.ends_with(ALREADY_THREADED) => {
                json!({"id": message_id})
            }
            Err(e) => return Err(e),
        };
        let Some(thread) = made["id"].as_str().filter(|id| !id.is_empty()) else {
            return Err(PlatformError::Unavailable(
                "Discord named no thread id".into(),
            ));
        };
        let learnt = Channel {
            name: made["name"]
                .as_str()
                .unwrap_or(&thread_name)
                .chars()
                .take(100)
                .collect(),
            guild_id: channel.guild_id.clone(),
            parent_id: channel_id.to_string(),
        };
        self.with_channels(|known| known.insert(thread.to_string(), learnt));
        self.note_written(thread);
        Ok(Some(thread.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_is_named_from_the_text_as_hermes_names_it() {
        assert_eq!(thread_name("  plan the\n\ttrip  "), "plan the trip");
        assert_eq!(thread_name("<@12> hi <@!3> <@&4> in <#5>"), "hi in");
        assert_eq!(thread_name("<@> <#x> a<b"), "<@> <#x> a<b");
        assert_eq!(thread_name(""), "Hermes");
        assert_eq!(thread_name("<@99>  \n"), "Hermes");
        let long = "é".repeat(81);
        let named = thread_name(&long);
        assert_eq!(named.chars().count(), 80);
        assert!(named.ends_with("...") && named.starts_with("ééé"));
        assert_eq!(thread_name(&"x".repeat(80)), "x".repeat(80));
    }

    #[test]
    fn channels_are_listed_by_id_name_or_hash_name() {
        let list = vec!["1".to_string(), "#lounge".to_string(), "ops".to_string()];
        assert!(listed(&list, "1", "", false));
        assert!(listed(&list, "2", "lounge", false));
        assert!(listed(&list, "3", "ops", false));
        assert!(!listed(&list, "4", "general", false));
        let all = vec!["*".to_string()];
        assert!(listed(&all, "4", "", true) && !listed(&all, "4", "", false));
    }

    #[test]
    fn replies_are_remembered_within_a_bound() {
        let mut replies = Replies::default();
        for i in 0..(MAX_REPLIES + 10) {
            replies.note(&i.to_string());
        }
        assert!(replies.ids.len() <= MAX_REPLIES && replies.order.len() <= MAX_REPLIES);
        assert!(!replies.contains("0"), "the oldest is dropped");
        assert!(replies.contains(&(MAX_REPLIES + 9).to_string()));
    }
}
