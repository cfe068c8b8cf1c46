//! The typed sections hermesd reads from the merged tree; a wrong type names the key and line.

use std::path::Path;

use serde::Deserialize;
use serde_yaml::Value;

use super::ConfigError;

#[derive(Debug, Clone, Deserialize)]
pub struct DaemonSection {
    pub socket: String,
    /// Seconds running work gets to finish at shutdown.
    pub drain_timeout: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LoggingSection {
    /// A tracing filter: `info`, `debug`, `hermesd=debug,info`, …
    pub level: String,
    pub max_files: usize,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ModelSection {
    pub default: String,
    pub provider: String,
    pub base_url: String,
}

impl ModelSection {
    /// "provider:model", or the model alone, or empty when nothing is configured.
    pub fn display(&self) -> String {
        match (self.provider.is_empty(), self.default.is_empty()) {
            (_, true) => String::new(),
            (true, false) => self.default.clone(),
            (false, false) => format!("{}:{}", self.provider, self.default),
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct Sections {
    pub daemon: DaemonSection,
    pub logging: LoggingSection,
    pub model: ModelSection,
}

impl Sections {
    pub fn from_tree(tree: &Value, path: &Path, text: Option<&str>) -> Result<Self, ConfigError> {
        serde_path_to_error::deserialize(tree.clone()).map_err(|e| {
            let key = e.path().to_string();
            ConfigError::Value {
                path: path.display().to_string(),
                line: text.and_then(|t| line_of_key(t, &key)),
                message: e.into_inner().to_string(),
                key,
            }
        })
    }
}

/// The 1-based line where a dotted key is written, following indentation; `None` when not found
/// (the value may come from the environment or a flag).
fn line_of_key(text: &str, dotted: &str) -> Option<usize> {
    let mut wanted = dotted.split('.').peekable();
    let mut min_indent = 0;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.is_empty() || trimmed.starts_with('#') || indent < min_indent {
            continue;
        }
        let key = wanted.peek()?;
        if trimmed
            .strip_prefix(key)
            .is_some_and(|rest| rest.starts_with(':'))
        {
            wanted.next();
            if wanted.peek().is_none() {
                return Some(index + 1);
            }
            min_indent = indent + 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_key_line() {
        let text = "model:\n  default: x\ndaemon:\n  # c\n  drain_timeout: abc\n";
        assert_eq!(line_of_key(text, "daemon.drain_timeout"), Some(5));
        assert_eq!(line_of_key(text, "daemon.socket"), None);
    }
}
