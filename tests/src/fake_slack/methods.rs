//! The Web API methods the fake knows, with Slack's error codes: `auth.test`,
//! `apps.connections.open` (app token only), `chat.postMessage`, `chat.update`,
//! `chat.postEphemeral`, `users.info`, and the upload flow (`files.getUploadURLExternal`, the
//! POST of the bytes, `files.completeUploadExternal`); the private file download; and each
//! method's rate-limit tier, enforced per workspace and method when the test turns tiers on.

use axum::{
    body::Body,
    http::{StatusCode, header},
    response::Response,
};
use bytes::Bytes;
use serde_json::{Value, json};

use super::{
    payloads,
    state::{Fault, File, Message, Shared, Upload, World},
    web::plain,
};

/// Calls a minute a method's tier allows (Slack's documented floors); `None`: not limited.
pub fn tier(method: &str) -> Option<usize> {
    Some(match method {
        "apps.connections.open" => 1,
        "files.completeUploadExternal" | "files.getUploadURLExternal" => 20,
        "chat.update" | "chat.postEphemeral" | "conversations.info" => 50,
        "auth.test" | "users.info" => 100,
        // "Special": about one a second per channel; a minute's worth.
        "chat.postMessage" => 60,
        _ => return None,
    })
}

/// The 429 a call (the `index`th) past its method's tier gets, when tiers are on: the wait
/// until the oldest call of the last minute leaves the window.
pub fn tier_exceeded(world: &World, method: &str, token: &str, index: usize) -> Option<Fault> {
    if !world.enforce_tiers {
        return None;
    }
    let limit = tier(method)?;
    let now = world.calls.get(index)?.at;
    let minute = std::time::Duration::from_secs(60);
    let recent: Vec<_> = world.calls[..index]
        .iter()
        .filter(|c| c.method == method && c.token == token && c.status != Some(429))
        .filter(|c| now.duration_since(c.at) < minute)
        .collect();
    if recent.len() < limit {
        return None;
    }
    let oldest = recent.first()?.at;
    let wait = minute
        .saturating_sub(now.duration_since(oldest))
        .as_secs()
        .max(1);
    Some(Fault::RateLimited(wait))
}

type Outcome = Result<Value, String>;

fn text_param<'a>(params: &'a Value, name: &str) -> &'a str {
    params[name].as_str().unwrap_or_default()
}

/// Runs `method` for the caller holding `token`.
pub fn call(world: &mut World, method: &str, token: &str, params: &Value) -> Outcome {
    if method == "apps.connections.open" {
        return open_connection(world, token);
    }
    if token.is_empty() {
        return Err("not_authed".into());
    }
    if token == world.app_token {
        return Err("not_allowed_token_type".into());
    }
    let team = world
        .team_of_token(token)
        .cloned()
        .ok_or_else(|| "invalid_auth".to_owned())?;
    match method {
        "auth.test" => Ok(json!({
            "url": format!("https://{}.slack.com/", team.name),
            "team": team.name,
            "user": "hermes",
            "team_id": team.id,
            "user_id": team.bot_user_id,
            "bot_id": team.bot_id,
            "is_enterprise_install": false,
        })),
        "chat.postMessage" => post_message(world, &team.id, params),
        "chat.update" => update_message(world, &team.id, params),
        "chat.postEphemeral" => {
            let channel = text_param(params, "channel");
            let user = text_param(params, "user");
            if channel.is_empty() {
                return Err("channel_not_found".into());
            }
            if user.is_empty() {
                return Err("user_not_in_channel".into());
            }
            world.ephemerals.push(super::state::Ephemeral {
                channel: channel.to_owned(),
                user: user.to_owned(),
                text: text_param(params, "text").to_owned(),
            });
            let ts = world.fresh_ts();
            Ok(json!({"message_ts": ts}))
        }
        "users.info" => {
            let user = text_param(params, "user");
            let name = world
                .users
                .get(user)
                .cloned()
                .ok_or_else(|| "user_not_found".to_owned())?;
            Ok(
                json!({"user": {"id": user, "team_id": team.id, "name": name.to_lowercase(),
                "real_name": name, "is_bot": false,
                "profile": {"display_name": name, "real_name": name}}}),
            )
        }
        "files.getUploadURLExternal" => {
            let name = text_param(params, "filename");
            let length = params["length"]
                .as_u64()
                .or_else(|| text_param(params, "length").parse().ok())
                .ok_or_else(|| "invalid_arguments".to_owned())?;
            if name.is_empty() {
                return Err("invalid_arguments".into());
            }
            let id = world.fresh_id("F");
            world.files.push(File {
                id: id.clone(),
                team: team.id.clone(),
                name: name.to_owned(),
                title: name.to_owned(),
                bytes: None,
                shared_to: None,
                announced: length,
            });
            let base = world.base_url.clone();
            Ok(json!({"upload_url": format!("{base}/upload/{id}"), "file_id": id}))
        }
        "files.completeUploadExternal" => complete_upload(world, &team.id, params),
        _ => Err("unknown_method".into()),
    }
}

fn open_connection(world: &mut World, token: &str) -> Outcome {
    if token.is_empty() {
        return Err("not_authed".into());
    }
    if world.team_of_token(token).is_some() {
        return Err("not_allowed_token_type".into());
    }
    if token != world.app_token {
        return Err("invalid_auth".into());
    }
    let ticket = world.fresh_id("ticket-");
    world.tickets.push(ticket.clone());
    Ok(json!({"url": format!("{}/link/?ticket={ticket}", world.socket_url)}))
}

fn post_message(world: &mut World, team: &str, params: &Value) -> Outcome {
    let channel = text_param(params, "channel").to_owned();
    if channel.is_empty() {
        return Err("channel_not_found".into());
    }
    let text = text_param(params, "text").to_owned();
    let blocks = blocks_param(params)?;
    if text.is_empty() && blocks.as_array().is_none_or(Vec::is_empty) {
        return Err("no_text".into());
    }
    if text.chars().count() > 40_000 {
        return Err("msg_too_long".into());
    }
    let thread = text_param(params, "thread_ts");
    let bot_user = world
        .team(team)
        .map(|t| t.bot_user_id.clone())
        .unwrap_or_default();
    let ts = world.fresh_ts();
    let message = Message {
        team: team.to_owned(),
        channel: channel.clone(),
        ts: ts.clone(),
        thread_ts: (!thread.is_empty()).then(|| thread.to_owned()),
        text: text.clone(),
        blocks,
        user: bot_user,
        from_bot: true,
        updates: 0,
        history: vec![text],
    };
    echo(world, &message);
    world.messages.push(message.clone());
    Ok(
        json!({"channel": channel, "ts": ts, "message": {"type": "message", "text": message.text,
        "user": message.user, "ts": ts, "blocks": message.blocks}}),
    )
}

/// The bot's own post comes back as a `message` event, as Slack sends it.
fn echo(world: &mut World, message: &Message) {
    if !world.echo_bot_messages {
        return;
    }
    let kind = world.channel_kind(&message.channel);
    let event = payloads::message_event(world, message, &kind, &[]);
    let callback = payloads::event_callback(world, &message.team, event);
    world.enqueue("events_api", callback);
}

fn blocks_param(params: &Value) -> Result<Value, String> {
    match &params["blocks"] {
        Value::Null => Ok(json!([])),
        Value::String(raw) if raw.is_empty() => Ok(json!([])),
        Value::String(raw) => serde_json::from_str(raw).map_err(|_| "invalid_blocks".to_owned()),
        Value::Array(_) => Ok(params["blocks"].clone()),
        _ => Err("invalid_blocks".into()),
    }
    .and_then(|blocks: Value| {
        let valid = blocks
            .as_array()
            .is_some_and(|list| list.iter().all(|b| b["type"].is_string()) && list.len() <= 50);
        valid
            .then_some(blocks)
            .ok_or_else(|| "invalid_blocks".to_owned())
    })
}

fn update_message(world: &mut World, team: &str, params: &Value) -> Outcome {
    let channel = text_param(params, "channel").to_owned();
    let ts = text_param(params, "ts").to_owned();
    let text = text_param(params, "text").to_owned();
    let blocks = blocks_param(params)?;
    let bot_user = world
        .team(team)
        .map(|t| t.bot_user_id.clone())
        .unwrap_or_default();
    let message = world
        .message_mut(&channel, &ts)
        .ok_or_else(|| "message_not_found".to_owned())?;
    if message.user != bot_user {
        return Err("cant_update_message".into());
    }
    if text.chars().count() > 40_000 {
        return Err("msg_too_long".into());
    }
    message.text = text.clone();
    message.blocks = blocks;
    message.updates += 1;
    message.history.push(text.clone());
    Ok(json!({"channel": channel, "ts": ts, "text": text}))
}

fn complete_upload(world: &mut World, team: &str, params: &Value) -> Outcome {
    let files: Vec<Value> = match &params["files"] {
        Value::String(raw) => {
            serde_json::from_str(raw).map_err(|_| "invalid_arguments".to_owned())?
        }
        Value::Array(list) => list.clone(),
        _ => return Err("invalid_arguments".into()),
    };
    let channel = text_param(params, "channel_id").to_owned();
    let thread = text_param(params, "thread_ts").to_owned();
    let mut done = Vec::new();
    for entry in &files {
        let id = entry["id"].as_str().unwrap_or_default();
        let file = world
            .files
            .iter_mut()
            .find(|f| f.id == id && f.team == team)
            .ok_or_else(|| "file_not_found".to_owned())?;
        let Some(bytes) = &file.bytes else {
            return Err("file_upload_not_complete".into());
        };
        if bytes.len() as u64 != file.announced {
            return Err("file_upload_size_mismatch".into());
        }
        if let Some(title) = entry["title"].as_str() {
            file.title = title.to_owned();
        }
        if !channel.is_empty() {
            file.shared_to = Some((
                channel.clone(),
                (!thread.is_empty()).then(|| thread.clone()),
            ));
        }
        done.push(json!({"id": file.id, "title": file.title}));
    }
    Ok(json!({"files": done}))
}

/// `POST /upload/{file_id}`: the bytes of a file announced by `files.getUploadURLExternal`;
/// every POST is recorded as an [`Upload`].
pub fn upload(shared: &Shared, file_id: &str, body: Bytes) -> Response {
    let found = shared.write(|world| {
        let file = world.files.iter_mut().find(|f| f.id == file_id);
        let known = file.is_some();
        if let Some(file) = file {
            file.bytes = Some(body.clone());
        }
        world.uploads.push(Upload {
            file_id: file_id.to_owned(),
            bytes: body.clone(),
            after_calls: world.calls.len(),
            known,
        });
        known.then_some(body.len())
    });
    match found {
        Some(n) => plain(StatusCode::OK, &format!("OK - {n}")),
        None => plain(StatusCode::NOT_FOUND, "no such upload"),
    }
}

/// `GET /files-pri/{team}-{file_id}/[download/]{name}` with the workspace's bot token.
pub fn download(shared: &Shared, rest: &str, bearer: &str) -> Response {
    let key = rest.split('/').next().unwrap_or_default();
    let Some((team, id)) = key.split_once('-') else {
        return plain(StatusCode::NOT_FOUND, "not found");
    };
    let found = shared.read(|world| {
        let allowed = world.team(team).is_some_and(|t| t.bot_token == bearer);
        let file = world.files.iter().find(|f| f.id == id && f.team == team);
        (allowed, file.and_then(|f| f.bytes.clone()))
    });
    match found {
        // Slack answers a request without the right token with its sign-in page.
        (false, _) => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
            .body(Body::from("<html><body>Sign in to Slack</body></html>"))
            .unwrap_or_default(),
        (true, Some(bytes)) => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/octet-stream")
            .body(Body::from(bytes))
            .unwrap_or_default(),
        (true, None) => plain(StatusCode::NOT_FOUND, "not found"),
    }
}
