//! Fast token estimates of requests and messages, and a meter that corrects them from provider reports.
//!
//! The estimate works in quarter-token units: one unit per UTF-8 byte, plus one more for every
//! 3-byte character (CJK ≈ 1 token per character) and two more for every 4-byte character
//! (emoji ≈ 1.5 tokens). Plain ASCII is therefore ~4 characters per token, as in Hermes, and
//! 2-byte scripts (Cyrillic, Greek, accented Latin) come out at ~2 characters per token.

use std::{io, sync::Arc};

use crate::llm::{ChatMessage, ToolSchema};

/// Fixed tokens for a message's role and framing.
const MESSAGE_OVERHEAD_TOKENS: u64 = 4;
/// Fixed tokens for a tool call's framing (type, function wrapper).
const TOOL_CALL_OVERHEAD_TOKENS: u64 = 3;
/// The compact JSON around one tool schema: `{"type":"function","function":{"name":"","description":"","parameters":}}`.
const TOOL_WRAPPER_BYTES: u64 =
    r#"{"type":"function","function":{"name":"","description":"","parameters":}}"#.len() as u64;

/// Quarter-token units of a text.
fn text_units(text: &str) -> u64 {
    let bytes = text.as_bytes();
    if text.is_ascii() {
        bytes.len() as u64
    } else {
        bytes.len() as u64 + multibyte_extra_units(bytes)
    }
}

/// One extra unit per lead byte of a 3- or 4-byte sequence (>= 0xE0), one more for 4-byte ones (>= 0xF0).
///
/// Counted in byte-wide lanes over chunks small enough not to overflow, so the loop vectorises.
fn multibyte_extra_units(bytes: &[u8]) -> u64 {
    bytes
        .chunks(127)
        .map(|chunk| {
            let mut extra = 0u8;
            for &b in chunk {
                extra += u8::from(b >= 0xE0) + u8::from(b >= 0xF0);
            }
            u64::from(extra)
        })
        .sum()
}

fn units_to_tokens(units: u64) -> u64 {
    units.div_ceil(4)
}

/// Estimated tokens of a plain text.
pub fn estimate_text(text: &str) -> u64 {
    units_to_tokens(text_units(text))
}

/// Estimated tokens of one message: content, tool calls (id, name, arguments), tool-result id and name.
pub fn estimate_message(message: &ChatMessage) -> u64 {
    let mut units = text_units(&message.content);
    for call in &message.tool_calls {
        units += text_units(&call.id) + text_units(&call.name) + text_units(&call.arguments);
    }
    if let Some(id) = &message.tool_call_id {
        units += text_units(id);
    }
    if let Some(name) = &message.name {
        units += text_units(name);
    }
    units_to_tokens(units)
        + MESSAGE_OVERHEAD_TOKENS
        + TOOL_CALL_OVERHEAD_TOKENS * message.tool_calls.len() as u64
}

/// Estimated tokens of a message list.
pub fn estimate_messages(messages: &[ChatMessage]) -> u64 {
    messages.iter().map(estimate_message).sum()
}

/// Counts quarter-token units of whatever is written to it, without keeping the bytes.
struct UnitCounter {
    units: u64,
}

impl io::Write for UnitCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.units += buf.len() as u64 + multibyte_extra_units(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Estimated tokens of tool schemas as sent: the compact JSON of each function object.
///
/// The schemas rarely change within a session, so a caller may compute this once and reuse it.
pub fn estimate_tools(tools: &[Arc<ToolSchema>]) -> u64 {
    let mut counter = UnitCounter { units: 0 };
    for tool in tools {
        counter.units +=
            TOOL_WRAPPER_BYTES + text_units(&tool.name) + text_units(&tool.description);
        // Serialising a `Value` into a counting writer cannot fail; if it did, the partial count stands.
        let _ = serde_json::to_writer(&mut counter, &tool.parameters);
    }
    units_to_tokens(counter.units)
}

/// Estimated prompt tokens of a whole request: system prompt, tool schemas and messages.
pub fn estimate_request(system: &str, tools: &[Arc<ToolSchema>], messages: &[ChatMessage]) -> u64 {
    estimate_text(system) + estimate_tools(tools) + estimate_messages(messages)
}

/// Correction factor learnt from what providers report; multiplies raw estimates.
///
/// Feed it the raw estimate of a request and the provider's total prompt tokens for it
/// (for Anthropic: input + cache read + cache write tokens; for OpenAI-style APIs: prompt tokens,
/// which already include cached ones).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenMeter {
    factor: f64,
    observations: u32,
}

impl Default for TokenMeter {
    fn default() -> Self {
        Self::new()
    }
}

impl TokenMeter {
    /// Lowest correction factor accepted.
    pub const MIN_FACTOR: f64 = 0.5;
    /// Highest correction factor accepted.
    pub const MAX_FACTOR: f64 = 2.5;
    /// Weight of a new observation in the running factor.
    const SMOOTHING: f64 = 0.3;
    /// Requests estimated below this are too small to say anything about the ratio.
    const MIN_OBSERVED_ESTIMATE: u64 = 64;

    /// A meter with no observations (factor 1).
    pub fn new() -> Self {
        Self {
            factor: 1.0,
            observations: 0,
        }
    }

    /// Learn from one request: `estimated` is its raw estimate, `reported_prompt_tokens` the provider's count.
    /// Tiny or zero readings are ignored.
    pub fn observe(&mut self, estimated: u64, reported_prompt_tokens: u64) {
        if estimated < Self::MIN_OBSERVED_ESTIMATE || reported_prompt_tokens == 0 {
            return;
        }
        let ratio = (reported_prompt_tokens as f64 / estimated as f64)
            .clamp(Self::MIN_FACTOR, Self::MAX_FACTOR);
        self.factor = if self.observations == 0 {
            ratio
        } else {
            self.factor + Self::SMOOTHING * (ratio - self.factor)
        };
        self.observations = self.observations.saturating_add(1);
    }

    /// A raw estimate corrected by what has been observed so far.
    pub fn estimate(&self, raw: u64) -> u64 {
        (raw as f64 * self.factor).ceil() as u64
    }

    #[cfg(test)]
    /// The current correction factor.
    pub fn factor(&self) -> f64 {
        self.factor
    }

    #[cfg(test)]
    /// How many readings have been taken into account.
    pub fn observations(&self) -> u32 {
        self.observations
    }
}
