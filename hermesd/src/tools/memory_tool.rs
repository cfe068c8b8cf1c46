//! `memory`: the agent's notes (MEMORY.md) and the user profile (USER.md), Hermes' tool on the
//! built-in store. Writes land on disk at once; the system prompt keeps the snapshot taken when
//! the session started.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolServices};
use crate::memory::{self, Target};

pub struct MemoryTool;

#[async_trait]
impl Tool for MemoryTool {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn toolset(&self) -> &'static str {
        "memory"
    }

    fn schema(&self) -> Value {
        memory::memory_schema()
    }

    fn available(&self, services: &ToolServices) -> bool {
        services.memory_settings().any_enabled()
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let settings = ctx.services.memory_settings();
        let target = args
            .get("target")
            .and_then(Value::as_str)
            .and_then(Target::parse)
            .unwrap_or(Target::Memory);
        if !settings.enabled(target) {
            return Ok(json!({
                "success": false,
                "error": format!(
                    "{} is turned off (memory.{} in config.yaml)",
                    target.file_name(),
                    if target == Target::User { "user_profile_enabled" } else { "memory_enabled" }
                ),
            }));
        }
        let store = settings.store(&ctx.services.hermes_home);
        tokio::task::spawn_blocking(move || memory::handle_memory_call(&store, &args))
            .await
            .map_err(|e| ToolError::Failed(format!("the memory tool stopped: {e}")))
    }
}
