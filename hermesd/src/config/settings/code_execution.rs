//! `code_execution.*`: the limits of one `execute_code` script — its wall time and how many
//! tool calls it may make (Hermes' keys and defaults).

use std::time::Duration;

use super::read::Reader;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeExecutionSection {
    /// `code_execution.timeout`: whole seconds a script may run (at least 1).
    pub timeout: Duration,
    /// `code_execution.max_tool_calls`: tool calls one script may make.
    pub max_tool_calls: u32,
}

impl Default for CodeExecutionSection {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(300),
            max_tool_calls: 50,
        }
    }
}

impl CodeExecutionSection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        Self {
            timeout: Duration::from_secs(r.whole(
                "code_execution.timeout",
                d.timeout.as_secs(),
                1,
                86_400,
            )),
            max_tool_calls: r.whole(
                "code_execution.max_tool_calls",
                d.max_tool_calls.into(),
                0,
                10_000,
            ) as u32,
        }
    }
}
