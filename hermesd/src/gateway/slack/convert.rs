//! What Slack delivers, as the gateway's [`Inbound`]: a `message` or `app_mention` event, a
//! `block_actions` press, a slash command. As Hermes reads them: a DM (`im`) is direct, a
//! channel, private channel or group DM goes by the group rules; a top-level channel message
//! opens a thread of its own (`reply_in_thread`, on by default) and so does a top-level DM
//! (`dm_top_level_threads_as_sessions`, on by default), so each is answered in its thread and
//! is a conversation of its own; a thread reply stays in its thread. The bot's own messages,
//! other bots', edits and deletions are dropped. `<@BOT>` mentions the bot (and is taken out
//! of the text), as does `app_mention`; a reply in a thread the bot answered in or was
//! mentioned in is for it too. `/hermes <sub> args` becomes `/<sub> args` when `<sub>` is a
//! command, a question otherwise, `/help` when empty; `!cmd` is `/cmd` (Slack refuses slash
//! commands in threads). Each update's id is a stable hash of what identifies it, so Slack's
//! redeliveries (and the `message` + `app_mention` pair of one message) are stored once.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::gateway::adapter::{Addressing, Attachment, ButtonPress, ChatKind, ChatRef, Inbound};

/// What conversion needs to know of the adapter.
pub struct Context<'a> {
    /// The bot's user id in the event's workspace (empty: unknown).
    pub bot_user: &'a str,
    /// The command names (for `/hermes <sub>` and `!cmd`).
    pub commands: &'a [String],
    pub reply_in_thread: bool,
    pub dm_threads: bool,
    /// Whether the bot posted in, or was mentioned in, the thread `(channel, thread_ts)`.
    pub bot_thread: &'a dyn Fn(&str, &str) -> bool,
    /// A known display name of a user id.
    pub user_name: &'a dyn Fn(&str) -> Option<String>,
}

/// One converted delivery: the update, and the workspace it came from.
#[derive(Debug)]
pub struct Converted {
    pub inbound: Inbound,
    pub team: String,
    /// A thread the bot was mentioned in: remember it.
    pub mentioned_thread: Option<String>,
}

/// A stable 63-bit id of `parts` (what the store dedups on).
pub fn stable_id(parts: &[&str]) -> i64 {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    let digest = hash.finalize();
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    (u64::from_be_bytes(bytes) & (i64::MAX as u64)) as i64
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

/// The `channel_type` of `channel`, from the event or the id's first letter.
fn kind_of(event: &Value, channel: &str) -> ChatKind {
    let channel_type = match text(event, "channel_type") {
        "" if channel.starts_with('D') => "im",
        "" => "channel",
        given => given,
    };
    if channel_type == "im" {
        ChatKind::Dm
    } else {
        ChatKind::Group
    }
}

/// An Events API `event_callback` (Socket Mode's `events_api` payload, or the HTTP body).
pub fn event_callback(callback: &Value, cx: &Context<'_>) -> Option<Converted> {
    let event = &callback["event"];
    let kind = text(event, "type");
    if kind != "message" && kind != "app_mention" {
        return None;
    }
    match event["subtype"].as_str() {
        None | Some("file_share" | "thread_broadcast") => {}
        // Edits, deletions, joins, bot posts: not for the agent (as Hermes).
        Some(_) => return None,
    }
    let user = text(event, "user");
    if event.get("bot_id").is_some_and(|b| !b.is_null()) || user.is_empty() {
        return None;
    }
    if !cx.bot_user.is_empty() && user == cx.bot_user {
        return None;
    }
    let team = match text(callback, "team_id") {
        "" => text(event, "team"),
        team => team,
    };
    let channel = text(event, "channel");
    let ts = text(event, "ts");
    if channel.is_empty() || ts.is_empty() {
        return None;
    }
    let chat_kind = kind_of(event, channel);
    let raw = text(event, "text");
    let mention = format!("<@{}>", cx.bot_user);
    let mentions_me = kind == "app_mention" || (!cx.bot_user.is_empty() && raw.contains(&mention));
    let thread_ts = text(event, "thread_ts");
    let thread_reply = !thread_ts.is_empty() && thread_ts != ts;
    let thread = if thread_reply {
        thread_ts
    } else if (chat_kind == ChatKind::Dm && cx.dm_threads)
        || (chat_kind == ChatKind::Group && cx.reply_in_thread)
    {
        ts
    } else {
        ""
    };
    let mut body = if mentions_me && !cx.bot_user.is_empty() {
        raw.replace(&mention, " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        raw.to_string()
    };
    body = bang_command(&body, cx.commands);
    let in_bot_thread = thread_reply && (cx.bot_thread)(channel, thread_ts);
    Some(Converted {
        inbound: Inbound {
            update_id: stable_id(&[team, channel, ts]),
            chat: ChatRef {
                chat_id: channel.to_string(),
                thread_id: thread.to_string(),
            },
            kind: chat_kind,
            user_id: user.to_string(),
            user_name: (cx.user_name)(user).unwrap_or_else(|| user.to_string()),
            chat_name: channel.to_string(),
            message_id: ts.to_string(),
            text: body,
            edited: false,
            reply_to: None,
            attachments: files(team, event),
            press: None,
            // A reply in the bot's thread is `in_my_thread`, not a reply to the bot: the
            // platform's `thread_require_mention` can still ask for a mention there.
            addressing: Addressing {
                mentions_me,
                replies_to_me: false,
                names_only_other_bots: false,
                in_my_thread: in_bot_thread,
            },
            in_forum: false,
        },
        team: team.to_string(),
        mentioned_thread: (mentions_me && thread_reply).then(|| thread_ts.to_string()),
    })
}

/// `!cmd args` as `/cmd args` when `cmd` is a command.
fn bang_command(body: &str, commands: &[String]) -> String {
    let Some(rest) = body.strip_prefix('!') else {
        return body.to_string();
    };
    let word = rest.split_whitespace().next().unwrap_or_default();
    let name = word.split('@').next().unwrap_or_default().to_lowercase();
    if !name.is_empty() && commands.contains(&name) {
        format!("/{rest}")
    } else {
        body.to_string()
    }
}

/// The files of a message as attachments; `file_id` is `<team> <url_private_download>` with
/// `:` written `%3A` (the gateway keeps an attachment as `kind:file_id:name`).
fn files(team: &str, event: &Value) -> Vec<Attachment> {
    let Some(list) = event["files"].as_array() else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|f| {
            let url = match text(f, "url_private_download") {
                "" => text(f, "url_private"),
                url => url,
            };
            if url.is_empty() {
                return None;
            }
            let mimetype = text(f, "mimetype");
            let name = text(f, "name");
            let kind = if mimetype.starts_with("image/") {
                "photo"
            } else if mimetype.starts_with("audio/") || name.starts_with("audio_message") {
                "voice"
            } else if mimetype.starts_with("video/") {
                "video"
            } else {
                "document"
            };
            Some(Attachment {
                kind,
                file_id: format!("{team} {}", url.replace('%', "%25").replace(':', "%3A")),
                file_name: name.to_string(),
                size: f["size"].as_u64().unwrap_or(0),
            })
        })
        .collect()
}

/// The workspace and URL of an attachment's `file_id`.
pub fn file_url(file_id: &str) -> Option<(&str, String)> {
    let (team, url) = file_id.split_once(' ')?;
    Some((team, url.replace("%3A", ":").replace("%25", "%")))
}

/// A `block_actions` interaction: a button press.
pub fn block_actions(payload: &Value) -> Option<Converted> {
    if text(payload, "type") != "block_actions" {
        return None;
    }
    let action = payload["actions"].as_array()?.first()?;
    let team = text(&payload["team"], "id");
    let channel = match text(&payload["channel"], "id") {
        "" => text(&payload["container"], "channel_id"),
        channel => channel,
    };
    let user = text(&payload["user"], "id");
    let message = match text(&payload["message"], "ts") {
        "" => text(&payload["container"], "message_ts"),
        ts => ts,
    };
    let thread = match text(&payload["container"], "thread_ts") {
        "" => text(&payload["message"], "thread_ts"),
        thread => thread,
    };
    if channel.is_empty() || user.is_empty() {
        return None;
    }
    let trigger = text(payload, "trigger_id");
    let user_name = match text(&payload["user"], "username") {
        "" => user,
        name => name,
    };
    Some(Converted {
        inbound: Inbound {
            update_id: stable_id(&["press", team, trigger, message]),
            chat: ChatRef {
                chat_id: channel.to_string(),
                thread_id: thread.to_string(),
            },
            kind: if channel.starts_with('D') {
                ChatKind::Dm
            } else {
                ChatKind::Group
            },
            user_id: user.to_string(),
            user_name: user_name.to_string(),
            chat_name: channel.to_string(),
            message_id: message.to_string(),
            text: String::new(),
            edited: false,
            reply_to: None,
            attachments: Vec::new(),
            press: Some(ButtonPress {
                id: press_id(team, channel, user, thread),
                data: text(action, "value").to_string(),
                message_id: message.to_string(),
            }),
            addressing: Addressing::default(),
            in_forum: false,
        },
        team: team.to_string(),
        mentioned_thread: None,
    })
}

/// What `answer_press` needs to show its note to the presser: where, and to whom.
pub fn press_id(team: &str, channel: &str, user: &str, thread: &str) -> String {
    format!("{team} {channel} {user} {thread}")
}

/// A slash command's fields.
pub fn slash_command(fields: &Value, cx: &Context<'_>) -> Option<Converted> {
    let team = text(fields, "team_id");
    let channel = text(fields, "channel_id");
    let user = text(fields, "user_id");
    if channel.is_empty() || user.is_empty() {
        return None;
    }
    let command = text(fields, "command").trim_start_matches('/');
    let args = text(fields, "text").trim();
    let body = if command == "hermes" || command.is_empty() {
        hermes_subcommand(args, cx.commands)
    } else {
        format!("/{command} {args}").trim_end().to_string()
    };
    let trigger = text(fields, "trigger_id");
    let user_name = match text(fields, "user_name") {
        "" => user,
        name => name,
    };
    Some(Converted {
        inbound: Inbound {
            update_id: stable_id(&["command", team, channel, user, trigger]),
            chat: ChatRef {
                chat_id: channel.to_string(),
                thread_id: String::new(),
            },
            kind: if channel.starts_with('D') {
                ChatKind::Dm
            } else {
                ChatKind::Group
            },
            user_id: user.to_string(),
            user_name: user_name.to_string(),
            chat_name: channel.to_string(),
            message_id: String::new(),
            text: body,
            edited: false,
            reply_to: None,
            attachments: Vec::new(),
            press: None,
            // A command is addressed to the bot.
            addressing: Addressing {
                mentions_me: true,
                ..Addressing::default()
            },
            in_forum: false,
        },
        team: team.to_string(),
        mentioned_thread: None,
    })
}

/// `/hermes <args>` as Hermes maps it: a command word becomes `/<word> rest` (`compact` is
/// `/compress`), other text is a question, nothing is `/help`.
pub fn hermes_subcommand(args: &str, commands: &[String]) -> String {
    let mut words = args.splitn(2, char::is_whitespace);
    let first = words.next().unwrap_or_default();
    let rest = words.next().unwrap_or_default().trim();
    if first.is_empty() {
        return "/help".into();
    }
    let name = match first {
        "compact" => "compress",
        other => other,
    };
    if commands.iter().any(|c| c == name) {
        return format!("/{name} {rest}").trim_end().to_string();
    }
    args.to_string()
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
