//! Tests of the compression module, with conversation builders shared by the submodules.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod assemble;
mod estimate;
mod plan;
mod prune;
mod summary;

use crate::llm::{ChatMessage, Role, ToolCall};

pub fn user(text: &str) -> ChatMessage {
    ChatMessage::user(text)
}

pub fn assistant(text: &str) -> ChatMessage {
    ChatMessage::assistant(text)
}

/// An assistant message calling `calls` as (id, tool name, arguments).
pub fn calls(calls: &[(&str, &str, &str)]) -> ChatMessage {
    ChatMessage {
        role: Some(Role::Assistant),
        tool_calls: calls
            .iter()
            .map(|(id, name, arguments)| ToolCall {
                id: (*id).to_owned(),
                name: (*name).to_owned(),
                arguments: (*arguments).to_owned(),
            })
            .collect(),
        ..ChatMessage::default()
    }
}

/// A tool result answering `id`, with the tool's `name` when given.
pub fn result(id: &str, name: Option<&str>, content: &str) -> ChatMessage {
    ChatMessage {
        role: Some(Role::Tool),
        content: content.to_owned(),
        tool_call_id: Some(id.to_owned()),
        name: name.map(str::to_owned),
        ..ChatMessage::default()
    }
}

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `low..high`.
    pub fn range(&mut self, low: usize, high: usize) -> usize {
        low + (self.next() % (high - low) as u64) as usize
    }
}

/// A conversation of about `turns` turns: user asks, assistant calls 1-3 tools or answers.
pub fn random_conversation(rng: &mut Rng, turns: usize) -> Vec<ChatMessage> {
    let mut out = vec![user("start the task")];
    let mut next_id = 0;
    for turn in 0..turns {
        match rng.range(0, 10) {
            0 => out.push(user(&format!("user follow-up {turn}"))),
            1 | 2 => {
                out.push(assistant(&"answer ".repeat(rng.range(1, 50))));
                out.push(user(&format!("next question {turn}")));
            }
            _ => {
                let count = rng.range(1, 4);
                let ids: Vec<String> = (0..count)
                    .map(|k| {
                        next_id += 1;
                        format!("call_{next_id}_{k}")
                    })
                    .collect();
                let specs: Vec<(&str, &str, &str)> = ids
                    .iter()
                    .map(|id| (id.as_str(), "terminal", r#"{"command":"ls"}"#))
                    .collect();
                out.push(calls(&specs));
                for id in &ids {
                    let size = rng.range(10, 3_000);
                    out.push(result(id, Some("terminal"), &"x".repeat(size)));
                }
            }
        }
    }
    out
}

/// Panics unless every tool result follows its assistant call and every call is answered.
pub fn assert_groups_intact(messages: &[ChatMessage]) {
    for (i, message) in messages.iter().enumerate() {
        match message.role() {
            Role::Tool => {
                let owner = messages[..i]
                    .iter()
                    .rposition(|m| m.role() != Role::Tool)
                    .unwrap_or_else(|| panic!("tool result {i} has no preceding message"));
                let id = message.tool_call_id.as_deref().unwrap();
                assert!(
                    messages[owner].role() == Role::Assistant
                        && messages[owner].tool_calls.iter().any(|c| c.id == id),
                    "tool result {i} ({id}) does not follow its call"
                );
            }
            Role::Assistant => {
                let results: Vec<&str> = messages[i + 1..]
                    .iter()
                    .take_while(|m| m.role() == Role::Tool)
                    .filter_map(|m| m.tool_call_id.as_deref())
                    .collect();
                for call in &message.tool_calls {
                    assert!(
                        results.contains(&call.id.as_str()),
                        "call {} at {i} lost its result",
                        call.id
                    );
                }
            }
            _ => {}
        }
    }
}

/// Panics unless the first message is on the user side and no two assistant messages, nor two
/// user-side messages around a summary, are adjacent.
pub fn assert_alternation_around_summary(messages: &[ChatMessage]) {
    let visible: Vec<&ChatMessage> = messages
        .iter()
        .filter(|m| m.role() != Role::System)
        .collect();
    assert_ne!(
        visible[0].role(),
        Role::Assistant,
        "first message is an assistant message"
    );
    for pair in visible.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        assert!(
            !(a.role() == Role::Assistant && b.role() == Role::Assistant),
            "two assistant messages in a row"
        );
        if super::is_summary_message(a) || super::is_summary_message(b) {
            assert!(
                a.role() == Role::Assistant || b.role() == Role::Assistant,
                "summary next to another user-side message"
            );
        }
    }
}
