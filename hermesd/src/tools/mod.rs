//! Tools the model can call: the `Tool` trait, the context a call runs in, the registry and
//! toolsets, argument coercion, result masking and spilling, and the rules for running calls in
//! parallel.

mod browser_tools;
mod browser_vision;
mod clarify;
mod code_exec;
mod coerce;
mod context;
mod cronjob_tool;
mod delegate_tool;
mod file_tools;
pub mod files;
mod mcp_tools;
mod memory_tool;
pub mod messenger;
mod outcome;
mod parallel;
pub mod patch;
mod patch_tool;
mod registry;
mod send_message_tool;
mod session_search;
mod skill_tools;
mod spill;
mod terminal_tools;
mod todo;
mod tts_tool;
mod vision_tool;
pub mod web;
mod write_guard;

use async_trait::async_trait;
use serde_json::Value;

pub use context::{
    ApprovalDecision, ApprovalRequest, CronHandle, CronOrigin, DelegateHandle, DelegatedTask,
    DelegationPlace, SessionScope, SessionSkills, TodoItem, ToolContext, ToolServices,
    ToolSettings, TurnPort, VisionHandle,
};
pub use cronjob_tool::CRONJOB_ACTIONS;
pub use delegate_tool::DELEGATE_BLOCKED_TOOLS;
pub use outcome::ToolOutcome;
pub use parallel::{Concurrency, MAX_PARALLEL, plan_batch};
pub use registry::{Registry, Toolbox, ToolsetSelection};
pub use spill::{spill_dir, spill_dir_name, spill_root};

/// Why a tool call failed; the text goes back to the model as `{"error": …}`.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments are wrong: missing, of the wrong type, or out of range.
    #[error("{0}")]
    Arguments(String),
    /// The call ran and failed.
    #[error("{0}")]
    Failed(String),
    /// The turn was interrupted while the tool ran.
    #[error("interrupted by the user")]
    Interrupted,
}

/// One tool. Implementations are stateless; per-session state lives in [`ToolServices`].
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls (Hermes' names: `terminal`, `read_file`, …).
    fn name(&self) -> &str;
    /// The toolset that enables it (`terminal`, `file`, `todo`, …).
    fn toolset(&self) -> &str;
    /// The OpenAI function object: `{name, description, parameters}`.
    fn schema(&self) -> Value;
    /// Whether this call may run beside others (see [`plan_batch`]).
    fn concurrency(&self, _args: &Value) -> Concurrency {
        Concurrency::Sequential
    }
    /// Whether the call may change anything beyond this session's state in the daemon: files,
    /// processes, memory, skills, jobs, the store, the user's attention. Such a call runs only once
    /// the request for it is stored, so a crash while it works leaves its cause on record; a call
    /// without effects (a read) may run while that commit completes.
    fn has_effects(&self, _args: &Value) -> bool {
        true
    }
    /// Results longer than this many characters are spilled to a file; `None` never spills.
    fn max_result_chars(&self) -> Option<usize> {
        Some(100_000)
    }
    /// Whether results are the content of files (secrets in them are masked with a marker that
    /// cannot be written back as a key, as Hermes masks `read_file` output).
    fn shows_file_content(&self) -> bool {
        false
    }
    /// Polling calls (waiting on a process) repeat by design and never trip the loop guard.
    fn is_polling(&self, _args: &Value) -> bool {
        false
    }
    /// Whether the tool can work here (a program or key it needs is present).
    fn available(&self, _services: &ToolServices) -> bool {
        true
    }
    /// Run the call. A result object with an `error` key counts as a failure the model sees.
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError>;
}

/// The string argument `key`, or an error naming it.
pub fn required_str<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::Arguments(format!("`{key}` is required and must be a string")))
}

/// An optional string argument.
pub fn optional_str<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The builtin tools of this daemon, in registry order.
pub fn builtin_tools() -> Vec<std::sync::Arc<dyn Tool>> {
    let builtin: [std::sync::Arc<dyn Tool>; 21] = [
        std::sync::Arc::new(terminal_tools::TerminalTool),
        std::sync::Arc::new(terminal_tools::ProcessTool),
        std::sync::Arc::new(file_tools::ReadFileTool),
        std::sync::Arc::new(file_tools::WriteFileTool),
        std::sync::Arc::new(file_tools::SearchFilesTool),
        std::sync::Arc::new(patch_tool::PatchTool),
        std::sync::Arc::new(todo::TodoTool),
        std::sync::Arc::new(clarify::ClarifyTool),
        std::sync::Arc::new(session_search::SessionSearchTool),
        std::sync::Arc::new(memory_tool::MemoryTool),
        std::sync::Arc::new(skill_tools::SkillsListTool),
        std::sync::Arc::new(skill_tools::SkillViewTool),
        std::sync::Arc::new(skill_tools::SkillManageTool),
        std::sync::Arc::new(cronjob_tool::CronjobTool),
        std::sync::Arc::new(send_message_tool::SendMessageTool),
        std::sync::Arc::new(code_exec::ExecuteCodeTool),
        std::sync::Arc::new(delegate_tool::DelegateTaskTool),
        std::sync::Arc::new(web::WebSearchTool),
        std::sync::Arc::new(web::WebExtractTool),
        std::sync::Arc::new(tts_tool::TextToSpeechTool),
        std::sync::Arc::new(vision_tool::VisionAnalyzeTool),
    ];
    builtin
        .into_iter()
        .chain(browser_tools::browser_tools())
        .collect()
}
