//! Secrets out of reach: the [`SecretMasker`] masks, in tool output the model or a client sees
//! and in the log, every value of the daemon's environment (the process environment overlaid by
//! `$HERMES_HOME/.env`) whose name ends in a secret word (`_KEY`, `_TOKEN`, `_SECRET`,
//! `_PASSWORD`, …) and is 8 characters or more, used or not; every value or part of one that
//! looks like a key whatever its name (random-looking, 16 characters or more, and a URL's
//! password: `values.rs`); and every string of one of Hermes' key shapes (`agent/redact.py`).
//! Literal values are found with one Aho-Corasick automaton and the shapes gated by one
//! `RegexSet`, so masking is linear in the text. Masks are Hermes' (`sk-pro...7890`, `***`; for
//! file content `«redacted:sk-…»`). `security.redact_secrets: false` turns it off. Built at
//! start and on every reload, since `.env` may change.

mod config;
mod names;
mod prefix;
mod shapes;
mod stream;
mod values;

use std::{borrow::Cow, sync::Arc};

use aho_corasick::{AhoCorasick, MatchKind};
use hermes_proto::env::Env;

use crate::config::Config;

pub use config::{is_secret_key, is_settings_file, mask_settings};
pub use names::{MIN_SECRET_CHARS, is_secret_name};
pub use shapes::warm_up;
pub use shapes::{mask_token, sentinel};
pub use stream::StreamMasker;

/// Whether `text` holds a vendor key of a known shape (`sk-…`, `ghp_…`, `AKIA…`).
pub fn has_vendor_key(text: &str) -> bool {
    prefix::mask_prefixed(text, Style::Display).is_some()
}

/// How a masked secret is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Command output and logs: Hermes' `_mask_token` (`sk-pro...7890`, `***`).
    Display,
    /// File content (`read_file`, `search_files`): a marker that cannot be written back as a
    /// key (Hermes' `file_read=True`).
    FileContent,
}

/// The configured secret values, found in one pass.
struct Literals {
    automaton: AhoCorasick,
    /// Per pattern: the JSON-escaped form of a value (always masked whole).
    escaped: Vec<bool>,
    /// The values, for the stream's hold-back.
    texts: Vec<String>,
}

/// What masks secrets; cheap to share (`Arc`), rebuilt on each configuration load.
pub struct SecretMasker {
    enabled: bool,
    literals: Option<Literals>,
}

impl std::fmt::Debug for SecretMasker {
    /// Counts only: the values are the secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretMasker")
            .field("enabled", &self.enabled)
            .field(
                "values",
                &self.literals.as_ref().map_or(0, |l| l.texts.len()),
            )
            .finish()
    }
}

impl Default for SecretMasker {
    /// Enabled, with no configured values: the key shapes only.
    fn default() -> Self {
        Self::new(&Env::default(), true)
    }
}

/// Whether `security.redact_secrets` is on (see `config::settings::SecuritySection`).
pub fn redact_enabled(config: &Config) -> bool {
    config.settings.security.redact_secrets
}

impl SecretMasker {
    /// A masker for the secrets of `env`; `enabled: false` passes everything through.
    pub fn new(env: &Env, enabled: bool) -> Self {
        let found = names::secret_literals(env);
        let literals = if !enabled || found.is_empty() {
            None
        } else {
            let automaton = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(found.iter().map(|l| l.text.as_str()));
            match automaton {
                Ok(automaton) => Some(Literals {
                    automaton,
                    escaped: found.iter().map(|l| l.escaped).collect(),
                    texts: found.into_iter().map(|l| l.text).collect(),
                }),
                Err(e) => {
                    tracing::error!(error = %e, "cannot build the secret masker; only key shapes are masked");
                    None
                }
            }
        };
        Self { enabled, literals }
    }

    /// The masker `config` asks for: its environment's secrets, on unless `redact_secrets`
    /// is off.
    pub fn from_config(config: &Config) -> Self {
        Self::new(&config.env, redact_enabled(config))
    }

    /// A masker that masks nothing.
    pub fn disabled() -> Self {
        Self::new(&Env::default(), false)
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// `text` with every secret masked for display (command output, events, logs).
    pub fn mask<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.mask_as(text, Style::Display)
    }

    /// `text` with every secret masked in `style`.
    pub fn mask_as<'a>(&self, text: &'a str, style: Style) -> Cow<'a, str> {
        if !self.enabled || text.is_empty() {
            return Cow::Borrowed(text);
        }
        shapes::mask_shapes(self.mask_literals(text, style), style)
    }

    /// Every string inside `value` masked in `style` (a tool result before it is serialised,
    /// so a mask never breaks the JSON around it).
    pub fn mask_json(&self, value: &mut serde_json::Value, style: Style) {
        if !self.enabled {
            return;
        }
        match value {
            serde_json::Value::String(s) => {
                if let Cow::Owned(masked) = self.mask_as(s, style) {
                    *s = masked;
                }
            }
            serde_json::Value::Array(items) => {
                items.iter_mut().for_each(|v| self.mask_json(v, style));
            }
            serde_json::Value::Object(map) => {
                map.values_mut().for_each(|v| self.mask_json(v, style));
            }
            _ => {}
        }
    }

    /// A masker for output that arrives in chunks (a secret may be split between two).
    pub fn stream(self: &Arc<Self>) -> StreamMasker {
        StreamMasker::new(Arc::clone(self))
    }

    /// The configured values (for the stream's hold-back).
    fn literal_texts(&self) -> &[String] {
        self.literals.as_ref().map_or(&[], |l| &l.texts)
    }

    fn mask_literals<'a>(&self, text: &'a str, style: Style) -> Cow<'a, str> {
        let Some(literals) = &self.literals else {
            return Cow::Borrowed(text);
        };
        let mut out = String::new();
        let mut copied = 0;
        for found in literals.automaton.find_iter(text) {
            out.push_str(&text[copied..found.start()]);
            let value = &text[found.range()];
            let escaped = literals.escaped.get(found.pattern().as_usize()) == Some(&true);
            out.push_str(&match (style, escaped) {
                (Style::Display, false) => mask_token(value),
                (Style::Display, true) => "***".to_string(),
                (Style::FileContent, false) => sentinel(value),
                (Style::FileContent, true) => "«redacted-secret»".to_string(),
            });
            copied = found.end();
        }
        if copied == 0 {
            return Cow::Borrowed(text);
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }
}

impl crate::logging::LineFilter for SecretMasker {
    fn filter<'a>(&self, line: &'a str) -> Cow<'a, str> {
        self.mask(line)
    }
}

#[cfg(test)]
mod tests;
