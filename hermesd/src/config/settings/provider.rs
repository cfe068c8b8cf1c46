//! One model provider entry as written in the configuration — `model.*`, an item of
//! `fallback_providers`, or `auxiliary.<task>` — and the wire formats an endpoint may speak.
//! Resolving an entry to an endpoint (the provider catalog, keys from the environment) is `llm`'s.

use std::fmt;

use serde_yaml::Value;

use super::read::{Reader, Verdict, names};

/// The wire format spoken by an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiMode {
    ChatCompletions,
    AnthropicMessages,
    /// The OpenAI Responses API (`POST …/responses`).
    CodexResponses,
}

/// The words of `api_mode` (Hermes' names and their short forms).
pub(super) const API_MODES: [(&str, ApiMode); 6] = [
    ("chat_completions", ApiMode::ChatCompletions),
    ("anthropic_messages", ApiMode::AnthropicMessages),
    ("codex_responses", ApiMode::CodexResponses),
    ("openai", ApiMode::ChatCompletions),
    ("anthropic", ApiMode::AnthropicMessages),
    ("responses", ApiMode::CodexResponses),
];

impl fmt::Display for ApiMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ChatCompletions => "chat_completions",
            Self::AnthropicMessages => "anthropic_messages",
            Self::CodexResponses => "codex_responses",
        })
    }
}

/// A provider entry, strings trimmed (empty when not written).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ProviderEntry {
    /// `provider`: a catalog name, `custom`, or empty / `auto` to guess.
    pub provider: String,
    /// The model name (`model.default` for the primary, `model` elsewhere).
    pub model: String,
    pub base_url: String,
    pub api_key: String,
    /// `api_mode`; `None` infers it from the provider and base URL.
    pub api_mode: Option<ApiMode>,
    /// `text_tool_calls`; `None` takes the provider's default.
    pub text_tool_calls: Option<bool>,
}

impl ProviderEntry {
    /// Read the entry under `r`'s node, its model name at `model_key`.
    pub fn read(r: &mut Reader<'_>, model_key: &str) -> Self {
        Self {
            provider: r.text("provider"),
            model: r.text(model_key),
            base_url: r.text("base_url"),
            api_key: r.secret("api_key"),
            api_mode: r.value("api_mode", None, &"the provider's format", |value| {
                let word = value.as_str().map(str::trim);
                match API_MODES.iter().find(|(w, _)| Some(*w) == word) {
                    Some((_, mode)) => Verdict::Use(Some(*mode)),
                    None if word == Some("") => Verdict::Use(None),
                    None => Verdict::Bad(format!("is not one of {}", names(&API_MODES[..3]))),
                }
            }),
            text_tool_calls: r.flag_opt("text_tool_calls", "the provider's default"),
        }
    }

    /// Read the entry at `key` of `r` (a mapping; anything else is a notice and `None`).
    pub fn read_at(r: &mut Reader<'_>, key: &str, model_key: &str) -> Option<Self> {
        let node = r.get(key)?;
        if !node.is_mapping() {
            let why = "is not a mapping of provider keys";
            r.notice(key, node, why, &"the defaults of its keys");
            return None;
        }
        let mut part = Reader::under(node, r.name(&format!("{key}.")));
        let entry = Self::read(&mut part, model_key);
        r.absorb(part);
        Some(entry)
    }

    /// Read `fallback_providers`: a list of entries. An item that is not a mapping is an empty
    /// entry with a notice, so the chain reports it and the others keep their index.
    pub fn read_list(r: &mut Reader<'_>, key: &str) -> Vec<Self> {
        let Some(value) = r.get(key) else {
            return Vec::new();
        };
        let Value::Sequence(items) = value else {
            r.notice(key, value, "is not a list of providers", &"none");
            return Vec::new();
        };
        let mut entries = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let name = format!("{key}[{index}]");
            if !item.is_mapping() {
                let why = "is not a mapping of provider keys";
                r.notice(&name, item, why, &"an empty entry");
            }
            let mut part = Reader::under(item, r.name(&format!("{name}.")));
            entries.push(Self::read(&mut part, "model"));
            r.absorb(part);
        }
        entries
    }
}

// Keys never reach logs: Debug shows whether one is set, not what it is.
impl fmt::Debug for ProviderEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderEntry")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &(!self.api_key.is_empty()).then_some("<set>"))
            .field("api_mode", &self.api_mode)
            .field("text_tool_calls", &self.text_tool_calls)
            .finish()
    }
}
