//! What hermesd sends Discord: a message's body (the Markdown as is — Discord renders it — with
//! at most 2,000 characters, mentions limited to users, buttons as an action row of components
//! whose `custom_id` is the button's data, a reply as a `message_reference`), the application
//! commands of the gateway's command menu (each with an optional `args` text option), and where
//! a chat's messages go (a thread is a channel: its id when there is one).

use serde_json::{Value, json};

use crate::gateway::adapter::{ChatRef, Outgoing};

/// Discord's limit on a message's content, in characters.
pub const DISCORD_MAX: usize = 2000;
/// Discord's limits on application commands.
const MAX_COMMANDS: usize = 100;
const MAX_NAME: usize = 32;
const MAX_DESCRIPTION: usize = 100;
/// A button's label is at most 80 characters.
const MAX_LABEL: usize = 80;

/// The channel a chat's messages go to: the thread when there is one.
pub fn channel_of(chat: &ChatRef) -> &str {
    if chat.thread_id.is_empty() {
        &chat.chat_id
    } else {
        &chat.thread_id
    }
}

/// The content of `markdown`: as is, at most [`DISCORD_MAX`] characters (the splitter keeps
/// pieces within it; this is the last guard), never empty (Discord refuses an empty message).
pub fn content(markdown: &str) -> String {
    let trimmed = markdown.trim_end();
    if trimmed.trim().is_empty() {
        return "…".to_string();
    }
    if trimmed.chars().count() <= DISCORD_MAX {
        return trimmed.to_string();
    }
    let mut cut: String = trimmed.chars().take(DISCORD_MAX - 1).collect();
    cut.push('…');
    cut
}

/// The action row of `message`'s buttons (empty: none, which removes them on an edit).
fn components(message: &Outgoing) -> Value {
    if message.buttons.is_empty() {
        return json!([]);
    }
    let buttons: Vec<Value> = message
        .buttons
        .iter()
        .take(5)
        .map(|b| {
            let deny = b.data.ends_with(":deny");
            json!({
                "type": 2,
                "style": if deny { 4 } else { 1 },
                "label": b.label.chars().take(MAX_LABEL).collect::<String>(),
                "custom_id": b.data.chars().take(100).collect::<String>(),
            })
        })
        .collect();
    json!([{"type": 1, "components": buttons}])
}

/// The body of a new message.
pub fn create(message: &Outgoing) -> Value {
    let mut body = json!({
        "content": content(&message.markdown),
        "components": components(message),
        "allowed_mentions": {"parse": ["users"], "replied_user": true},
    });
    if let Some(id) = message.reply_to.as_deref().filter(|id| !id.is_empty()) {
        body["message_reference"] = json!({"message_id": id, "fail_if_not_exists": false});
    }
    body
}

/// The body of an edit.
pub fn edit(message: &Outgoing) -> Value {
    json!({
        "content": content(&message.markdown),
        "components": components(message),
        "allowed_mentions": {"parse": ["users"], "replied_user": true},
    })
}

/// The application commands for the menu `commands` (`(name, description)`), as Discord takes
/// them: names lowercased and checked, descriptions cut to size, at most 100, each with an
/// optional `args` text option so `/model openai:gpt-4o` can be typed.
pub fn application_commands(commands: &[(String, String)]) -> Value {
    let mut seen = std::collections::HashSet::new();
    let list: Vec<Value> = commands
        .iter()
        .filter_map(|(name, description)| {
            let name = name.trim().trim_start_matches('/').to_lowercase();
            let valid = !name.is_empty()
                && name.chars().count() <= MAX_NAME
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '-' || c == '_');
            if !valid || !seen.insert(name.clone()) {
                return None;
            }
            let mut description: String =
                description.trim().chars().take(MAX_DESCRIPTION).collect();
            if description.is_empty() {
                description = format!("Run /{name}");
            }
            Some(json!({
                "name": name,
                "description": description,
                "type": 1,
                "options": [{"type": 3, "name": "args", "description": "Arguments",
                    "required": false}],
            }))
        })
        .take(MAX_COMMANDS)
        .collect();
    Value::Array(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::adapter::Button;

    #[test]
    fn messages_go_as_markdown_with_buttons_and_threads() {
        let message = Outgoing {
            markdown: "**bold** and `code`".into(),
            buttons: vec![
                Button {
                    label: "✅ Once".into(),
                    data: "approve:q:once".into(),
                },
                Button {
                    label: "❌ Deny".into(),
                    data: "approve:q:deny".into(),
                },
            ],
            reply_to: Some("77".into()),
        };
        let body = create(&message);
        assert_eq!(body["content"], "**bold** and `code`");
        let row = &body["components"][0];
        assert_eq!(row["type"], 1);
        assert_eq!(row["components"][0]["custom_id"], "approve:q:once");
        assert_eq!(row["components"][1]["style"], 4);
        assert_eq!(body["message_reference"]["message_id"], "77");
        assert_eq!(body["allowed_mentions"]["parse"], json!(["users"]));
        let cleared = edit(&Outgoing::text("done"));
        assert_eq!(cleared["components"], json!([]));
        let thread = ChatRef {
            chat_id: "10".into(),
            thread_id: "11".into(),
        };
        assert_eq!(channel_of(&thread), "11");
        assert_eq!(content(""), "…");
        let long = "é".repeat(2500);
        assert_eq!(content(&long).chars().count(), DISCORD_MAX);
    }

    #[test]
    fn commands_are_checked_and_cut_to_discords_limits() {
        let menu = vec![
            ("new".to_string(), "Start a new conversation".to_string()),
            ("Reload-MCP".to_string(), "x".repeat(300)),
            ("bad name".to_string(), "no".to_string()),
            ("new".to_string(), "twice".to_string()),
            ("usage".to_string(), String::new()),
        ];
        let list = application_commands(&menu);
        let names: Vec<&str> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["new", "reload-mcp", "usage"]);
        assert_eq!(list[1]["description"].as_str().unwrap().len(), 100);
        assert_eq!(list[2]["description"], "Run /usage");
        assert_eq!(list[0]["options"][0]["name"], "args");
        let many: Vec<(String, String)> = (0..150).map(|i| (format!("c{i}"), "d".into())).collect();
        assert_eq!(application_commands(&many).as_array().unwrap().len(), 100);
    }
}
