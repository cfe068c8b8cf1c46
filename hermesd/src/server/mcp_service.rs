//! The Mcp RPCs: the configured servers' states, a one-off connection test of one of them, and
//! `/reload-mcp` (config.yaml read again, then every enabled server connected again).

use std::sync::Arc;

use hermes_proto::pb;
use tonic::{Request, Response, Status};

use crate::{DaemonState, mcp::ServerStatus};

#[derive(Debug)]
pub struct McpService {
    pub state: Arc<DaemonState>,
}

pub fn server_of(status: ServerStatus) -> pb::McpServer {
    pb::McpServer {
        name: status.name,
        state: status.state.word().to_string(),
        transport: status.transport,
        target: status.target,
        tools: status.tools,
        error: status.error.unwrap_or_default(),
    }
}

/// Every configured server's state (empty when none is configured).
pub fn servers(state: &DaemonState) -> Vec<pb::McpServer> {
    state
        .runner
        .tool_services
        .mcp()
        .map(|mcp| mcp.statuses().into_iter().map(server_of).collect())
        .unwrap_or_default()
}

#[tonic::async_trait]
impl pb::mcp_server::Mcp for McpService {
    async fn list(
        &self,
        _request: Request<pb::ListMcpServersRequest>,
    ) -> Result<Response<pb::ListMcpServersResponse>, Status> {
        Ok(Response::new(pb::ListMcpServersResponse {
            servers: servers(&self.state),
        }))
    }

    async fn test(
        &self,
        request: Request<pb::TestMcpServerRequest>,
    ) -> Result<Response<pb::TestMcpServerResponse>, Status> {
        let name = request.into_inner().name;
        let config = self.state.config();
        let Some(server) = config.settings.mcp.servers.iter().find(|s| s.name == name) else {
            let known: Vec<&str> = config
                .settings
                .mcp
                .servers
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            return Err(Status::not_found(format!(
                "no MCP server {name:?} in mcp_servers (configured: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        };
        let Some(mcp) = self.state.runner.tool_services.mcp() else {
            return Err(Status::unavailable("MCP is not running in this daemon"));
        };
        let mut reply = pb::TestMcpServerResponse {
            transport: server.transport.kind().to_string(),
            target: server.transport.describe(),
            ..Default::default()
        };
        match mcp.probe(server).await {
            Ok((elapsed, tools)) => {
                reply.ok = true;
                reply.elapsed_ms = elapsed.as_millis() as u64;
                reply.tools = tools
                    .into_iter()
                    .map(|t| pb::McpToolInfo {
                        name: t.name,
                        description: t.description,
                    })
                    .collect();
            }
            Err(e) => reply.error = e,
        }
        Ok(Response::new(reply))
    }

    async fn reload(
        &self,
        _request: Request<pb::ReloadMcpRequest>,
    ) -> Result<Response<pb::ReloadMcpResponse>, Status> {
        let notices = super::daemon_service::reload(&self.state).await?;
        if let Some(mcp) = self.state.runner.tool_services.mcp() {
            mcp.reconnect_all();
        }
        Ok(Response::new(pb::ReloadMcpResponse {
            servers: servers(&self.state),
            notices,
        }))
    }
}
