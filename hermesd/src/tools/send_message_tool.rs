//! `send_message` (Hermes' name and arguments): list the chats the agent can reach, or send a
//! message to `platform` (its home channel), `platform:chat_id` or `platform:chat_id:thread_id`
//! through the gateway's outbox. Offered when a chat platform is configured; never in cron runs
//! (their result is delivered for them).

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{
    Tool, ToolContext, ToolError,
    messenger::{Destination, KnownChat, PlatformTargets},
    optional_str,
};

/// Characters of one message the tool takes (it is split for the platform).
pub const MAX_MESSAGE_CHARS: usize = 32_000;

pub struct SendMessageTool;

#[async_trait]
impl Tool for SendMessageTool {
    fn name(&self) -> &'static str {
        "send_message"
    }

    fn toolset(&self) -> &'static str {
        "messaging"
    }

    fn schema(&self) -> Value {
        json!({
            "name": "send_message",
            "description": "Send a message to a connected messaging platform, or list available targets.\n\n\
                IMPORTANT: When the user asks to send to a specific channel or person (not just a \
                bare platform name), call send_message(action='list') FIRST to see available \
                targets, then send to the correct one.\nIf the user just says a platform name like \
                'send to telegram', send directly to the home channel without listing first.",
            "parameters": {
                "type": "object",
                "properties": {
                    "action": {
                        "type": "string",
                        "enum": ["send", "list"],
                        "description": "'send' (default) sends a message. 'list' returns the available targets on the connected platforms."
                    },
                    "target": {
                        "type": "string",
                        "description": "Delivery target: 'platform' (its home channel), 'platform:chat_id', or 'platform:chat_id:thread_id' for Telegram topics, Discord threads and Slack threads. Examples: 'telegram', 'telegram:-1001234567890:17585', 'discord:1234567890123456789', 'slack:C0123ABCD:1700000000.123456'."
                    },
                    "message": {"type": "string", "description": "The message text to send."}
                },
                "required": []
            }
        })
    }

    fn has_effects(&self, _args: &Value) -> bool {
        true
    }

    fn available(&self, services: &super::ToolServices) -> bool {
        services.messenger().has_platforms()
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let messenger = ctx.services.messenger();
        match optional_str(&args, "action").unwrap_or("send") {
            "list" => Ok(json!({"targets": list(&messenger.targets().await)})),
            "send" => {
                let (Some(target), Some(message)) = (
                    optional_str(&args, "target").filter(|t| !t.trim().is_empty()),
                    optional_str(&args, "message").filter(|m| !m.trim().is_empty()),
                ) else {
                    return Err(ToolError::Arguments(
                        "Both 'target' and 'message' are required when action='send'".into(),
                    ));
                };
                let chars = message.chars().count();
                if chars > MAX_MESSAGE_CHARS {
                    return Err(ToolError::Arguments(format!(
                        "the message is {chars} characters; at most {MAX_MESSAGE_CHARS} are sent"
                    )));
                }
                let to = Destination::parse(target).map_err(ToolError::Arguments)?;
                let sent = messenger
                    .send(&to, message, None)
                    .await
                    .map_err(|e| ToolError::Failed(e.into()))?;
                let mut result = json!({
                    "success": true,
                    "platform": sent.platform,
                    "chat_id": sent.chat_id,
                    "message_id": sent.message_id,
                });
                if !sent.thread_id.is_empty() {
                    result["thread_id"] = json!(sent.thread_id);
                }
                if sent.pieces > 1 {
                    result["pieces"] = json!(sent.pieces);
                }
                if sent.home {
                    result["note"] = json!(format!(
                        "Sent to {} home channel (chat_id: {})",
                        sent.platform, sent.chat_id
                    ));
                }
                Ok(result)
            }
            other => Err(ToolError::Arguments(format!(
                "unknown action '{other}': use 'send' or 'list'"
            ))),
        }
    }
}

/// The targets as the model reads them, one per line, grouped by platform.
fn list(platforms: &[PlatformTargets]) -> String {
    let mut lines = Vec::new();
    for platform in platforms {
        let name = &platform.platform;
        let state = if platform.connected {
            ""
        } else {
            " (not connected)"
        };
        lines.push(format!("{}{state}:", title_case(name)));
        if let Some(home) = &platform.home {
            lines.push(format!("  {name}  (home channel: {})", place(home)));
        }
        for chat in &platform.chats {
            let label = match (chat.name.is_empty(), chat.kind.is_empty()) {
                (true, _) => String::new(),
                (false, true) => format!("  {}", chat.name),
                (false, false) => format!("  {} ({})", chat.name, chat.kind),
            };
            lines.push(format!("  {name}:{}{label}", place(chat)));
        }
        lines.push(String::new());
    }
    if lines.is_empty() {
        return "No messaging platforms connected or no channels discovered yet.".into();
    }
    lines.insert(0, "Available messaging targets:\n".into());
    lines.push("Use these as the \"target\" parameter when sending.".into());
    lines.join("\n")
}

fn place(chat: &KnownChat) -> String {
    if chat.thread_id.is_empty() {
        chat.chat_id.clone()
    } else {
        format!("{}:{}", chat.chat_id, chat.thread_id)
    }
}

fn title_case(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_names_home_and_recent_chats() {
        let chat = |id: &str, name: &str| KnownChat {
            chat_id: id.into(),
            thread_id: String::new(),
            kind: "dm".into(),
            name: name.into(),
        };
        let text = list(&[PlatformTargets {
            platform: "telegram".into(),
            connected: true,
            home: Some(chat("42", "")),
            chats: vec![chat("42", "Ann"), chat("7", "")],
        }]);
        assert!(
            text.contains("Telegram:\n  telegram  (home channel: 42)"),
            "{text}"
        );
        assert!(text.contains("  telegram:42  Ann (dm)"), "{text}");
        assert!(text.contains("  telegram:7\n"), "{text}");
        assert!(list(&[]).starts_with("No messaging platforms"));
    }
}
