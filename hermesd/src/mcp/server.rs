//! One configured MCP server and the task that keeps it connected: connect (a stdio child in its
//! own process group, or Streamable HTTP) within `connect_timeout`, list its tools, then watch the
//! connection — `notifications/tools/list_changed` lists them again, a lost connection is
//! reported and retried with backoff (1 s doubling to 60 s), `/reload-mcp` reconnects at once.
//! Its state is a `watch` value every reader sees whole: the state word, the tools of the live
//! connection, the last error.

use std::{
    path::PathBuf,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use rmcp::{
    ClientHandler, ServiceExt,
    model::{ClientCapabilities, ClientConfig, Implementation},
    service::{NotificationContext, Peer, RoleClient},
    transport::{
        StreamableHttpClientTransport, TokioChildProcess,
        streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::Value;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use super::http::McpHttp;
use crate::config::settings::{McpServerConfig, McpTransport};

/// The longest wait between two connection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Environment variables a stdio server gets from the daemon (Hermes' safe base); everything
/// else — provider keys, platform tokens — only when its config's `env` names it.
const SAFE_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR",
];
/// How long an HTTP server's TCP and TLS connection may take.
const HTTP_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// A stderr log past this size is started again when a server starts.
const STDERR_LOG_LIMIT: u64 = 4 * 1024 * 1024;
/// Bytes of one start's stderr kept in the log.
const STDERR_PER_START: u64 = 1024 * 1024;

/// Where a server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Connecting,
    Connected,
    Failed,
    Disabled,
}

impl State {
    pub fn word(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Failed => "failed",
            Self::Disabled => "disabled",
        }
    }
}

/// One tool as the server lists it (wire JSON kept: name, description, inputSchema).
#[derive(Debug, Clone)]
pub struct RemoteTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// What readers see of a server.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub state: State,
    pub tools: Arc<Vec<RemoteTool>>,
    pub resources: bool,
    pub prompts: bool,
    pub error: Option<String>,
    /// The first connection attempt has ended (a new session waits for that, never for a
    /// reconnection).
    pub settled: bool,
}

/// What a server's connection needs from the daemon.
pub struct Context {
    /// Built on the first HTTP server's connection (it reads the system's certificates).
    pub http: tokio::sync::OnceCell<crate::llm::HttpClient>,
    /// `logs/` of the home: `mcp-stderr.log` is there.
    pub logs: PathBuf,
    /// The home, the working directory of a stdio server without `cwd`.
    pub home: PathBuf,
}

pub struct Server {
    pub config: McpServerConfig,
    snapshot: watch::Sender<Snapshot>,
    peer: Mutex<Option<Peer<RoleClient>>>,
    stop: CancellationToken,
    reconnect: Notify,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.config.name)
            .finish_non_exhaustive()
    }
}

/// Tells the supervisor that the server's tools changed.
struct Handler {
    changed: Arc<Notify>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("hermesd", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A live connection: its peer, how to end it, and its end.
struct Connection {
    peer: Peer<RoleClient>,
    cancel: rmcp::service::RunningServiceCancellationToken,
    ended: tokio::task::JoinHandle<String>,
    /// The stdio child's process group, killed with the connection.
    group: Option<i32>,
    resources: bool,
    prompts: bool,
}

impl Connection {
    fn end(self) {
        self.cancel.cancel();
        self.ended.abort();
        kill_group(self.group);
    }
}

fn kill_group(group: Option<i32>) {
    if let Some(pid) = group.filter(|p| *p > 1) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

impl Server {
    pub fn new(config: McpServerConfig) -> Arc<Self> {
        let state = if config.enabled {
            State::Connecting
        } else {
            State::Disabled
        };
        let (snapshot, _) = watch::channel(Snapshot {
            state,
            tools: Arc::new(Vec::new()),
            resources: false,
            prompts: false,
            error: None,
            settled: !config.enabled,
        });
        Arc::new(Self {
            config,
            snapshot,
            peer: Mutex::new(None),
            stop: CancellationToken::new(),
            reconnect: Notify::new(),
        })
    }

    pub fn snapshot(&self) -> Snapshot {
        self.snapshot.borrow().clone()
    }

    pub fn watch(&self) -> watch::Receiver<Snapshot> {
        self.snapshot.subscribe()
    }

    /// The peer of the live connection, if there is one.
    pub fn peer(&self) -> Option<Peer<RoleClient>> {
        self.peer.lock().ok().and_then(|p| p.clone())
    }

    /// Connect again now (`/reload-mcp`).
    pub fn reconnect(&self) {
        self.reconnect.notify_one();
    }

    /// End the supervisor and the connection.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    fn set(&self, change: impl FnOnce(&mut Snapshot)) {
        self.snapshot.send_modify(change);
    }

    /// Keep the server connected until [`Server::stop`].
    pub async fn supervise(self: Arc<Self>, ctx: Arc<Context>) {
        if !self.config.enabled {
            return;
        }
        let mut backoff = Duration::from_secs(1);
        loop {
            self.set(|s| s.state = State::Connecting);
            let changed = Arc::new(Notify::new());
            let attempt = tokio::time::timeout(
                self.config.connect_timeout,
                connect(&self.config, &ctx, changed.clone()),
            );
            let outcome = tokio::select! {
                outcome = attempt => outcome,
                () = self.stop.cancelled() => return,
            };
            let error = match outcome {
                Err(_) => format!(
                    "no answer within the connect timeout ({:.0} s)",
                    self.config.connect_timeout.as_secs_f64()
                ),
                Ok(Err(e)) => e,
                Ok(Ok(connection)) => {
                    backoff = Duration::from_secs(1);
                    let reason = self.serve(connection, &changed).await;
                    match reason {
                        None => return,
                        Some(reason) => reason,
                    }
                }
            };
            tracing::warn!(server = %self.config.name, "MCP server: {error}");
            self.set(|s| {
                s.state = State::Failed;
                s.settled = true;
                s.error = Some(error);
                s.tools = Arc::new(Vec::new());
            });
            tokio::select! {
                () = tokio::time::sleep(backoff) => {}
                () = self.reconnect.notified() => {}
                () = self.stop.cancelled() => return,
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Watch a live connection; `None` when stopped, else why it ended.
    async fn serve(&self, mut connection: Connection, changed: &Notify) -> Option<String> {
        let tools = match list_tools(&connection.peer, &self.config).await {
            Ok(tools) => tools,
            Err(e) => {
                connection.end();
                return Some(e);
            }
        };
        if let Ok(mut peer) = self.peer.lock() {
            *peer = Some(connection.peer.clone());
        }
        tracing::info!(server = %self.config.name, tools = tools.len(), "MCP server connected");
        let (resources, prompts) = (connection.resources, connection.prompts);
        self.set(|s| {
            s.state = State::Connected;
            s.settled = true;
            s.error = None;
            s.tools = Arc::new(tools);
            s.resources = resources && self.config.resources;
            s.prompts = prompts && self.config.prompts;
        });
        let reason = loop {
            tokio::select! {
                ended = &mut connection.ended => {
                    break Some(ended.unwrap_or_else(|e| format!("the connection task failed: {e}")));
                }
                () = changed.notified() => match list_tools(&connection.peer, &self.config).await {
                    Ok(tools) => {
                        tracing::info!(server = %self.config.name, tools = tools.len(), "MCP tools changed");
                        self.set(|s| s.tools = Arc::new(tools));
                    }
                    Err(e) => tracing::warn!(server = %self.config.name, "MCP tools could not be listed again: {e}"),
                },
                () = self.reconnect.notified() => break Some("reconnecting as asked".to_string()),
                () = self.stop.cancelled() => break None,
            }
        };
        if let Ok(mut peer) = self.peer.lock() {
            *peer = None;
        }
        connection.end();
        reason
    }
}

/// List every tool of the server that its config offers.
async fn list_tools(
    peer: &Peer<RoleClient>,
    config: &McpServerConfig,
) -> Result<Vec<RemoteTool>, String> {
    let listed = tokio::time::timeout(config.connect_timeout, peer.list_all_tools())
        .await
        .map_err(|_| "tools/list got no answer within the connect timeout".to_string())?
        .map_err(|e| format!("tools/list failed: {e}"))?;
    Ok(listed
        .iter()
        .filter_map(|tool| serde_json::to_value(tool).ok())
        .filter_map(|tool| {
            let name = tool.get("name")?.as_str()?.to_string();
            config.offers(&name).then(|| RemoteTool {
                description: tool
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                input_schema: tool.get("inputSchema").cloned().unwrap_or(Value::Null),
                name,
            })
        })
        .collect())
}

/// One connection attempt: the transport, the handshake, the server's capabilities.
async fn connect(
    config: &McpServerConfig,
    ctx: &Context,
    changed: Arc<Notify>,
) -> Result<Connection, String> {
    let handler = Handler { changed };
    let (running, group) = match &config.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let workdir = cwd
                .as_deref()
                .map_or_else(|| ctx.home.clone(), PathBuf::from);
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args)
                .env_clear()
                .envs(safe_env())
                .envs(env)
                .current_dir(&workdir)
                .process_group(0)
                .kill_on_drop(true);
            crate::confine::confine(&mut cmd, &workdir)
                .map_err(|e| format!("cannot confine `{command}`: {e}"))?;
            let (child, stderr) = TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start `{command}`: {e}"))?;
            if let Some(stderr) = stderr {
                tokio::spawn(copy_stderr(stderr, ctx.logs.clone(), config.name.clone()));
            }
            let group = child.id().and_then(|id| i32::try_from(id).ok());
            let running = handler.serve(child).await.map_err(|e| {
                kill_group(group);
                format!("the handshake failed: {e}")
            })?;
            (running, group)
        }
        McpTransport::Http { url, headers } => {
            let http = ctx
                .http
                .get_or_try_init(|| async {
                    tokio::task::spawn_blocking(|| {
                        crate::llm::HttpClient::new(HTTP_CONNECT_TIMEOUT)
                    })
                    .await
                    .map_err(|e| format!("cannot build the HTTP client: {e}"))?
                })
                .await?;
            let client = McpHttp::new(
                http.clone(),
                headers
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            );
            let transport = StreamableHttpClientTransport::with_client(
                client,
                StreamableHttpClientTransportConfig::with_uri(url.as_str()),
            );
            let running = handler
                .serve(transport)
                .await
                .map_err(|e| format!("the handshake with {url} failed: {e}"))?;
            (running, None)
        }
    };
    let capabilities = running
        .peer_info()
        .and_then(|info| serde_json::to_value(&info.capabilities).ok())
        .unwrap_or(Value::Null);
    let has = |key: &str| capabilities.get(key).is_some_and(|v| !v.is_null());
    let peer = running.peer().clone();
    let cancel = running.cancellation_token();
    let ended = tokio::spawn(async move {
        match running.waiting().await {
            Ok(reason) => format!("the connection ended ({reason:?})"),
            Err(e) => format!("the connection task failed: {e}"),
        }
    });
    Ok(Connection {
        peer,
        cancel,
        ended,
        group,
        resources: has("resources"),
        prompts: has("prompts"),
    })
}

/// The daemon's variables a stdio server may see (plus every `XDG_*`).
fn safe_env() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| SAFE_ENV.contains(&k.as_str()) || k.starts_with("XDG_"))
        .collect()
}

/// Copy a server's stderr into `logs/mcp-stderr.log` after a header line: at most
/// [`STDERR_PER_START`] bytes per start (the rest is read and dropped, so the server never blocks
/// on a full pipe), the file started again past [`STDERR_LOG_LIMIT`].
async fn copy_stderr(mut stderr: tokio::process::ChildStderr, logs: PathBuf, name: String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let path = logs.join("mcp-stderr.log");
    let opened = async {
        tokio::fs::create_dir_all(&logs).await?;
        if tokio::fs::metadata(&path)
            .await
            .is_ok_and(|m| m.len() > STDERR_LOG_LIMIT)
        {
            tokio::fs::remove_file(&path).await?;
        }
        let mut file = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .await?;
        let header = format!(
            "===== [{}] starting MCP server '{name}' =====\n",
            chrono::Utc::now().to_rfc3339()
        );
        file.write_all(header.as_bytes()).await?;
        Ok::<_, std::io::Error>(file)
    };
    let mut file = match opened.await {
        Ok(file) => Some(file),
        Err(e) => {
            tracing::warn!(path = %path.display(), "cannot write the MCP stderr log: {e}");
            None
        }
    };
    let mut written = 0u64;
    let mut buf = vec![0u8; 8192];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let room = STDERR_PER_START.saturating_sub(written) as usize;
        if let Some(f) = file.as_mut().filter(|_| room > 0) {
            let take = n.min(room);
            if f.write_all(&buf[..take]).await.is_err() {
                file = None;
            }
            written += take as u64;
        }
    }
}

/// Connect once, list the tools, disconnect: `hermesctl mcp test`.
pub async fn probe(
    config: &McpServerConfig,
    ctx: &Context,
) -> Result<(Duration, Vec<RemoteTool>), String> {
    let started = Instant::now();
    let attempt = async {
        let connection = connect(config, ctx, Arc::new(Notify::new())).await?;
        let tools = list_tools(&connection.peer, config).await;
        connection.end();
        tools
    };
    let tools = tokio::time::timeout(config.connect_timeout, attempt)
        .await
        .map_err(|_| {
            format!(
                "no answer within the connect timeout ({:.0} s)",
                config.connect_timeout.as_secs_f64()
            )
        })??;
    Ok((started.elapsed(), tools))
}
