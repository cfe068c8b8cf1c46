//! The REST routes the fake knows, with Discord's answers and error codes: the Gateway's URL,
//! the bot's user, channels, creating (JSON or multipart with `payload_json` and `files[n]`),
//! editing and deleting messages (content at most 2,000 characters, never empty; only the
//! bot's own edited), a public thread opened on a message (its id the message's; a name of 1
//! to 100 characters; one thread per message; `THREAD_CREATE` dispatched), typing, application commands (global or per guild), interaction callbacks
//! (one per interaction) and followups. The bot's own messages come back to it over the Gateway
//! as `MESSAGE_CREATE`, as on Discord.

use std::time::Instant;

use serde_json::{Value, json};

use super::{
    InteractionAnswer, OpenedThread, SentMessage,
    rest::{Answer, Parsed},
    state::{World, buttons_of},
};

/// Discord's limit on a message's content, in characters.
pub const MAX_CONTENT: usize = 2000;

pub(super) fn answer(
    world: &mut World,
    method: &str,
    path: &str,
    authorized: bool,
    body: &Parsed,
) -> Answer {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    // Interaction callbacks and webhooks authenticate by their token, not the bot's.
    match (method, segments.as_slice()) {
        ("POST", ["interactions", id, token, "callback"]) => {
            return callback(world, id, token, &body.json);
        }
        ("POST", ["webhooks", app, _token]) if *app == world.application_id => {
            world.followups.push(body.json.clone());
            let id = world.snowflake();
            return Answer::ok(json!({"id": id, "content": body.json["content"]}));
        }
        _ => {}
    }
    if !authorized {
        return Answer::error(401, 0, "401: Unauthorized");
    }
    match (method, segments.as_slice()) {
        ("GET", ["gateway", "bot"]) => Answer::ok(json!({"url": world.ws_url, "shards": 1,
            "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 0,
                "max_concurrency": 1}})),
        ("GET", ["users", "@me"]) => Answer::ok(world.bot.json()),
        ("GET", ["channels", id]) => match world.channels.get(*id) {
            Some(channel) => Answer::ok(channel.json()),
            None => unknown_channel(),
        },
        ("POST", ["channels", id, "messages"]) => create(world, id, body),
        ("PATCH", ["channels", channel, "messages", id]) => edit(world, channel, id, &body.json),
        ("POST", ["channels", channel, "messages", id, "threads"]) => {
            open_thread(world, channel, id, &body.json)
        }
        ("DELETE", ["channels", channel, "messages", id]) => {
            match world
                .messages
                .iter_mut()
                .find(|m| m.id == *id && m.channel_id == *channel)
            {
                Some(message) => {
                    message.deleted = true;
                    Answer::empty()
                }
                None => Answer::error(404, 10008, "Unknown Message"),
            }
        }
        ("POST", ["channels", id, "typing"]) => {
            if world.channels.contains_key(*id) {
                Answer::empty()
            } else {
                unknown_channel()
            }
        }
        ("PUT", ["applications", app, "commands"]) if *app == world.application_id => {
            register(world, "global", &body.json)
        }
        ("PUT", ["applications", app, "guilds", guild, "commands"])
            if *app == world.application_id =>
        {
            register(world, guild, &body.json)
        }
        _ => Answer::error(404, 0, "404: Not Found"),
    }
}

fn unknown_channel() -> Answer {
    Answer::error(404, 10003, "Unknown Channel")
}

fn invalid_content(content: &str) -> Option<Answer> {
    let chars = content.chars().count();
    (chars > MAX_CONTENT).then(|| Answer {
        status: 400,
        body: json!({"message": "Invalid Form Body", "code": 50035, "errors": {"content":
            {"_errors": [{"code": "BASE_TYPE_MAX_LENGTH",
                "message": format!("Must be {MAX_CONTENT} or fewer in length.")}]}}}),
        headers: Vec::new(),
    })
}

fn create(world: &mut World, channel: &str, body: &Parsed) -> Answer {
    if !world.channels.contains_key(channel) {
        return unknown_channel();
    }
    let content = body.json["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if let Some(refused) = invalid_content(&content) {
        return refused;
    }
    let buttons = buttons_of(&body.json["components"]);
    if content.is_empty() && body.files.is_empty() && buttons.is_empty() {
        return Answer::error(400, 50006, "Cannot send an empty message");
    }
    let id = world.snowflake();
    let mut files = Vec::new();
    for file in &body.files {
        let stored = format!("{id}-{}", file.file_name);
        world.files.insert(
            stored.clone(),
            (file.bytes.clone(), file.content_type.clone()),
        );
        files.push(file.file_name.clone());
    }
    let message = SentMessage {
        id,
        channel_id: channel.to_string(),
        author_id: world.bot.id.clone(),
        content,
        buttons,
        edits: 0,
        deleted: false,
        files,
        reply_to: body.json["message_reference"]["message_id"]
            .as_str()
            .map(str::to_string),
    };
    let bot = world.bot.clone();
    let mentions = world.mentioned(&message.content);
    let json = world.message_json(&message, &bot, mentions);
    world.messages.push(message);
    world.dispatch("MESSAGE_CREATE", json.clone());
    Answer::ok(json)
}

fn edit(world: &mut World, channel: &str, id: &str, body: &Value) -> Answer {
    let bot_id = world.bot.id.clone();
    let Some(at) = world
        .messages
        .iter()
        .position(|m| m.id == id && m.channel_id == channel && !m.deleted)
    else {
        return Answer::error(404, 10008, "Unknown Message");
    };
    if world.messages[at].author_id != bot_id {
        return Answer::error(403, 50005, "Cannot edit a message authored by another user");
    }
    if let Some(content) = body["content"].as_str() {
        if let Some(refused) = invalid_content(content) {
            return refused;
        }
        world.messages[at].content = content.to_string();
    }
    if body.get("components").is_some() {
        world.messages[at].buttons = buttons_of(&body["components"]);
    }
    world.messages[at].edits += 1;
    let message = world.messages[at].clone();
    let bot = world.bot.clone();
    let mentions = world.mentioned(&message.content);
    let json = world.message_json(&message, &bot, mentions);
    world.dispatch("MESSAGE_UPDATE", json.clone());
    Answer::ok(json)
}

/// A public thread on the message `id` of `channel`, as Discord opens one: the thread's id is
/// the message's.
fn open_thread(world: &mut World, channel: &str, id: &str, body: &Value) -> Answer {
    let Some(parent) = world.channels.get(channel).cloned() else {
        return unknown_channel();
    };
    if parent.kind != 0 {
        return Answer::error(400, 50024, "Cannot execute action on this channel type");
    }
    if !world
        .messages
        .iter()
        .any(|m| m.id == id && m.channel_id == channel && !m.deleted)
    {
        return Answer::error(404, 10008, "Unknown Message");
    }
    if world.channels.contains_key(id) {
        return Answer::error(
            400,
            160004,
            "A thread has already been created for this message",
        );
    }
    let name = body["name"].as_str().unwrap_or_default();
    let length = name.chars().count();
    let archive = body["auto_archive_duration"].as_u64();
    let archive_ok = body.get("auto_archive_duration").is_none()
        || archive.is_some_and(|m| [60, 1440, 4320, 10080].contains(&m));
    if length == 0 || length > 100 || name.contains('\n') || !archive_ok {
        return Answer::error(400, 50035, "Invalid Form Body");
    }
    let thread = super::state::Channel {
        id: id.to_string(),
        kind: 11,
        guild_id: parent.guild_id.clone(),
        parent_id: channel.to_string(),
        name: name.to_string(),
        recipient: None,
    };
    let mut json = thread.json();
    json["owner_id"] = json!(world.bot.id);
    json["thread_metadata"] = json!({"archived": false,
        "auto_archive_duration": archive.unwrap_or(4320), "locked": false});
    world.channels.insert(id.to_string(), thread);
    world.opened_threads.push(OpenedThread {
        id: id.to_string(),
        parent_id: channel.to_string(),
        message_id: id.to_string(),
        name: name.to_string(),
        auto_archive_duration: archive,
    });
    let mut created = json.clone();
    created["newly_created"] = json!(true);
    world.dispatch("THREAD_CREATE", created);
    Answer::ok(json)
}

fn register(world: &mut World, scope: &str, list: &Value) -> Answer {
    let Some(commands) = list.as_array() else {
        return Answer::error(400, 50035, "Invalid Form Body");
    };
    let mut registered = Vec::new();
    for command in commands {
        let name = command["name"].as_str().unwrap_or_default();
        let valid = !name.is_empty()
            && name.chars().count() <= 32
            && name
                .chars()
                .all(|c| c.is_lowercase() || c.is_numeric() || c == '-' || c == '_');
        let description = command["description"].as_str().unwrap_or_default();
        if !valid || description.is_empty() || description.chars().count() > 100 {
            return Answer::error(400, 50035, "Invalid Form Body");
        }
        let mut command = command.clone();
        command["id"] = json!(world.snowflake());
        command["application_id"] = json!(world.application_id);
        registered.push(command);
    }
    world
        .commands
        .push((scope.to_string(), Value::Array(registered.clone())));
    Answer::ok(Value::Array(registered))
}

fn callback(world: &mut World, id: &str, token: &str, body: &Value) -> Answer {
    let Some(interaction) = world.interactions.get(id).cloned() else {
        return Answer::error(404, 10062, "Unknown interaction");
    };
    if interaction.token != token {
        return Answer::error(401, 50027, "Invalid Webhook Token");
    }
    if world.answers.iter().any(|a| a.interaction_id == id) {
        return Answer::error(400, 40060, "Interaction has already been acknowledged.");
    }
    world.answers.push(InteractionAnswer {
        interaction_id: id.to_string(),
        response: body.clone(),
        after: Instant::now().duration_since(interaction.created),
    });
    Answer::empty()
}
