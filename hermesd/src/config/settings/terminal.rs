//! `terminal.*`: the default foreground timeout of the `terminal` tool, the working directory of
//! sessions created without one, and how many background processes a conversation may run.

use std::time::Duration;

use super::read::Reader;

/// Background processes one conversation may have running at once, by default.
pub const DEFAULT_MAX_BACKGROUND: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalSection {
    /// `terminal.timeout`: whole seconds (at least 1).
    pub timeout: Duration,
    /// `terminal.cwd`: empty means the user's home.
    pub cwd: String,
    /// `terminal.max_background`.
    pub max_background: usize,
}

impl Default for TerminalSection {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(180),
            cwd: String::new(),
            max_background: DEFAULT_MAX_BACKGROUND,
        }
    }
}

impl TerminalSection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        Self {
            timeout: Duration::from_secs(r.whole(
                "terminal.timeout",
                d.timeout.as_secs(),
                1,
                u64::MAX,
            )),
            cwd: r.text("terminal.cwd"),
            max_background: r.whole(
                "terminal.max_background",
                d.max_background as u64,
                0,
                usize::MAX as u64,
            ) as usize,
        }
    }
}
