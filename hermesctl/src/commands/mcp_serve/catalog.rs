//! The tools `hermesctl mcp serve` offers: names, descriptions, input schemas and hints. Names
//! and arguments follow Hermes' own `hermes mcp serve` (`conversations_list`,
//! `conversation_get`, `messages_read`) where the daemon has the same thing; the daemon's
//! sessions play Hermes' conversations, and a session id is the `session_key`.
//! `conversation_send` and `messages_search` are ours: Hermes' bridge has no turn and no search.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// Bounds of the `limit` arguments: (default, max).
pub const LIST_LIMIT: (u32, u32) = (50, 200);
pub const READ_LIMIT: (u32, u32) = (50, 200);
pub const SEARCH_LIMIT: (u32, u32) = (10, 50);
/// Characters of one message's content in `messages_read` (as in Hermes).
pub const CONTENT_CHARS: usize = 2000;

pub const CONVERSATIONS_LIST: &str = "conversations_list";
pub const CONVERSATION_GET: &str = "conversation_get";
pub const MESSAGES_READ: &str = "messages_read";
pub const CONVERSATION_SEND: &str = "conversation_send";
pub const MESSAGES_SEARCH: &str = "messages_search";

pub const INSTRUCTIONS: &str = "Hermes agent bridge (hermesd). List the agent's conversations, \
read them, search their history, and send a message to a conversation to get the agent's answer. \
The daemon's approval rules apply: this bridge cannot approve dangerous commands, so the agent \
is refused them in turns sent from here.";

fn schema(properties: Value, required: &[&str]) -> Arc<JsonObject> {
    let mut object = JsonObject::new();
    object.insert("type".into(), json!("object"));
    object.insert("properties".into(), properties);
    object.insert("required".into(), json!(required));
    Arc::new(object)
}

fn limit(what: &str, (default, max): (u32, u32)) -> Value {
    json!({
        "type": "integer",
        "description": format!("Maximum number of {what} to return (default {default}, max {max})"),
        "default": default,
        "minimum": 1,
        "maximum": max,
    })
}

fn session_key() -> Value {
    json!({"type": "string", "description": "The session key (session id) from conversations_list"})
}

fn reading(title: &str) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(true)
        .open_world(false)
}

/// Every tool, in the order they are listed.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            CONVERSATIONS_LIST,
            "List the agent's conversations, most recently active first. Returns each one's \
             session_key (needed by the other tools), platform (cli, tui, api, cron, telegram, \
             …), display name (its title), state and last activity time.",
            schema(
                json!({
                    "platform": {"type": "string", "description": "Only conversations from this platform (cli, telegram, …)"},
                    "limit": limit("conversations", LIST_LIMIT),
                    "search": {"type": "string", "description": "Only conversations whose title or key contains this text"},
                }),
                &[],
            ),
        )
        .annotate(reading("List conversations")),
        Tool::new(
            CONVERSATION_GET,
            "Get one conversation's details by its session key: platform, title, model, working \
             directory, state, message count, token usage and times.",
            schema(json!({"session_key": session_key()}), &["session_key"]),
        )
        .annotate(reading("Get a conversation")),
        Tool::new(
            MESSAGES_READ,
            "Read the most recent user and assistant messages of a conversation, oldest first, \
             with each one's id, role, content (cut at 2000 characters) and timestamp.",
            schema(
                json!({"session_key": session_key(), "limit": limit("messages", READ_LIMIT)}),
                &["session_key"],
            ),
        )
        .annotate(reading("Read messages")),
        Tool::new(
            CONVERSATION_SEND,
            "Send a message to the agent in a conversation (or in a new one when session_key is \
             omitted) and wait for its answer. The agent runs a full turn with its tools; \
             commands that need approval are refused, since nobody can approve them from here.",
            schema(
                json!({
                    "message": {"type": "string", "description": "The message to the agent"},
                    "session_key": {"type": "string", "description": "The conversation to continue (from conversations_list); omit to start a new one"},
                }),
                &["message"],
            ),
        )
        .annotate(
            ToolAnnotations::with_title("Send a message to the agent")
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(true),
        ),
        Tool::new(
            MESSAGES_SEARCH,
            "Search the history of every conversation (full-text: words, \"phrases\", prefix*, \
             AND / OR / NOT). One hit per conversation, best first, with a snippet around the \
             match (between « and ») and the session_key to read it with messages_read.",
            schema(
                json!({
                    "query": {"type": "string", "description": "What to search for"},
                    "limit": limit("conversations", SEARCH_LIMIT),
                    "platform": {"type": "string", "description": "Only conversations from this platform"},
                    "role": {"type": "string", "enum": ["user", "assistant", "tool"], "description": "Only messages of this role (default: user and assistant)"},
                }),
                &["query"],
            ),
        )
        .annotate(reading("Search history")),
    ]
}
