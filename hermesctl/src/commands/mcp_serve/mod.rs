//! `hermesctl mcp serve`: an MCP server on stdio that exposes the daemon to other agents
//! (Claude Code, Cursor, another Hermes), as Hermes' `hermes mcp serve` does. It is a thin
//! bridge: every tool call is a call of the daemon's gRPC services over its socket, so the
//! daemon's approvals and limits apply, and a failed call is a tool error, never a crash.
//! stdout carries the protocol only; nothing else is printed there.
//!
//! The daemon is reached on the first call (started if needed, like any hermesctl command) and
//! again after it went away, so the server starts and lists its tools without one.

mod args;
mod calls;
mod catalog;

use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
        Tool,
    },
    service::RequestContext,
};
use serde_json::json;
use tokio::sync::Mutex;

use crate::{
    connection::{self, Daemon},
    context::Context,
    error::CliError,
};

/// The server: where the daemon is, and the connection once made.
struct Bridge {
    ctx: Context,
    daemon: Mutex<Option<Daemon>>,
}

impl Bridge {
    /// The connected daemon, connecting (and starting it) when there is none yet.
    async fn daemon(&self) -> Result<Daemon, calls::Failure> {
        let mut held = self.daemon.lock().await;
        if let Some(daemon) = held.as_ref() {
            return Ok(daemon.clone());
        }
        let daemon = connection::connect(&self.ctx)
            .await
            .map_err(|e| calls::Failure {
                text: e.message,
                disconnected: true,
            })?;
        *held = Some(daemon.clone());
        Ok(daemon)
    }

    async fn run_tool(&self, name: &str, args: &args::Args<'_>) -> CallToolResult {
        let outcome = match self.daemon().await {
            Ok(daemon) => calls::call(&daemon, name, args).await,
            Err(failure) => Err(failure),
        };
        match outcome {
            Ok(value) => CallToolResult::success(vec![ContentBlock::text(pretty(&value))]),
            Err(failure) => {
                if failure.disconnected {
                    // Connect afresh next time: the daemon may have restarted or been upgraded.
                    *self.daemon.lock().await = None;
                }
                CallToolResult::error(vec![ContentBlock::text(pretty(
                    &json!({"error": failure.text}),
                ))])
            }
        }
    }
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

impl ServerHandler for Bridge {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("hermes", env!("CARGO_PKG_VERSION"))
                    .with_title("Hermes agent (hermesd)"),
            )
            .with_instructions(catalog::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(catalog::tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        catalog::tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.get_tool(&request.name).is_none() {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}", request.name),
                None,
            ));
        }
        let empty = JsonObject::new();
        let args = args::Args(request.arguments.as_ref().unwrap_or(&empty));
        Ok(self.run_tool(&request.name, &args).await.into())
    }
}

/// Serve MCP on stdin/stdout until the client closes stdin.
pub async fn run(ctx: &Context) -> Result<(), CliError> {
    let bridge = Bridge {
        ctx: ctx.clone(),
        daemon: Mutex::new(None),
    };
    let service = bridge
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| CliError::new(format!("mcp serve: the MCP session did not start: {e}")))?;
    service
        .waiting()
        .await
        .map_err(|e| CliError::new(format!("mcp serve: the MCP service failed: {e}")))?;
    Ok(())
}
