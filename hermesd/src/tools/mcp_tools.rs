//! MCP servers' tools as [`Tool`]s: the name (`mcp__<server>__<tool>`), toolset (`mcp-<server>`)
//! and schema the server gave, and a call that goes to the server (`crate::mcp`). Which of them
//! a session gets is decided with its toolsets in the registry. A call is a remote request with
//! no local path effects, so MCP calls of one batch run at once (one that hangs until its timeout
//! holds up no sibling); a batch with a sequential tool still runs in order.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Concurrency, Tool, ToolContext, ToolError};
use crate::mcp::{CallError, McpTool};

pub struct McpToolAdapter(pub McpTool);

#[async_trait]
impl Tool for McpToolAdapter {
    fn name(&self) -> &str {
        &self.0.name
    }

    fn toolset(&self) -> &str {
        &self.0.toolset
    }

    fn schema(&self) -> Value {
        json!({
            "name": self.0.name,
            "description": self.0.description,
            "parameters": self.0.parameters,
        })
    }

    fn concurrency(&self, _args: &Value) -> Concurrency {
        Concurrency::Safe
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        match self
            .0
            .call(args, &ctx.cancel, &ctx.settings.spill_dir)
            .await
        {
            Ok(value) => Ok(value),
            Err(CallError::Interrupted) => Err(ToolError::Interrupted),
            Err(CallError::Failed(e)) => Err(ToolError::Failed(e)),
        }
    }
}
