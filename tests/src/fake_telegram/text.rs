//! A message text as `sendMessage` and `editMessageText` take it: the checks Telegram makes, in
//! its order (empty, 32 KiB raw, `parse_mode`, entities, trimming, non-empty, 4096 UTF-16 code
//! units), and the visible text and entities that result. `Markdown` and `MarkdownV2` are
//! accepted unparsed: their text is stored as sent.

use serde_json::Value;

use super::{
    entities::{self, Entity},
    html,
    reply::ApiError,
};

/// The longest message text, in UTF-16 code units after parsing.
pub(super) const MAX_TEXT: usize = 4096;
/// The longest raw text the server reads at all, in bytes.
const MAX_RAW: usize = 1 << 15;

/// A text as the chat shows it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Formatted {
    pub(super) text: String,
    pub(super) entities: Vec<Value>,
}

/// Checks and parses `raw` under `parse_mode` (or with the explicit `entities`).
pub(super) fn format(
    raw: &str,
    parse_mode: Option<&str>,
    explicit: Option<Value>,
) -> Result<Formatted, ApiError> {
    if raw.is_empty() {
        return Err(ApiError::bad("message text is empty"));
    }
    if raw.len() > MAX_RAW {
        return Err(ApiError::bad("text is too long"));
    }
    let mode = parse_mode.unwrap_or_default().to_ascii_lowercase();
    let (text, entities) = match mode.as_str() {
        "" | "none" => {
            let given = explicit
                .and_then(|e| e.as_array().cloned())
                .unwrap_or_default();
            return finish(raw, Vec::new(), given);
        }
        "html" => {
            let parsed = html::parse(raw)
                .map_err(|error| ApiError::bad(format!("can't parse entities: {error}")))?;
            (parsed.text, parsed.entities)
        }
        "markdown" | "markdownv2" => (raw.to_owned(), Vec::new()),
        _ => return Err(ApiError::bad("unsupported parse_mode")),
    };
    finish(&text, entities, Vec::new())
}

/// Trims the text and checks what is left.
fn finish(text: &str, parsed: Vec<Entity>, given: Vec<Value>) -> Result<Formatted, ApiError> {
    let (text, parsed) = if given.is_empty() {
        entities::trim(text, parsed)
    } else {
        (text.to_owned(), parsed)
    };
    if text.is_empty() {
        return Err(ApiError::bad("message must be non-empty"));
    }
    if entities::utf16_len(&text) > MAX_TEXT {
        return Err(ApiError::bad("message is too long"));
    }
    let mut entities: Vec<Value> = parsed.iter().map(Entity::json).collect();
    entities.extend(given);
    Ok(Formatted { text, entities })
}
