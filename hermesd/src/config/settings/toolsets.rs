//! `toolsets` and `agent.disabled_toolsets`: which toolsets a session gets.

use super::read::Reader;

/// Composite toolset names that mean "every core tool" (Hermes' `hermes-cli`, `hermes-telegram`, …).
fn is_everything(name: &str) -> bool {
    name == "all" || name == "*" || name.starts_with("hermes-")
}

/// Which toolsets a session gets: `toolsets` (empty: all) minus `agent.disabled_toolsets`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolsetSelection {
    pub enabled: Vec<String>,
    pub disabled: Vec<String>,
}

impl ToolsetSelection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        Self {
            enabled: r.list("toolsets", &[]),
            disabled: r.list("agent.disabled_toolsets", &[]),
        }
    }

    /// Whether `toolset` is on.
    pub fn allows(&self, toolset: &str) -> bool {
        if self.disabled.iter().any(|d| d == toolset) {
            return false;
        }
        self.enabled.is_empty()
            || self
                .enabled
                .iter()
                .any(|e| e == toolset || is_everything(e))
    }
}
