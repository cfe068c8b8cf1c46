//! Strict YAML frontmatter parsing for SKILL.md and DESCRIPTION.md files.
//!
//! The delimiter rules follow Hermes: the text (after an optional UTF-8 BOM) must start with `---`,
//! and the frontmatter ends at the first line consisting of `---` plus optional trailing
//! whitespace. Unlike Hermes, a broken frontmatter is an error instead of a silent fallback, so
//! the catalog can report the skill rather than index it with half-parsed fields.

use serde_yaml::{Mapping, Value};

/// Why a frontmatter block could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    /// The text opens with `---` but no closing `---` line follows.
    #[error("frontmatter opened with '---' is never closed by a '---' line")]
    NotClosed,
    /// The YAML between the delimiters does not parse.
    #[error("frontmatter is not valid YAML{}: {message}", line.map(|l| format!(" (line {l})")).unwrap_or_default())]
    Yaml {
        /// 1-based line in the file where the parser stopped, when known.
        line: Option<usize>,
        /// The parser's message.
        message: String,
    },
    /// The YAML parses, but to something other than a mapping of keys.
    #[error("frontmatter must be a YAML mapping of keys, found {found}")]
    NotMapping {
        /// Kind of YAML value found instead ("a list", "a string", ...).
        found: &'static str,
    },
}

/// Splits `content` into its frontmatter mapping and the body that follows it.
///
/// A leading UTF-8 BOM is ignored. Text without a leading `---` has no frontmatter: the result is
/// an empty mapping and the whole text as body. An empty frontmatter (`---` directly followed by
/// the closing line) is an empty mapping. Unknown keys are kept.
pub fn parse(content: &str) -> Result<(Mapping, &str), FrontmatterError> {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let Some(after_open) = content.strip_prefix("---") else {
        return Ok((Mapping::new(), content));
    };
    let (yaml_len, body_start) = find_closing(after_open).ok_or(FrontmatterError::NotClosed)?;
    let yaml = &after_open[..yaml_len];
    let body = &after_open[body_start..];
    // The YAML text starts on the line of the opening `---`, so parser line numbers are file
    // line numbers already.
    let value: Value = serde_yaml::from_str(yaml).map_err(|err| FrontmatterError::Yaml {
        line: err.location().map(|loc| loc.line()),
        message: yaml_message(&err),
    })?;
    match value {
        Value::Mapping(map) => Ok((map, body)),
        Value::Null => Ok((Mapping::new(), body)),
        other => Err(FrontmatterError::NotMapping {
            found: value_kind(&other),
        }),
    }
}

/// Finds Hermes' closing delimiter (regex `\n---\s*\n`, leftmost match, greedy whitespace) in
/// `text`, returning (length of the YAML part, offset where the body starts).
fn find_closing(text: &str) -> Option<(usize, usize)> {
    let mut search_from = 0;
    while let Some(rel) = text.get(search_from..)?.find("\n---") {
        let start = search_from + rel;
        let after_dashes = start + 4;
        let tail = &text[after_dashes..];
        let ws_len = tail
            .char_indices()
            .find(|(_, c)| !c.is_whitespace())
            .map_or(tail.len(), |(i, _)| i);
        if let Some(last_newline) = tail[..ws_len].rfind('\n') {
            return Some((start, after_dashes + last_newline + 1));
        }
        search_from = start + 1;
    }
    None
}

/// The parser message without serde_yaml's trailing location, which is reported separately.
fn yaml_message(err: &serde_yaml::Error) -> String {
    let full = err.to_string();
    match full.find(" at line ") {
        Some(idx) => full[..idx].to_owned(),
        None => full,
    }
}

/// A short human name for the kind of a YAML value.
pub(super) fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}
