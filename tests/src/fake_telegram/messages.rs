//! The message methods: `sendMessage`, `editMessageText`, `editMessageReplyMarkup` and
//! `deleteMessage`, with Telegram's checks and error texts (text, markup, chat, replied message,
//! edit target, "not modified").

use serde_json::Value;

use super::{
    markup,
    params::Params,
    reply::{Answer, ApiError, Outcome},
    state::{StoredMessage, World, now},
    text,
};

const NOT_MODIFIED: &str = "message is not modified: specified new message content and reply \
     markup are exactly the same as a current content and reply markup of the message";

/// `sendMessage`.
pub(super) fn send_message(world: &mut World, params: &Params) -> Outcome {
    let raw = params.str("text").unwrap_or_default();
    let parse_mode = params.str("parse_mode").filter(|m| !m.is_empty());
    let formatted = text::format(&raw, parse_mode.as_deref(), explicit_entities(params)?)?;
    let reply_markup = markup::from_params(params)?;
    let chat_id = target_chat(world, params)?;
    let reply_to = replied_message(world, chat_id, params)?;
    let bot = world.bot.clone();
    let chat = world
        .chats
        .get_mut(&chat_id)
        .ok_or_else(|| ApiError::bad("chat not found"))?;
    let id = chat.next_message_id();
    let mut message = StoredMessage::new(id, bot, true);
    message.text = Some(formatted);
    message.raw = raw;
    message.parse_mode = parse_mode;
    message.reply_markup = reply_markup;
    message.thread_id = params.int("message_thread_id").filter(|&t| t != 0);
    message.reply_to = reply_to;
    let json = chat.message_json(&message);
    chat.messages.insert(id, message);
    Ok(Answer::new(json))
}

/// `sendVoice`, `sendAudio` and `sendDocument` with the file uploaded as the form field `field`
/// (a `file_id` string is not taken: this fake keeps only uploads).
pub(super) fn send_file(world: &mut World, params: &Params, method: &str, field: &str) -> Outcome {
    let chat_id = target_chat(world, params)?;
    let part = params
        .files()
        .iter()
        .find(|f| f.field == field)
        .cloned()
        .ok_or_else(|| ApiError::bad(format!("there is no {field} in the request")))?;
    if part.bytes.is_empty() {
        return Err(ApiError::bad("file must be non-empty"));
    }
    let bot = world.bot.clone();
    world.next_file += 1;
    let file_id = format!("upload-{}", world.next_file);
    let chat = world
        .chats
        .get_mut(&chat_id)
        .ok_or_else(|| ApiError::bad("chat not found"))?;
    let id = chat.next_message_id();
    let json = serde_json::json!({
        "message_id": id,
        "date": now(),
        "chat": chat.json,
        "from": bot,
        field: {"file_id": file_id, "file_unique_id": file_id, "duration": 1,
                "file_size": part.bytes.len(), "file_name": part.file_name},
    });
    world.uploads.push(super::Upload {
        method: method.to_owned(),
        chat_id,
        message_id: id,
        thread_id: params.int("message_thread_id"),
        file_name: part.file_name,
        content_type: part.content_type,
        bytes: part.bytes,
    });
    Ok(Answer::new(json))
}

/// `editMessageText`.
pub(super) fn edit_message_text(world: &mut World, params: &Params) -> Outcome {
    let raw = params.str("text").unwrap_or_default();
    let parse_mode = params.str("parse_mode").filter(|m| !m.is_empty());
    let formatted = text::format(&raw, parse_mode.as_deref(), explicit_entities(params)?)?;
    let reply_markup = markup::from_params(params)?;
    let (chat_id, message_id) = target_message(world, params, "message to edit not found")?;
    let chat = world
        .chats
        .get_mut(&chat_id)
        .ok_or_else(|| ApiError::bad("chat not found"))?;
    let Some(message) = chat.messages.get_mut(&message_id) else {
        return Err(ApiError::bad("message to edit not found"));
    };
    if !message.from_bot {
        return Err(ApiError::bad("message can't be edited"));
    }
    let Some(current) = &message.text else {
        return Err(ApiError::bad("there is no text in the message to edit"));
    };
    if *current == formatted && same_inline(message.reply_markup.as_ref(), reply_markup.as_ref()) {
        return Err(ApiError::bad(NOT_MODIFIED));
    }
    message.text = Some(formatted);
    message.raw = raw;
    message.parse_mode = parse_mode;
    message.reply_markup = reply_markup;
    message.edits += 1;
    message.edit_date = Some(now());
    let message = message.clone();
    Ok(Answer::new(chat.message_json(&message)))
}

/// `editMessageReplyMarkup`.
pub(super) fn edit_message_reply_markup(world: &mut World, params: &Params) -> Outcome {
    let reply_markup = markup::from_params(params)?;
    let (chat_id, message_id) = target_message(world, params, "message to edit not found")?;
    let chat = world
        .chats
        .get_mut(&chat_id)
        .ok_or_else(|| ApiError::bad("chat not found"))?;
    let Some(message) = chat.messages.get_mut(&message_id) else {
        return Err(ApiError::bad("message to edit not found"));
    };
    if !message.from_bot {
        return Err(ApiError::bad("message can't be edited"));
    }
    if same_inline(message.reply_markup.as_ref(), reply_markup.as_ref()) {
        return Err(ApiError::bad(NOT_MODIFIED));
    }
    message.reply_markup = reply_markup;
    let message = message.clone();
    Ok(Answer::new(chat.message_json(&message)))
}

/// `deleteMessage`.
pub(super) fn delete_message(world: &mut World, params: &Params) -> Outcome {
    let (chat_id, message_id) = target_message(world, params, "message to delete not found")?;
    let message = world
        .chats
        .get_mut(&chat_id)
        .and_then(|chat| chat.messages.get_mut(&message_id));
    if let Some(message) = message {
        message.deleted = true;
    }
    Ok(Answer::new(Value::Bool(true)))
}

/// The `entities` parameter (used when there is no `parse_mode`).
fn explicit_entities(params: &Params) -> Result<Option<Value>, ApiError> {
    params
        .json("entities")
        .map_err(|()| ApiError::bad("can't parse entities JSON object"))
}

/// Whether two reply markups show the same inline keyboard.
fn same_inline(old: Option<&Value>, new: Option<&Value>) -> bool {
    old.and_then(markup::inline) == new.and_then(markup::inline)
}

/// The chat `chat_id` names.
fn target_chat(world: &World, params: &Params) -> Result<i64, ApiError> {
    let Some(chat_id) = params.str("chat_id").filter(|c| !c.is_empty()) else {
        return Err(ApiError::bad("chat_id is empty"));
    };
    world
        .resolve_chat(&chat_id)
        .ok_or_else(|| ApiError::bad("chat not found"))
}

/// The live message `chat_id` and `message_id` name; `missing` says it is not there.
fn target_message(world: &World, params: &Params, missing: &str) -> Result<(i64, i64), ApiError> {
    if params.has("inline_message_id") {
        return Err(ApiError::bad("MESSAGE_ID_INVALID"));
    }
    let chat_id = target_chat(world, params)?;
    let Some(message_id) = params.int("message_id").filter(|&id| id != 0) else {
        return Err(ApiError::bad("message identifier is not specified"));
    };
    let live = world
        .chats
        .get(&chat_id)
        .and_then(|chat| chat.live(message_id));
    match live {
        Some(_) => Ok((chat_id, message_id)),
        None => Err(ApiError::bad(missing)),
    }
}

/// The message the new one replies to (`reply_parameters` or the older
/// `reply_to_message_id`); a missing one is an error unless `allow_sending_without_reply`.
fn replied_message(world: &World, chat_id: i64, params: &Params) -> Result<Option<i64>, ApiError> {
    let parameters = params
        .json("reply_parameters")
        .map_err(|()| ApiError::bad("can't parse reply parameters JSON object"))?;
    let (id, allow_missing) = match parameters {
        Some(parameters) => {
            let id = match &parameters["message_id"] {
                Value::String(s) => s.parse().ok(),
                other => other.as_i64(),
            };
            let allow = parameters["allow_sending_without_reply"] == true;
            (id, allow)
        }
        None => (
            params.int("reply_to_message_id"),
            params.flag("allow_sending_without_reply"),
        ),
    };
    let Some(id) = id.filter(|&id| id != 0) else {
        return Ok(None);
    };
    let exists = world
        .chats
        .get(&chat_id)
        .is_some_and(|chat| chat.live(id).is_some());
    match (exists, allow_missing) {
        (true, _) => Ok(Some(id)),
        (false, true) => Ok(None),
        (false, false) => Err(ApiError::bad("message to be replied not found")),
    }
}
