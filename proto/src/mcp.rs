//! How every client words the MCP servers' states: one line per server for `/reload-mcp` and
//! `hermesctl status`.

use crate::pb::McpServer;

/// `fs: connected, 3 tools` — or `web: failed (why)`; "no MCP servers configured" for none.
pub fn summary(servers: &[McpServer]) -> String {
    if servers.is_empty() {
        return "no MCP servers configured".to_string();
    }
    servers.iter().map(line).collect::<Vec<_>>().join("\n")
}

/// One server's line.
pub fn line(server: &McpServer) -> String {
    let mut text = format!("MCP {}: {}", server.name, server.state);
    if server.state == "connected" {
        let n = server.tools.len();
        text.push_str(&format!(", {n} tool{}", if n == 1 { "" } else { "s" }));
    }
    if !server.error.is_empty() {
        text.push_str(&format!(" ({})", server.error));
    }
    text
}
