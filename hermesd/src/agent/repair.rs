//! Orphan repair on the copy of the history sent to the model: a tool result whose call is not in
//! the assistant message before it is dropped, and a call without a result gets a stub result, so
//! providers never reject the request over a turn cut short by a crash or an interrupt.

use std::collections::HashSet;

use crate::llm::{ChatMessage, Role};

/// The content of the stub result for a call that never finished.
pub const MISSING_RESULT: &str =
    r#"{"error": "no result: the call was interrupted before it finished"}"#;

/// Repair `messages` in place.
pub fn repair(messages: &mut Vec<ChatMessage>) {
    let mut out: Vec<ChatMessage> = Vec::with_capacity(messages.len());
    let mut open: Vec<(String, String)> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    for message in messages.drain(..) {
        match message.role() {
            Role::Tool => {
                let id = message.tool_call_id.clone().unwrap_or_default();
                if open.iter().any(|(call, _)| *call == id) && answered.insert(id) {
                    out.push(message);
                }
            }
            _ => {
                close(&mut out, &mut open, &answered);
                answered.clear();
                if message.role() == Role::Assistant {
                    open = message
                        .tool_calls
                        .iter()
                        .map(|c| (c.id.clone(), c.name.clone()))
                        .collect();
                }
                out.push(message);
            }
        }
    }
    close(&mut out, &mut open, &answered);
    *messages = out;
}

fn close(out: &mut Vec<ChatMessage>, open: &mut Vec<(String, String)>, answered: &HashSet<String>) {
    for (id, name) in open.drain(..) {
        if !answered.contains(&id) {
            out.push(ChatMessage {
                role: Some(Role::Tool),
                content: MISSING_RESULT.to_string(),
                tool_call_id: Some(id),
                name: Some(name),
                ..ChatMessage::default()
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;

    fn assistant_calling(ids: &[&str]) -> ChatMessage {
        ChatMessage {
            role: Some(Role::Assistant),
            tool_calls: ids
                .iter()
                .map(|id| ToolCall {
                    id: (*id).into(),
                    name: "terminal".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            ..ChatMessage::default()
        }
    }

    fn result(id: &str) -> ChatMessage {
        ChatMessage {
            role: Some(Role::Tool),
            content: "ok".into(),
            tool_call_id: Some(id.into()),
            ..ChatMessage::default()
        }
    }

    #[test]
    fn orphans_are_dropped_and_missing_results_stubbed() {
        let mut messages = vec![
            ChatMessage::user("hi"),
            result("ghost"),
            assistant_calling(&["a", "b"]),
            result("a"),
            result("a"),
            ChatMessage::user("again"),
        ];
        repair(&mut messages);
        let shape: Vec<(Role, Option<&str>, &str)> = messages
            .iter()
            .map(|m| (m.role(), m.tool_call_id.as_deref(), m.content.as_str()))
            .collect();
        assert_eq!(
            shape,
            vec![
                (Role::User, None, "hi"),
                (Role::Assistant, None, ""),
                (Role::Tool, Some("a"), "ok"),
                (Role::Tool, Some("b"), MISSING_RESULT),
                (Role::User, None, "again"),
            ]
        );
    }

    #[test]
    fn a_complete_history_is_unchanged() {
        let mut messages = vec![
            ChatMessage::user("hi"),
            assistant_calling(&["a"]),
            result("a"),
        ];
        let before = messages.clone();
        repair(&mut messages);
        assert_eq!(messages, before);
    }
}
