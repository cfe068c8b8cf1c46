//! Telegram updates as the gateway's [`Inbound`]: one update's JSON at a time, so an update of a
//! kind this build does not know is skipped (and confirmed) instead of failing the whole batch.
//! The bot's own messages (which Telegram may hand back in groups) are skipped too.

use frankenstein::{
    types::{ChatType, MaybeInaccessibleMessage, Message},
    updates::{Update, UpdateContent},
};
use serde_json::Value;

use super::addressing::{self, Me};
use crate::gateway::adapter::{Addressing, Attachment, ButtonPress, ChatKind, ChatRef, Inbound};

/// The update id of a raw update, if it has one.
pub fn update_id(raw: &Value) -> Option<i64> {
    raw.get("update_id").and_then(Value::as_i64)
}

/// The inbound message of a raw update, for the bot `me`; `None` for kinds the gateway does not
/// take and for the bot's own messages.
pub fn inbound(raw: Value, me: &Me) -> Option<Inbound> {
    let update: Update = match serde_json::from_value(raw) {
        Ok(update) => update,
        Err(e) => {
            tracing::debug!(error = %e, "a Telegram update of an unknown shape was skipped");
            return None;
        }
    };
    let update_id = i64::from(update.update_id);
    match update.content {
        UpdateContent::Message(message) | UpdateContent::EditedMessage(message)
            if is_mine(&message, me) =>
        {
            None
        }
        UpdateContent::Message(message) => Some(from_message(update_id, &message, false, me)),
        UpdateContent::EditedMessage(message) => Some(from_message(update_id, &message, true, me)),
        UpdateContent::CallbackQuery(query) => {
            let MaybeInaccessibleMessage::Message(message) = query.message? else {
                return None;
            };
            let mut inbound = from_message(update_id, &message, false, me);
            inbound.user_id = query.from.id.to_string();
            inbound.user_name = user_name(&query.from);
            inbound.text = String::new();
            inbound.attachments.clear();
            inbound.reply_to = None;
            inbound.addressing = Addressing::default();
            inbound.press = Some(ButtonPress {
                id: query.id,
                data: query.data.unwrap_or_default(),
                message_id: message.message_id.to_string(),
            });
            Some(inbound)
        }
        _ => None,
    }
}

fn user_name(user: &frankenstein::types::User) -> String {
    user.username
        .clone()
        .unwrap_or_else(|| user.first_name.clone())
}

/// A chat's title, or for a private chat its person's name, bounded.
fn chat_name(chat: &frankenstein::types::Chat) -> String {
    let name = match (&chat.title, &chat.first_name, &chat.last_name) {
        (Some(title), _, _) => title.clone(),
        (None, Some(first), Some(last)) => format!("{first} {last}"),
        (None, Some(first), None) => first.clone(),
        _ => chat.username.clone().unwrap_or_default(),
    };
    name.chars().take(128).collect()
}

/// Whether `message` was sent by this bot.
fn is_mine(message: &Message, me: &Me) -> bool {
    me.id != 0 && message.from.as_deref().is_some_and(|from| from.id == me.id)
}

fn from_message(update_id: i64, message: &Message, edited: bool, me: &Me) -> Inbound {
    let kind = match message.chat.type_field {
        ChatType::Private => ChatKind::Dm,
        ChatType::Group | ChatType::Supergroup => ChatKind::Group,
        ChatType::Channel => ChatKind::Channel,
    };
    // A message sent as a chat (an anonymous admin, a channel) carries a stand-in user that many
    // people share: nobody to authorise.
    let (user_id, user_name) = message
        .from
        .as_deref()
        .filter(|_| message.sender_chat.is_none())
        .map(|u| (u.id.to_string(), user_name(u)))
        .unwrap_or_default();
    let thread_id = message
        .message_thread_id
        .filter(|_| message.chat.is_forum.unwrap_or(false) || kind == ChatKind::Dm)
        .map(|t| t.to_string())
        .unwrap_or_default();
    Inbound {
        update_id,
        chat: ChatRef {
            chat_id: message.chat.id.to_string(),
            thread_id,
        },
        kind,
        user_id,
        user_name,
        chat_name: match (chat_name(&message.chat), &message.from) {
            // A private chat is its person: their name when the chat carries none.
            (name, Some(from)) if name.is_empty() && kind == ChatKind::Dm => {
                from.first_name.chars().take(128).collect()
            }
            (name, _) => name,
        },
        message_id: message.message_id.to_string(),
        text: addressing::cleaned_text(message, me),
        edited,
        reply_to: message
            .reply_to_message
            .as_deref()
            .and_then(|m| m.text.clone().or_else(|| m.caption.clone())),
        attachments: attachments(message),
        press: None,
        addressing: addressing::addressing(message, me),
        in_forum: message.chat.is_forum.unwrap_or(false),
    }
}

fn attachments(message: &Message) -> Vec<Attachment> {
    let mut found = Vec::new();
    if let Some(photo) = message
        .photo
        .as_ref()
        .and_then(|sizes| sizes.iter().max_by_key(|p| p.width * p.height))
    {
        found.push(Attachment {
            kind: "photo",
            file_id: photo.file_id.clone(),
            file_name: String::new(),
            size: photo.file_size.unwrap_or(0),
        });
    }
    if let Some(document) = &message.document {
        found.push(Attachment {
            kind: "document",
            file_id: document.file_id.clone(),
            file_name: document.file_name.clone().unwrap_or_default(),
            size: document.file_size.unwrap_or(0),
        });
    }
    if let Some(voice) = &message.voice {
        found.push(Attachment {
            kind: "voice",
            file_id: voice.file_id.clone(),
            file_name: String::new(),
            size: voice.file_size.unwrap_or(0),
        });
    }
    if let Some(audio) = &message.audio {
        found.push(Attachment {
            kind: "audio",
            file_id: audio.file_id.clone(),
            file_name: audio.file_name.clone().unwrap_or_default(),
            size: audio.file_size.unwrap_or(0),
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_presses_and_unknown_kinds() {
        let message = json!({"update_id": 10, "message": {"message_id": 5, "date": 1,
            "chat": {"id": 42, "type": "private", "first_name": "Ann"},
            "from": {"id": 42, "is_bot": false, "first_name": "Ann", "username": "ann"},
            "text": "hello"}});
        let got = inbound(message, &Me::default()).unwrap();
        assert_eq!(
            (got.update_id, got.kind, got.text.as_str()),
            (10, ChatKind::Dm, "hello")
        );
        assert_eq!(
            (got.chat.chat_id.as_str(), got.user_id.as_str()),
            ("42", "42")
        );
        let press = json!({"update_id": 11, "callback_query": {"id": "cb1", "chat_instance": "x",
            "from": {"id": 42, "is_bot": false, "first_name": "Ann"}, "data": "approve:q:once",
            "message": {"message_id": 9, "date": 1, "chat": {"id": 42, "type": "private"}}}});
        let got = inbound(press, &Me::default()).unwrap();
        assert_eq!(got.press.unwrap().data, "approve:q:once");
        assert!(
            inbound(
                json!({"update_id": 12, "something_new": {}}),
                &Me::default()
            )
            .is_none()
        );
        assert_eq!(update_id(&json!({"update_id": 12, "x": 1})), Some(12));
    }

    #[test]
    fn the_bots_own_messages_are_skipped_but_presses_on_them_are_not() {
        let me = Me::new(999, Some("hermes_bot"));
        let group = json!({"id": -5, "type": "group", "title": "g"});
        let own = json!({"update_id": 20, "message": {"message_id": 5, "date": 1,
            "chat": group, "from": {"id": 999, "is_bot": true, "first_name": "H"},
            "text": "my own answer"}});
        assert!(inbound(own, &me).is_none());
        let press = json!({"update_id": 21, "callback_query": {"id": "cb", "chat_instance": "x",
            "from": {"id": 42, "is_bot": false, "first_name": "Ann"}, "data": "approve:q:once",
            "message": {"message_id": 5, "date": 1, "chat": group,
                "from": {"id": 999, "is_bot": true, "first_name": "H"}, "text": "approve?"}}});
        let got = inbound(press, &me).unwrap();
        assert_eq!(got.user_id, "42");
        assert_eq!(got.addressing, Addressing::default());
        let mention = json!({"update_id": 22, "message": {"message_id": 6, "date": 1,
            "chat": group, "from": {"id": 42, "is_bot": false, "first_name": "Ann"},
            "text": "@hermes_bot hi", "entities": [{"type": "mention", "offset": 0, "length": 11}]}});
        let got = inbound(mention, &me).unwrap();
        assert!(got.addressing.mentions_me);
        assert_eq!(got.text, "hi");
        let anonymous = json!({"update_id": 23, "message": {"message_id": 7, "date": 1,
            "chat": group, "sender_chat": group,
            "from": {"id": 1_087_968_824, "is_bot": true, "first_name": "Group"},
            "text": "from an anonymous admin"}});
        assert_eq!(
            inbound(anonymous, &me).unwrap().user_id,
            "",
            "nobody to authorise"
        );
    }
}
