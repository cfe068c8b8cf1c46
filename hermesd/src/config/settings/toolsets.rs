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

    /// Whether MCP server `server`'s tools are on, as in Hermes: every enabled server unless
    /// `toolsets` names some of `servers` (then only those) or holds `no_mcp`; a server named
    /// in `agent.disabled_toolsets` (as `x` or `mcp-x`) is off.
    pub fn allows_mcp(&self, server: &str, servers: &[String]) -> bool {
        let names = |list: &[String], name: &str| {
            list.iter()
                .any(|e| e == name || e.strip_prefix("mcp-") == Some(name))
        };
        if names(&self.disabled, server) {
            return false;
        }
        if self.enabled.is_empty() || names(&self.enabled, server) {
            return true;
        }
        if self.enabled.iter().any(|e| e == "no_mcp") {
            return false;
        }
        !servers.iter().any(|s| names(&self.enabled, s))
    }
}
