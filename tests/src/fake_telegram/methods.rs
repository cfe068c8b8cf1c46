//! The method table (names matched case-insensitively, as Telegram does) and the methods that
//! are not about messages or polling: `getMe`, the webhook trio, the command trio,
//! `sendChatAction`, `answerCallbackQuery` and `getFile`.

use std::time::Instant;

use serde_json::{Value, json};

use super::{
    CallbackAnswer, ChatAction, messages,
    params::Params,
    reply::{Answer, ApiError, Outcome},
    state::{Webhook, World},
};

/// The methods this server knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Method {
    GetMe,
    GetUpdates,
    SetWebhook,
    DeleteWebhook,
    GetWebhookInfo,
    SetMyCommands,
    GetMyCommands,
    DeleteMyCommands,
    SendMessage,
    EditMessageText,
    EditMessageReplyMarkup,
    DeleteMessage,
    SendChatAction,
    AnswerCallbackQuery,
    GetFile,
    SendVoice,
    SendAudio,
    SendDocument,
}

impl Method {
    /// The method named `name` (any case).
    pub(super) fn parse(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "getme" => Self::GetMe,
            "getupdates" => Self::GetUpdates,
            "setwebhook" => Self::SetWebhook,
            "deletewebhook" => Self::DeleteWebhook,
            "getwebhookinfo" => Self::GetWebhookInfo,
            "setmycommands" => Self::SetMyCommands,
            "getmycommands" => Self::GetMyCommands,
            "deletemycommands" => Self::DeleteMyCommands,
            "sendmessage" => Self::SendMessage,
            "editmessagetext" => Self::EditMessageText,
            "editmessagereplymarkup" => Self::EditMessageReplyMarkup,
            "deletemessage" => Self::DeleteMessage,
            "sendchataction" => Self::SendChatAction,
            "answercallbackquery" => Self::AnswerCallbackQuery,
            "getfile" => Self::GetFile,
            "sendvoice" => Self::SendVoice,
            "sendaudio" => Self::SendAudio,
            "senddocument" => Self::SendDocument,
            _ => return None,
        })
    }
}

/// Runs every method but `getUpdates` (see `polling`) on the world.
pub(super) fn call(world: &mut World, method: Method, params: &Params) -> Outcome {
    match method {
        Method::GetMe => Ok(Answer::new(world.bot.clone())),
        Method::GetUpdates => Err(ApiError::not_found()),
        Method::SetWebhook => set_webhook(world, params),
        Method::DeleteWebhook => delete_webhook(world, params),
        Method::GetWebhookInfo => Ok(Answer::new(webhook_info(world))),
        Method::SetMyCommands => set_my_commands(world, params),
        Method::GetMyCommands => {
            let key = command_key(params)?;
            let commands = world.commands.get(&key).cloned();
            Ok(Answer::new(commands.unwrap_or_else(|| json!([]))))
        }
        Method::DeleteMyCommands => {
            let key = command_key(params)?;
            world.commands.remove(&key);
            Ok(Answer::new(Value::Bool(true)))
        }
        Method::SendMessage => messages::send_message(world, params),
        Method::SendVoice => messages::send_file(world, params, "sendVoice", "voice"),
        Method::SendAudio => messages::send_file(world, params, "sendAudio", "audio"),
        Method::SendDocument => messages::send_file(world, params, "sendDocument", "document"),
        Method::EditMessageText => messages::edit_message_text(world, params),
        Method::EditMessageReplyMarkup => messages::edit_message_reply_markup(world, params),
        Method::DeleteMessage => messages::delete_message(world, params),
        Method::SendChatAction => send_chat_action(world, params),
        Method::AnswerCallbackQuery => answer_callback_query(world, params),
        Method::GetFile => get_file(world, params),
    }
}

fn set_webhook(world: &mut World, params: &Params) -> Outcome {
    let url = params.str("url").unwrap_or_default();
    if url.is_empty() {
        return delete_webhook(world, params);
    }
    if !url.starts_with("https://") && !url.starts_with("http://") {
        return Err(ApiError::bad("invalid webhook URL specified"));
    }
    let secret = params.str("secret_token").filter(|s| !s.is_empty());
    if let Some(secret) = &secret {
        if secret.len() > 256 {
            return Err(ApiError::bad("secret token is too long"));
        }
        let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if !secret.chars().all(allowed) {
            return Err(ApiError::bad("secret token contains unallowed characters"));
        }
    }
    let max_connections = params.int("max_connections").unwrap_or(40).clamp(1, 100);
    if let Ok(Some(Value::Array(types))) = params.json("allowed_updates") {
        world.allowed_updates = strings(&types);
    }
    if params.flag("drop_pending_updates") {
        world.queue.clear();
    }
    let same = world.webhook.as_ref().is_some_and(|hook| {
        hook.url == url && hook.secret == secret && hook.max_connections == max_connections
    });
    world.abort_waiting_poll("Conflict: terminated by setWebhook request");
    world.webhook = Some(Webhook {
        url,
        secret,
        max_connections,
    });
    let description = if same {
        "Webhook is already set"
    } else {
        "Webhook was set"
    };
    Ok(Answer::described(Value::Bool(true), description))
}

fn delete_webhook(world: &mut World, params: &Params) -> Outcome {
    if params.flag("drop_pending_updates") {
        world.queue.clear();
    }
    let description = match world.webhook.take() {
        Some(_) => "Webhook was deleted",
        None => "Webhook is already deleted",
    };
    Ok(Answer::described(Value::Bool(true), description))
}

fn webhook_info(world: &World) -> Value {
    let mut info = json!({
        "url": "",
        "has_custom_certificate": false,
        "pending_update_count": world.queue.len(),
    });
    if let Some(hook) = &world.webhook {
        info["url"] = hook.url.clone().into();
        info["max_connections"] = hook.max_connections.into();
        info["ip_address"] = "127.0.0.1".into();
        if !world.allowed_updates.is_empty() {
            info["allowed_updates"] = world.allowed_updates.clone().into();
        }
    }
    info
}

/// The strings of a JSON array.
pub(super) fn strings(values: &[Value]) -> Vec<String> {
    values
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// Where a command list is kept: its scope (`type`, `chat_id`, `user_id`) and language.
pub(super) fn command_key(params: &Params) -> Result<String, ApiError> {
    let scope = params
        .json("scope")
        .map_err(|()| ApiError::bad("can't parse BotCommandScope JSON object"))?
        .unwrap_or_else(|| json!({"type": "default"}));
    let kind = scope["type"].as_str().unwrap_or("default");
    let language = params.str("language_code").unwrap_or_default();
    Ok(format!(
        "{kind}/{}/{}/{language}",
        scope["chat_id"], scope["user_id"]
    ))
}

fn set_my_commands(world: &mut World, params: &Params) -> Outcome {
    let unparsable = || ApiError::bad("can't parse commands JSON object");
    let Some(Value::Array(list)) = params.json("commands").map_err(|()| unparsable())? else {
        return Err(unparsable());
    };
    if list.len() > 100 {
        return Err(ApiError::bad("BOT_COMMANDS_TOO_MUCH"));
    }
    let mut commands = Vec::with_capacity(list.len());
    for entry in &list {
        let (Some(command), Some(description)) =
            (entry["command"].as_str(), entry["description"].as_str())
        else {
            return Err(ApiError::bad(
                "can't parse BotCommand: Field \"command\" must be of type String",
            ));
        };
        let command = command.trim().trim_start_matches('/');
        let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
        if !(1..=32).contains(&command.len()) || !command.chars().all(valid) {
            return Err(ApiError::bad("BOT_COMMAND_INVALID"));
        }
        let description = description.trim();
        if !(1..=256).contains(&description.chars().count()) {
            return Err(ApiError::bad("BOT_COMMAND_DESCRIPTION_INVALID"));
        }
        commands.push(json!({"command": command, "description": description}));
    }
    let key = command_key(params)?;
    world.commands.insert(key, Value::Array(commands));
    Ok(Answer::new(Value::Bool(true)))
}

/// The actions `sendChatAction` takes (and their older spellings).
const ACTIONS: &[&str] = &[
    "cancel",
    "typing",
    "record_video",
    "upload_video",
    "record_audio",
    "record_voice",
    "upload_audio",
    "upload_voice",
    "upload_photo",
    "upload_document",
    "choose_sticker",
    "pick_up_location",
    "find_location",
    "record_video_note",
    "upload_video_note",
];

fn send_chat_action(world: &mut World, params: &Params) -> Outcome {
    let action = params
        .str("action")
        .unwrap_or_default()
        .to_ascii_lowercase();
    if !ACTIONS.contains(&action.as_str()) {
        return Err(ApiError::bad("wrong parameter action in request"));
    }
    let Some(chat_id) = params.str("chat_id").filter(|c| !c.is_empty()) else {
        return Err(ApiError::bad("chat_id is empty"));
    };
    let chat = world
        .resolve_chat(&chat_id)
        .and_then(|id| world.chats.get_mut(&id))
        .ok_or_else(|| ApiError::bad("chat not found"))?;
    chat.actions.push(ChatAction {
        action,
        thread_id: params.int("message_thread_id").filter(|&t| t != 0),
        at: Instant::now(),
    });
    Ok(Answer::new(Value::Bool(true)))
}

fn answer_callback_query(world: &mut World, params: &Params) -> Outcome {
    let id = params.str("callback_query_id").unwrap_or_default();
    match world.callbacks.get_mut(&id) {
        Some(answered) if !*answered => *answered = true,
        _ => {
            return Err(ApiError::bad(
                "query is too old and response timeout expired or query ID is invalid",
            ));
        }
    }
    world.answers.push(CallbackAnswer {
        callback_query_id: id,
        text: params.str("text").filter(|t| !t.is_empty()),
        show_alert: params.flag("show_alert"),
    });
    Ok(Answer::new(Value::Bool(true)))
}

/// The largest file `getFile` hands out.
const MAX_DOWNLOAD: usize = 20 * 1024 * 1024;

fn get_file(world: &mut World, params: &Params) -> Outcome {
    let file_id = params.str("file_id").unwrap_or_default();
    let file_id = file_id.trim();
    if file_id.is_empty() {
        return Err(ApiError::bad("file_id not specified"));
    }
    let Some(file) = world.files.get(file_id) else {
        return Err(ApiError::bad("invalid file_id"));
    };
    if file.bytes.len() > MAX_DOWNLOAD {
        return Err(ApiError::bad("file is too big"));
    }
    Ok(Answer::new(json!({
        "file_id": file.file_id,
        "file_unique_id": file.file_unique_id,
        "file_size": file.bytes.len(),
        "file_path": file.file_path,
    })))
}
