//! Discord's dispatches as the gateway's [`Inbound`]: `MESSAGE_CREATE` (ordinary messages and
//! replies only; the bot's own and every other bot's are dropped, as Hermes does by default
//! with `DISCORD_ALLOW_BOTS=none`) and `INTERACTION_CREATE` (a button press, or an application
//! command, which becomes the text `/name args`). A message in a DM is a direct message; in a
//! guild channel or thread a group message, with how it addresses the bot: a `<@id>` mention
//! (removed from the text, as Hermes does), a reply to the bot, or mentions of other bots only.
//! The update id is the message's (or interaction's) snowflake.

use base64::Engine;
use serde_json::Value;

use crate::gateway::adapter::{Addressing, Attachment, ButtonPress, ChatKind, ChatRef, Inbound};

/// A message's `type` when it replies to another.
pub const REPLY: u64 = 19;

/// A message's `flags` bit for a voice message.
const IS_VOICE_MESSAGE: u64 = 1 << 13;

/// The bot, as READY named it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Me {
    pub id: String,
    pub application_id: String,
}

/// Where a message was written, resolved by the adapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub kind: ChatKind,
    pub chat: ChatRef,
    pub chat_name: String,
    /// A thread the bot has written in.
    pub in_my_thread: bool,
}

/// How an interaction is acknowledged once stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    pub id: String,
    pub token: String,
    /// The callback's body.
    pub response: Value,
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// The snowflake `id` as an update id.
fn snowflake(id: &Value) -> Option<i64> {
    id.as_str()?.parse().ok()
}

/// The author's name as Hermes shows it: the guild nickname, the display name, the username.
fn display_name(user: &Value, member: &Value) -> String {
    [&member["nick"], &user["global_name"], &user["username"]]
        .into_iter()
        .filter_map(Value::as_str)
        .find(|s| !s.trim().is_empty())
        .unwrap_or_default()
        .chars()
        .take(128)
        .collect()
}

/// The channel and guild of a `MESSAGE_CREATE` the gateway takes; `None` for one it drops.
pub fn wanted_message<'a>(data: &'a Value, me: &Me) -> Option<(&'a str, &'a str)> {
    // Default (0) and reply (19); joins, pins, thread starters and the like are not talk.
    if !matches!(data["type"].as_u64(), Some(0 | 19)) {
        return None;
    }
    let author = &data["author"];
    if author["bot"].as_bool() == Some(true) || author["id"].as_str() == Some(me.id.as_str()) {
        return None;
    }
    if data["webhook_id"].is_string() {
        return None;
    }
    let channel = data["channel_id"].as_str()?;
    Some((channel, data["guild_id"].as_str().unwrap_or_default()))
}

/// The message `data` (wanted: see [`wanted_message`]) written at `place`.
pub fn message(data: &Value, me: &Me, place: Place) -> Option<Inbound> {
    let update_id = snowflake(&data["id"])?;
    let author = &data["author"];
    let mine = |id: &str| !me.id.is_empty() && id == me.id;
    let mentions = data["mentions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let content = data["content"].as_str().unwrap_or_default();
    let tokens = [format!("<@{}>", me.id), format!("<@!{}>", me.id)];
    let inline = !me.id.is_empty() && tokens.iter().any(|t| content.contains(t.as_str()));
    let mentions_me = inline
        || mentions
            .iter()
            .any(|m| mine(m["id"].as_str().unwrap_or("")));
    let referenced = &data["referenced_message"];
    let replies_to_me = mine(referenced["author"]["id"].as_str().unwrap_or(""));
    let other_bots = mentions
        .iter()
        .any(|m| m["bot"].as_bool() == Some(true) && !mine(m["id"].as_str().unwrap_or("")));
    let mut cleaned = content.to_string();
    if !me.id.is_empty() {
        for token in &tokens {
            cleaned = cleaned.replace(token.as_str(), "");
        }
    }
    let flags = data["flags"].as_u64().unwrap_or(0);
    Some(Inbound {
        update_id,
        chat: place.chat,
        kind: place.kind,
        user_id: text(&author["id"]),
        user_name: display_name(author, &data["member"]),
        chat_name: place.chat_name,
        message_id: text(&data["id"]),
        text: cleaned.trim().to_string(),
        edited: false,
        reply_to: referenced["content"]
            .as_str()
            .filter(|c| !c.is_empty())
            .map(str::to_string),
        attachments: data["attachments"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| attachment(a, flags))
            .collect(),
        press: None,
        addressing: Addressing {
            mentions_me,
            replies_to_me,
            names_only_other_bots: other_bots && !mentions_me,
            in_my_thread: place.in_my_thread,
        },
        in_forum: false,
    })
}

/// An attachment; its file id is its size and URL, encoded so it holds no `:`.
fn attachment(a: &Value, flags: u64) -> Option<Attachment> {
    let url = a["url"].as_str()?;
    let content_type = a["content_type"].as_str().unwrap_or_default();
    let kind = match content_type.split('/').next().unwrap_or_default() {
        "image" => "photo",
        "audio" if flags & IS_VOICE_MESSAGE != 0 => "voice",
        "audio" => "audio",
        _ => "document",
    };
    Some(Attachment {
        kind,
        file_id: encode_file(url, a["size"].as_u64().unwrap_or(0)),
        file_name: a["filename"]
            .as_str()
            .unwrap_or_default()
            .chars()
            .take(200)
            .collect(),
        size: a["size"].as_u64().unwrap_or(0),
    })
}

/// A file's URL and size as a file id, `{size}.{base64url of the URL}`: no `:`, which the
/// gateway's attachment marker splits on, and the size kept for the cap checked before any
/// download (the marker carries no size of its own).
pub fn encode_file(url: &str, size: u64) -> String {
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(url);
    format!("{size}.{url}")
}

/// The URL and size of a file id made by [`encode_file`].
pub fn decode_file(file_id: &str) -> Option<(String, u64)> {
    let (size, url) = file_id.split_once('.')?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(url)
        .ok()?;
    Some((String::from_utf8(bytes).ok()?, size.parse().ok()?))
}

/// The channel and guild of an `INTERACTION_CREATE`, with the channel object Discord sent along.
pub fn interaction_place(data: &Value) -> Option<(&str, &str, &Value)> {
    let channel = data["channel_id"]
        .as_str()
        .or_else(|| data["channel"]["id"].as_str())?;
    Some((
        channel,
        data["guild_id"].as_str().unwrap_or_default(),
        &data["channel"],
    ))
}

/// A button press (type 3) or an application command (type 2) at `place`, and how to
/// acknowledge it; `None` for other interactions.
pub fn interaction(data: &Value, place: Place) -> Option<(Inbound, Ack)> {
    let update_id = snowflake(&data["id"])?;
    let id = text(&data["id"]);
    let token = text(&data["token"]);
    if token.is_empty() {
        return None;
    }
    let member = &data["member"];
    let user = if member["user"].is_object() {
        &member["user"]
    } else {
        &data["user"]
    };
    if user["bot"].as_bool() == Some(true) {
        return None;
    }
    let mut inbound = Inbound {
        update_id,
        chat: place.chat,
        kind: place.kind,
        user_id: text(&user["id"]),
        user_name: display_name(user, member),
        chat_name: place.chat_name,
        message_id: String::new(),
        text: String::new(),
        edited: false,
        reply_to: None,
        attachments: Vec::new(),
        press: None,
        addressing: Addressing::default(),
        in_forum: false,
    };
    let response = match data["type"].as_u64() {
        Some(3) => {
            inbound.press = Some(ButtonPress {
                id: format!("{id}:{token}"),
                data: text(&data["data"]["custom_id"]),
                message_id: text(&data["message"]["id"]),
            });
            // DEFERRED_UPDATE_MESSAGE: the button's message is edited afterwards.
            serde_json::json!({"type": 6})
        }
        Some(2) => {
            let command = command_text(&data["data"])?;
            inbound.message_id = id.clone();
            inbound.addressing.mentions_me = true;
            let shown: String = command.chars().take(1900).collect();
            inbound.text = command;
            // CHANNEL_MESSAGE_WITH_SOURCE, ephemeral (flag 64): only the caller sees it.
            serde_json::json!({"type": 4, "data": {"content": format!("`{shown}`"), "flags": 64,
                "allowed_mentions": {"parse": []}}})
        }
        _ => return None,
    };
    Some((
        inbound,
        Ack {
            id,
            token,
            response,
        },
    ))
}

/// `/name args` of an application command's data (its options' values, in order).
fn command_text(data: &Value) -> Option<String> {
    let name = data["name"].as_str().filter(|n| !n.is_empty())?;
    let mut words = vec![format!("/{name}")];
    collect_options(&data["options"], &mut words);
    Some(words.join(" ").trim().to_string())
}

fn collect_options(options: &Value, words: &mut Vec<String>) {
    for option in options.as_array().into_iter().flatten() {
        match option["type"].as_u64() {
            // A subcommand (group): its name, then its own options.
            Some(1 | 2) => {
                words.push(text(&option["name"]));
                collect_options(&option["options"], words);
            }
            _ => match &option["value"] {
                Value::String(s) if !s.trim().is_empty() => words.push(s.trim().to_string()),
                Value::String(_) | Value::Null => {}
                other => words.push(other.to_string()),
            },
        }
    }
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
