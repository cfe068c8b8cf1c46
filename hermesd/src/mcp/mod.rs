//! MCP servers as the daemon's clients of them (rmcp, client side): every configured server kept
//! connected in the background (`server.rs`), never delaying READY or each other; the tools a new
//! session gets, after waiting up to `mcp.connect_wait` for servers still connecting; the calls,
//! each with its server's timeout and cancelled on an interrupt (rmcp sends
//! `notifications/cancelled` for a request it stops waiting on); the states `mcp list` and
//! `status` show; reloads that restart only the servers whose config changed.

mod convert;
mod http;
mod server;

use std::{
    collections::BTreeMap,
    path::PathBuf,
    sync::{Arc, RwLock},
    time::{Duration, Instant},
};

use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub use convert::{PREFIX, tool_name};
use server::{Context, Server};
pub use server::{RemoteTool, State};

use crate::config::settings::{McpSection, McpServerConfig};

/// What one server is doing, for `mcp list` and `status`.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    pub name: String,
    pub state: State,
    pub transport: String,
    pub target: String,
    pub tools: Vec<String>,
    pub error: Option<String>,
}

/// What a tool of a server does when called.
#[derive(Debug, Clone)]
enum Action {
    Call(String),
    ListResources,
    ReadResource,
    ListPrompts,
    GetPrompt,
}

/// One MCP tool as a session gets it: its name, toolset (`mcp-<server>`), schema and server.
#[derive(Debug, Clone)]
pub struct McpTool {
    pub name: String,
    pub toolset: String,
    pub description: String,
    pub parameters: Value,
    action: Action,
    server: Arc<Server>,
}

/// Why a call did not give a result.
#[derive(Debug)]
pub enum CallError {
    Interrupted,
    Failed(String),
}

impl McpTool {
    pub fn server_name(&self) -> &str {
        &self.server.config.name
    }

    /// Call the tool with `args` (a JSON object); the result is the JSON the model reads.
    /// Images and files in the result are written under `files` (the session's spill
    /// directory, aged and removed with the session's other large results).
    pub async fn call(
        &self,
        args: Value,
        cancel: &CancellationToken,
        files: &std::path::Path,
    ) -> Result<Value, CallError> {
        let name = &self.server.config.name;
        let Some(peer) = self.server.peer() else {
            return Ok(json!({"error": format!("MCP server '{name}' is not connected")}));
        };
        let timeout = self.server.config.timeout;
        let started = Instant::now();
        let arguments = match args {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let request = async {
            let value = match &self.action {
                Action::Call(remote) => {
                    let params =
                        CallToolRequestParams::new(remote.clone()).with_arguments(arguments);
                    let result = peer.call_tool(params).await.map_err(|e| e.to_string())?;
                    let wire = serde_json::to_value(&result).map_err(|e| e.to_string())?;
                    converted(wire, name, files).await?
                }
                Action::ListResources => {
                    let listed = peer.list_all_resources().await.map_err(|e| e.to_string())?;
                    let resources: Vec<Value> = listed
                        .iter()
                        .filter_map(|r| serde_json::to_value(r).ok())
                        .map(|r| {
                            let mut out = serde_json::Map::new();
                            for key in ["uri", "name", "description", "mimeType"] {
                                if let Some(v) = r.get(key) {
                                    out.insert(key.into(), v.clone());
                                }
                            }
                            Value::Object(out)
                        })
                        .collect();
                    json!({ "resources": resources })
                }
                Action::ReadResource => {
                    let Some(uri) = arguments.get("uri").and_then(Value::as_str) else {
                        return Ok(json!({"error": "Missing required parameter 'uri'"}));
                    };
                    let read = peer
                        .read_resource(ReadResourceRequestParams::new(uri))
                        .await
                        .map_err(|e| e.to_string())?;
                    let wire = serde_json::to_value(&read).map_err(|e| e.to_string())?;
                    let blocks: Vec<Value> = wire
                        .get("contents")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .map(|c| json!({"type": "resource", "resource": c}))
                        .collect();
                    converted(json!({ "content": blocks }), name, files).await?
                }
                Action::ListPrompts => {
                    let listed = peer.list_all_prompts().await.map_err(|e| e.to_string())?;
                    let prompts: Vec<Value> = listed
                        .iter()
                        .filter_map(|p| serde_json::to_value(p).ok())
                        .collect();
                    json!({ "prompts": prompts })
                }
                Action::GetPrompt => {
                    let Some(prompt) = arguments.get("name").and_then(Value::as_str) else {
                        return Ok(json!({"error": "Missing required parameter 'name'"}));
                    };
                    let mut params = GetPromptRequestParams::new(prompt);
                    params.arguments = arguments
                        .get("arguments")
                        .and_then(Value::as_object)
                        .cloned();
                    let got = peer.get_prompt(params).await.map_err(|e| e.to_string())?;
                    let wire = serde_json::to_value(&got).map_err(|e| e.to_string())?;
                    let messages: Vec<Value> = wire
                        .get("messages")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .map(|m| {
                            let content = m.get("content").cloned().unwrap_or(Value::Null);
                            let text = content.get("text").cloned().unwrap_or(content);
                            json!({"role": m.get("role"), "content": text})
                        })
                        .collect();
                    let mut out = json!({ "messages": messages });
                    if let Some(d) = wire.get("description") {
                        out["description"] = d.clone();
                    }
                    out
                }
            };
            Ok::<Value, String>(value)
        };
        // Dropping the request (an interrupt, the deadline) makes rmcp tell the server.
        tokio::select! {
            outcome = tokio::time::timeout(timeout, request) => match outcome {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(e)) => Ok(json!({"error": format!("MCP call failed: {e}")})),
                Err(_) => Ok(json!({"error": format!(
                    "MCP call timed out after {:.1}s (configured timeout: {:.1}s)",
                    started.elapsed().as_secs_f64(),
                    timeout.as_secs_f64()
                )})),
            },
            () = cancel.cancelled() => Err(CallError::Interrupted),
        }
    }
}

/// A result as the model reads it: its images and files are written to `files`, on the
/// blocking pool; a result of text alone is converted in place (a hand-off to the pool would
/// cost more than the conversion).
async fn converted(wire: Value, server: &str, files: &std::path::Path) -> Result<Value, String> {
    if !convert::writes_files(&wire) {
        return Ok(convert::call_result(
            &wire,
            server,
            &convert::Attachments { dir: files },
        ));
    }
    let (server, dir) = (server.to_string(), files.to_path_buf());
    tokio::task::spawn_blocking(move || {
        convert::call_result(&wire, &server, &convert::Attachments { dir: &dir })
    })
    .await
    .map_err(|e| format!("the result could not be converted: {e}"))
}

/// Every configured server, and what the daemon's sessions take from them.
pub struct Mcp {
    servers: RwLock<BTreeMap<String, Arc<Server>>>,
    ctx: Arc<Context>,
    connect_wait: RwLock<Duration>,
    /// The supervisors, ended with the daemon.
    tasks: tokio_util::task::TaskTracker,
    /// Counts the changes that make loaded sessions take their tools again: servers added,
    /// removed or reconfigured (a reconnection or a `tools/list_changed` is not one of them).
    generation: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Mcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mcp").finish_non_exhaustive()
    }
}

impl Mcp {
    pub fn new(home: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            servers: RwLock::new(BTreeMap::new()),
            ctx: Arc::new(Context {
                http: tokio::sync::OnceCell::new(),
                logs: home.join("logs"),
                home,
            }),
            connect_wait: RwLock::new(Duration::from_secs(10)),
            tasks: tokio_util::task::TaskTracker::new(),
            generation: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Start, keep, restart or stop servers to match `section`: a server whose config is
    /// unchanged keeps its connection. Returns at once; connecting happens in the background.
    pub fn apply(&self, section: &McpSection) {
        if let Ok(mut wait) = self.connect_wait.write() {
            *wait = section.connect_wait;
        }
        let Ok(mut servers) = self.servers.write() else {
            return;
        };
        let before: Vec<Arc<Server>> = servers.values().cloned().collect();
        let wanted: BTreeMap<&str, &McpServerConfig> = section
            .servers
            .iter()
            .map(|s| (s.name.as_str(), s))
            .collect();
        servers.retain(|name, server| {
            let keep = wanted
                .get(name.as_str())
                .is_some_and(|c| **c == server.config);
            if !keep {
                server.stop();
            }
            keep
        });
        for (name, config) in wanted {
            if servers.contains_key(name) {
                continue;
            }
            let server = Server::new(config.clone());
            self.tasks
                .spawn(Arc::clone(&server).supervise(Arc::clone(&self.ctx)));
            servers.insert(name.to_string(), server);
        }
        let same = before.len() == servers.len()
            && before
                .iter()
                .zip(servers.values())
                .all(|(a, b)| Arc::ptr_eq(a, b));
        if !same {
            self.bump_generation();
        }
    }

    /// Which set of servers and tools loaded sessions should have (see `generation`).
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    fn bump_generation(&self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// `/reload-mcp`: every enabled server connects again now.
    pub fn reconnect_all(&self) {
        for server in self.list() {
            server.reconnect();
        }
    }

    /// Stop every server and wait for their supervisors (daemon shutdown).
    pub async fn shutdown(&self) {
        for server in self.list() {
            server.stop();
        }
        self.tasks.close();
        let _ = tokio::time::timeout(Duration::from_secs(3), self.tasks.wait()).await;
    }

    fn list(&self) -> Vec<Arc<Server>> {
        self.servers
            .read()
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Wait until every server's first connection attempt has ended, at most
    /// `mcp.connect_wait`.
    pub async fn settle(&self) {
        let wait = self.connect_wait.read().map(|w| *w).unwrap_or_default();
        let deadline = tokio::time::Instant::now() + wait;
        for server in self.list() {
            let mut watch = server.watch();
            let settled = watch.wait_for(|s| s.settled);
            if tokio::time::timeout_at(deadline, settled).await.is_err() {
                return;
            }
        }
    }

    /// The tools of every connected server, as they are now.
    pub fn tools(&self) -> Vec<McpTool> {
        let mut out = Vec::new();
        for server in self.list() {
            let snapshot = server.snapshot();
            if snapshot.state != State::Connected {
                continue;
            }
            let name = server.config.name.clone();
            let toolset = format!("mcp-{name}");
            let tool =
                |tool: &str, description: String, parameters: Value, action: Action| McpTool {
                    name: tool_name(&name, tool),
                    toolset: toolset.clone(),
                    description,
                    parameters,
                    action,
                    server: Arc::clone(&server),
                };
            for remote in snapshot.tools.iter() {
                let description = if remote.description.is_empty() {
                    format!("MCP tool {} from {name}", remote.name)
                } else {
                    remote.description.clone()
                };
                out.push(tool(
                    &remote.name,
                    description,
                    convert::schema_for_providers(Some(&remote.input_schema)),
                    Action::Call(remote.name.clone()),
                ));
            }
            let empty = json!({"type": "object", "properties": {}});
            if snapshot.resources {
                out.push(tool(
                    "list_resources",
                    format!("List available resources from MCP server '{name}'"),
                    empty.clone(),
                    Action::ListResources,
                ));
                out.push(tool(
                    "read_resource",
                    format!("Read a resource by URI from MCP server '{name}'"),
                    json!({"type": "object", "properties": {"uri": {"type": "string", "description": "URI of the resource to read"}}, "required": ["uri"]}),
                    Action::ReadResource,
                ));
            }
            if snapshot.prompts {
                out.push(tool(
                    "list_prompts",
                    format!("List available prompts from MCP server '{name}'"),
                    empty.clone(),
                    Action::ListPrompts,
                ));
                out.push(tool(
                    "get_prompt",
                    format!("Get a prompt by name from MCP server '{name}'"),
                    json!({"type": "object", "properties": {"name": {"type": "string", "description": "Name of the prompt to retrieve"}, "arguments": {"type": "object", "description": "Optional arguments to pass to the prompt", "properties": {}, "additionalProperties": true}}, "required": ["name"]}),
                    Action::GetPrompt,
                ));
            }
        }
        // A name two servers produce is kept once: the first server's, in name order.
        let mut seen = std::collections::HashSet::new();
        out.retain(|t| seen.insert(t.name.clone()));
        out
    }

    /// The configured servers' names.
    pub fn names(&self) -> Vec<String> {
        self.servers
            .read()
            .map(|s| s.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Every configured server's state.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.list()
            .iter()
            .map(|server| {
                let snapshot = server.snapshot();
                ServerStatus {
                    name: server.config.name.clone(),
                    state: snapshot.state,
                    transport: server.config.transport.kind().to_string(),
                    target: server.config.transport.describe(),
                    tools: snapshot.tools.iter().map(|t| t.name.clone()).collect(),
                    error: snapshot.error.clone(),
                }
            })
            .collect()
    }

    /// Connect to `config` once and list its tools (`mcp test`): the time taken and the tools.
    pub async fn probe(
        &self,
        config: &McpServerConfig,
    ) -> Result<(Duration, Vec<RemoteTool>), String> {
        server::probe(config, &self.ctx).await
    }
}
