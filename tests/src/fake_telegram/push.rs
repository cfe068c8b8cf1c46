//! Pushing updates, as users would cause them: messages (text, photo, document, voice; in a
//! topic, as a reply), edits of them, callback queries on the bot's buttons, and raw updates.
//! A message gets the chat's next message id and joins the chat's history.

use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::{
    Chat, ChatKind, FakeTelegram, Incoming, Pushed, User,
    entities::{self, Entity},
    files::{self, FileKind},
    state::{QueuedUpdate, StoredFile, StoredMessage, World, now},
    text::Formatted,
    types::Content,
};

impl FakeTelegram {
    /// Queues the message `incoming` describes.
    pub fn push(&self, incoming: Incoming) -> Pushed {
        self.shared.write(|world| push_message(world, incoming))
    }

    /// Queues a text message from `from` in `chat`; returns its `update_id`.
    pub fn push_text(&self, chat: &Chat, from: &User, text: &str) -> i64 {
        self.push(Incoming::text(chat, from, text)).update_id
    }

    /// Queues a photo (served by `getFile`), with an optional caption.
    pub fn push_photo(
        &self,
        chat: &Chat,
        from: &User,
        bytes: impl Into<Bytes>,
        caption: Option<&str>,
    ) -> Pushed {
        self.push(captioned(Incoming::photo(chat, from, bytes), caption))
    }

    /// Queues a document named `file_name` of type `mime_type`, with an optional caption.
    pub fn push_document(
        &self,
        chat: &Chat,
        from: &User,
        bytes: impl Into<Bytes>,
        file_name: &str,
        mime_type: &str,
        caption: Option<&str>,
    ) -> Pushed {
        let incoming = Incoming::document(chat, from, bytes, file_name, mime_type);
        self.push(captioned(incoming, caption))
    }

    /// Queues a voice note of `duration` seconds, with an optional caption.
    pub fn push_voice(
        &self,
        chat: &Chat,
        from: &User,
        bytes: impl Into<Bytes>,
        duration: u32,
        caption: Option<&str>,
    ) -> Pushed {
        self.push(captioned(
            Incoming::voice(chat, from, bytes, duration),
            caption,
        ))
    }

    /// Queues an `edited_message` update: `from` changed message `message_id` to `text`.
    pub fn push_edited_text(&self, chat: &Chat, from: &User, message_id: i64, text: &str) -> i64 {
        self.shared.write(|world| {
            let state = world.chat_mut(chat, Some(from));
            let message = state
                .messages
                .entry(message_id)
                .or_insert_with(|| StoredMessage::new(message_id, from.json(), false));
            message.text = Some(user_text(text));
            text.clone_into(&mut message.raw);
            message.edit_date = Some(now());
            message.edits += 1;
            let message = message.clone();
            let json = state.message_json(&message);
            let kind = if chat.kind == ChatKind::Channel {
                "edited_channel_post"
            } else {
                "edited_message"
            };
            world.enqueue(kind, channel_post(chat, json))
        })
    }

    /// Queues a `callback_query`: `from` pressed a button with `data` on message `message_id`.
    /// Returns the `update_id` and the `callback_query_id` to answer.
    pub fn push_callback(
        &self,
        chat: &Chat,
        from: &User,
        message_id: i64,
        data: &str,
    ) -> (i64, String) {
        self.shared.write(|world| {
            let state = world.chat_mut(chat, Some(from));
            let message = match state.live(message_id) {
                Some(message) => state.message_json(message),
                // An inaccessible message: date 0.
                None => json!({"message_id": message_id, "chat": state.json, "date": 0}),
            };
            let n = world.next_callback;
            world.next_callback += 1;
            let id = format!("{}{n:06}", from.id.unsigned_abs());
            world.callbacks.insert(id.clone(), false);
            let payload = json!({
                "id": id,
                "from": from.json(),
                "message": message,
                "chat_instance": chat.id.wrapping_mul(-7_919).to_string(),
                "data": data,
            });
            (world.enqueue("callback_query", payload), id)
        })
    }

    /// Queues `update` as it is (an Update object; its `update_id` is replaced by the next one).
    pub fn push_raw(&self, update: Value) -> i64 {
        let Value::Object(mut fields) = update else {
            panic!("fake-telegram: push_raw takes an Update object, not {update}");
        };
        self.shared.write(|world| {
            let id = world.next_update_id;
            world.next_update_id += 1;
            fields.remove("update_id");
            let kind = fields.keys().next().cloned().unwrap_or_default();
            fields.insert("update_id".to_owned(), id.into());
            world.queue.push_back(QueuedUpdate {
                id,
                kind,
                json: Value::Object(fields),
            });
            id
        })
    }
}

fn captioned(incoming: Incoming, caption: Option<&str>) -> Incoming {
    match caption {
        Some(caption) => incoming.caption(caption),
        None => incoming,
    }
}

/// A user's text with the `bot_command` and `mention` entities Telegram finds in it.
fn user_text(text: &str) -> Formatted {
    let mut found = entities::bot_commands(text);
    found.extend(entities::mentions(text));
    entities::sort(&mut found);
    let entities = found.iter().map(Entity::json).collect();
    Formatted {
        text: text.to_owned(),
        entities,
    }
}

/// A channel's post has no `from` but a `sender_chat`.
fn channel_post(chat: &Chat, mut message: Value) -> Value {
    if chat.kind == ChatKind::Channel
        && let Some(fields) = message.as_object_mut()
    {
        let sender = fields.get("chat").cloned().unwrap_or(Value::Null);
        fields.remove("from");
        fields.insert("sender_chat".to_owned(), sender);
    }
    message
}

fn push_message(world: &mut World, incoming: Incoming) -> Pushed {
    let Incoming {
        chat,
        from,
        content,
        caption,
        thread_id,
        reply_to,
    } = incoming;
    let mut media = Map::new();
    let mut file_id = None;
    let mut text = None;
    let mut raw = caption.clone().unwrap_or_default();
    match content {
        Content::Text(body) => {
            text = Some(user_text(&body));
            raw = body;
        }
        Content::Photo { bytes } => {
            let size = bytes.len();
            let small = world.register_file(FileKind::Photo, bytes.clone(), "jpg");
            let large = world.register_file(FileKind::Photo, bytes, "jpg");
            let photo_size = |file: &StoredFile, width: u32, height: u32| {
                json!({
                    "file_id": file.file_id,
                    "file_unique_id": file.file_unique_id,
                    "file_size": size,
                    "width": width,
                    "height": height,
                })
            };
            let sizes = json!([photo_size(&small, 90, 68), photo_size(&large, 1280, 960)]);
            media.insert("photo".to_owned(), sizes);
            file_id = Some(large.file_id);
        }
        Content::Document {
            bytes,
            file_name,
            mime_type,
        } => {
            let size = bytes.len();
            let file = world.register_file(FileKind::Document, bytes, files::extension(&file_name));
            let document = json!({
                "file_name": file_name,
                "mime_type": mime_type,
                "file_id": file.file_id,
                "file_unique_id": file.file_unique_id,
                "file_size": size,
            });
            media.insert("document".to_owned(), document);
            file_id = Some(file.file_id);
        }
        Content::Voice { bytes, duration } => {
            let size = bytes.len();
            let file = world.register_file(FileKind::Voice, bytes, "oga");
            let voice = json!({
                "duration": duration,
                "mime_type": "audio/ogg",
                "file_id": file.file_id,
                "file_unique_id": file.file_unique_id,
                "file_size": size,
            });
            media.insert("voice".to_owned(), voice);
            file_id = Some(file.file_id);
        }
    }
    if text.is_none()
        && let Some(caption) = caption
    {
        let found = user_text(&caption);
        media.insert("caption".to_owned(), caption.into());
        if !found.entities.is_empty() {
            media.insert("caption_entities".to_owned(), found.entities.into());
        }
    }
    let state = world.chat_mut(&chat, Some(&from));
    let message_id = state.next_message_id();
    let mut message = StoredMessage::new(message_id, from.json(), false);
    message.text = text;
    message.raw = raw;
    message.media = media;
    message.thread_id = thread_id;
    message.reply_to = reply_to;
    let json = channel_post(&chat, state.message_json(&message));
    state.messages.insert(message_id, message);
    let kind = if chat.kind == ChatKind::Channel {
        "channel_post"
    } else {
        "message"
    };
    Pushed {
        update_id: world.enqueue(kind, json),
        message_id,
        file_id,
    }
}
