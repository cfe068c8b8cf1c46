//! The payloads Slack delivers, shaped as Slack shapes them: an Events API `event_callback`
//! wrapping a `message` or `app_mention` event, a `block_actions` interaction and a slash
//! command's fields, each for Socket Mode's envelope or the Events API's POST alike.

use serde_json::{Value, json};

use super::state::{Message, World};

/// A channel's `channel_type` from its id, as Slack's ids begin: `D` a direct message, `G` a
/// private channel or group DM (`mpim` when the test names it so), else a public channel.
pub fn channel_type(channel: &str) -> &'static str {
    match channel.as_bytes().first() {
        Some(b'D') => "im",
        Some(b'G') => "group",
        _ => "channel",
    }
}

/// The `message` event of `message` (a bot's own carries `bot_id`).
pub fn message_event(world: &World, message: &Message, kind: &str, files: &[Value]) -> Value {
    let mut event = json!({
        "type": "message",
        "channel": message.channel,
        "user": message.user,
        "text": message.text,
        "ts": message.ts,
        "event_ts": message.ts,
        "channel_type": kind,
        "team": message.team,
        "blocks": [],
    });
    if let Some(thread) = &message.thread_ts {
        event["thread_ts"] = json!(thread);
        event["parent_user_id"] = json!("U0PARENT");
    }
    if message.from_bot
        && let Some(team) = world.team(&message.team)
    {
        event["bot_id"] = json!(team.bot_id);
        event["app_id"] = json!("A0FAKEAPP");
    }
    if !files.is_empty() {
        event["subtype"] = json!("file_share");
        event["files"] = json!(files);
    }
    event
}

/// The `app_mention` event Slack sends beside the `message` event of a message naming the bot.
pub fn app_mention_event(message: &Message) -> Value {
    let mut event = json!({
        "type": "app_mention",
        "channel": message.channel,
        "user": message.user,
        "text": message.text,
        "ts": message.ts,
        "event_ts": message.ts,
        "team": message.team,
    });
    if let Some(thread) = &message.thread_ts {
        event["thread_ts"] = json!(thread);
    }
    event
}

/// The `event_callback` wrapping `event`, as both Socket Mode and the Events API carry it.
pub fn event_callback(world: &mut World, team: &str, event: Value) -> Value {
    let event_id = world.fresh_id("Ev");
    json!({
        "token": "fake-verification-token",
        "team_id": team,
        "api_app_id": "A0FAKEAPP",
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": 1_700_000_000,
        "authorizations": [{"team_id": team, "is_bot": true}],
        "is_ext_shared_channel": false,
        "event_context": format!("ctx-{event_id}"),
    })
}

/// A `block_actions` interaction: `user` pressed the button `action_id` (value `value`) on
/// the message `message`.
pub fn block_actions(
    world: &mut World,
    message: &Message,
    user: &str,
    action_id: &str,
    value: &str,
) -> Value {
    let trigger = world.fresh_id("trig-");
    let user_name = world
        .users
        .get(user)
        .cloned()
        .unwrap_or_else(|| user.to_owned());
    let mut container = json!({
        "type": "message",
        "message_ts": message.ts,
        "channel_id": message.channel,
        "is_ephemeral": false,
    });
    let mut shown = json!({
        "type": "message",
        "user": message.user,
        "ts": message.ts,
        "text": message.text,
        "blocks": message.blocks,
    });
    if let Some(thread) = &message.thread_ts {
        container["thread_ts"] = json!(thread);
        shown["thread_ts"] = json!(thread);
    }
    json!({
        "type": "block_actions",
        "user": {"id": user, "username": user_name, "name": user_name, "team_id": message.team},
        "api_app_id": "A0FAKEAPP",
        "token": "fake-verification-token",
        "container": container,
        "trigger_id": trigger,
        "team": {"id": message.team, "domain": "fake"},
        "channel": {"id": message.channel, "name": message.channel},
        "message": shown,
        "response_url": "http://127.0.0.1:9/actions/response",
        "actions": [{
            "action_id": action_id,
            "block_id": "hermes_actions",
            "text": {"type": "plain_text", "text": value},
            "value": value,
            "type": "button",
            "action_ts": "1700000000.000001",
        }],
    })
}

/// A slash command's fields, as Socket Mode carries them (the Events API posts them as a form).
pub fn slash_command(
    world: &mut World,
    team: &str,
    channel: &str,
    user: &str,
    command: &str,
    text: &str,
) -> Value {
    let trigger = world.fresh_id("trig-");
    let user_name = world
        .users
        .get(user)
        .cloned()
        .unwrap_or_else(|| user.to_owned());
    json!({
        "token": "fake-verification-token",
        "team_id": team,
        "team_domain": "fake",
        "channel_id": channel,
        "channel_name": channel,
        "user_id": user,
        "user_name": user_name,
        "command": command,
        "text": text,
        "api_app_id": "A0FAKEAPP",
        "is_enterprise_install": "false",
        "response_url": "http://127.0.0.1:9/commands/response",
        "trigger_id": trigger,
    })
}
