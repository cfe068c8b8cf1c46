//! Cheap pre-pass: replaces large old tool results with a one-line placeholder naming the tool and size.

use crate::llm::{ChatMessage, Role};

/// Start of every placeholder; a result that begins with it is never pruned again.
pub const PRUNED_PREFIX: &str = "[tool result pruned:";
/// Tool names longer than this are cut in placeholders.
const MAX_TOOL_NAME_CHARS: usize = 64;

/// What a pruning pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneStats {
    /// Tool results replaced by a placeholder.
    pub pruned: usize,
    /// Characters removed (original length minus placeholder length).
    pub chars_saved: usize,
}

impl PruneStats {
    /// Adds another pass's counts to these.
    pub fn add(&mut self, other: PruneStats) {
        self.pruned += other.pruned;
        self.chars_saved += other.chars_saved;
    }
}

#[cfg(test)]
/// Replaces, in `messages[..protect_from]`, every tool result longer than `min_chars` characters
/// by `[tool result pruned: <tool> output, <N> chars]`. Messages from `protect_from` on (the
/// protected tail) and already-pruned results are left alone.
pub fn prune_tool_results(
    messages: &mut [ChatMessage],
    protect_from: usize,
    min_chars: usize,
) -> PruneStats {
    let end = protect_from.min(messages.len());
    let mut stats = PruneStats::default();
    for index in 0..end {
        let replacement = pruned_content(&messages[index], min_chars, || {
            tool_name(messages[..index].iter(), &messages[index])
        });
        if let Some((placeholder, saved)) = replacement {
            stats.pruned += 1;
            stats.chars_saved += saved;
            messages[index].content = placeholder;
        }
    }
    stats
}

/// Copies of `messages` with large tool results pruned, without copying the pruned content.
pub(super) fn pruned_copy(
    messages: &[&ChatMessage],
    min_chars: usize,
) -> (Vec<ChatMessage>, PruneStats) {
    let mut stats = PruneStats::default();
    let copies = messages
        .iter()
        .enumerate()
        .map(|(index, &message)| {
            let replacement = pruned_content(message, min_chars, || {
                tool_name(messages[..index].iter().copied(), message)
            });
            match replacement {
                Some((placeholder, saved)) => {
                    stats.pruned += 1;
                    stats.chars_saved += saved;
                    ChatMessage {
                        role: message.role,
                        content: placeholder,
                        tool_calls: message.tool_calls.clone(),
                        tool_call_id: message.tool_call_id.clone(),
                        name: message.name.clone(),
                        images: Vec::new(),
                        provider_items: message.provider_items.clone(),
                    }
                }
                None => message.clone(),
            }
        })
        .collect();
    (copies, stats)
}

/// The placeholder and characters saved if `message` is a tool result to prune.
fn pruned_content<'a>(
    message: &ChatMessage,
    min_chars: usize,
    tool: impl FnOnce() -> &'a str,
) -> Option<(String, usize)> {
    // Byte length bounds the character count, so short results are skipped without counting.
    if message.role() != Role::Tool
        || message.content.len() <= min_chars
        || message.content.starts_with(PRUNED_PREFIX)
    {
        return None;
    }
    let chars = message.content.chars().count();
    if chars <= min_chars {
        return None;
    }
    let placeholder = placeholder(tool(), chars);
    let saved = chars.saturating_sub(placeholder.chars().count());
    Some((placeholder, saved))
}

/// The placeholder text for a pruned result of `tool` that had `chars` characters.
pub fn placeholder(tool: &str, chars: usize) -> String {
    let tool: String = tool.chars().take(MAX_TOOL_NAME_CHARS).collect();
    format!(
        "{PRUNED_PREFIX} {tool} output, {} chars]",
        group_thousands(chars)
    )
}

/// The tool that produced `result`: its own `name`, else the call with its id among the
/// `preceding` messages (searched from the nearest).
pub(super) fn tool_name<'a>(
    preceding: impl DoubleEndedIterator<Item = &'a ChatMessage>,
    result: &'a ChatMessage,
) -> &'a str {
    if let Some(name) = result.name.as_deref().filter(|n| !n.is_empty()) {
        return name;
    }
    let Some(id) = result.tool_call_id.as_deref() else {
        return "unknown";
    };
    preceding
        .rev()
        .filter(|m| m.role() == Role::Assistant)
        .flat_map(|m| m.tool_calls.iter())
        .find(|call| call.id == id)
        .map_or("unknown", |call| call.name.as_str())
}

/// `18432` → `18,432`.
pub(super) fn group_thousands(value: usize) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
