//! The private channel between one `execute_code` script and the daemon: a Unix socket in the
//! run's own 0700 directory, accepted only with the run's token. Each request line names a tool
//! and its arguments; it runs through the session's toolbox exactly as the model's own call
//! would (the same guard, approvals and masking), counted against the run's limit, and its
//! result goes back as one JSON line.

use std::sync::{
    Arc,
    atomic::{AtomicU32, Ordering},
};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use crate::llm::ToolCall;
use crate::tools::{ToolContext, Toolbox};

/// Largest request line (a `write_file` of a large file fits).
const MAX_REQUEST_BYTES: u64 = 16 * 1024 * 1024;
/// Connections one script may hold open at once.
const MAX_CONNECTIONS: usize = 8;
/// Arguments of `terminal` a script may not use: it runs in the foreground only.
const TERMINAL_REFUSED: [&str; 4] = ["background", "pty", "notify_on_complete", "watch_patterns"];

/// What the channel of one run shares between its connections.
pub struct Channel {
    pub token: String,
    /// The tools the script may call (the session's, within the script tools).
    pub allowed: Vec<String>,
    pub max_calls: u32,
    pub calls: AtomicU32,
    pub toolbox: Toolbox,
    pub ctx: ToolContext,
}

/// Serve `listener` until the task is dropped (the script's run is over).
pub async fn serve(listener: UnixListener, channel: Arc<Channel>) {
    let permits = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            // Over the bound: the connection is closed unanswered.
            continue;
        };
        let channel = Arc::clone(&channel);
        connections.spawn(async move {
            connection(stream, &channel).await;
            drop(permit);
        });
        // Finished connections are collected as new ones come.
        while connections.try_join_next().is_some() {}
    }
}

async fn connection(stream: UnixStream, channel: &Channel) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_REQUEST_BYTES + 1)
            .read_until(b'\n', &mut line)
            .await;
        match read {
            Ok(0) | Err(_) => return,
            Ok(n) if n as u64 > MAX_REQUEST_BYTES => {
                let _ = write
                    .write_all(answer(&refusal("the request is larger than 16 MiB")).as_bytes())
                    .await;
                return;
            }
            Ok(_) => {}
        }
        let content = handle(&line, channel).await;
        if write.write_all(answer(&content).as_bytes()).await.is_err() {
            return;
        }
    }
}

/// One line of JSON: the result text as a JSON string (the module parses it again).
fn answer(content: &str) -> String {
    let mut line = Value::String(content.to_string()).to_string();
    line.push('\n');
    line
}

fn refusal(why: &str) -> String {
    json!({ "error": why }).to_string()
}

async fn handle(line: &[u8], channel: &Channel) -> String {
    let request: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => return refusal(&format!("the request is not JSON: {e}")),
    };
    let token = request.get("token").and_then(Value::as_str).unwrap_or("");
    if !constant_time_eq(token.as_bytes(), channel.token.as_bytes()) {
        return refusal("unauthorized request");
    }
    let tool = request.get("tool").and_then(Value::as_str).unwrap_or("");
    if !channel.allowed.iter().any(|t| t == tool) {
        return refusal(&format!(
            "`{tool}` cannot be called from execute_code; available: {}",
            channel.allowed.join(", ")
        ));
    }
    let mut args = request.get("args").cloned().unwrap_or_else(|| json!({}));
    if tool == "terminal"
        && let Some(map) = args.as_object_mut()
    {
        for key in TERMINAL_REFUSED {
            map.remove(key);
        }
    }
    let made = channel.calls.fetch_add(1, Ordering::SeqCst);
    if made >= channel.max_calls {
        channel.calls.fetch_sub(1, Ordering::SeqCst);
        return refusal(&format!(
            "the tool call limit of this script ({}) is reached: no more calls",
            channel.max_calls
        ));
    }
    let call = ToolCall {
        id: format!("{}-{}", channel.ctx.call_id, made + 1),
        name: tool.to_string(),
        arguments: args.to_string(),
    };
    let mut ctx = channel.ctx.clone();
    ctx.call_id = call.id.clone();
    channel.toolbox.dispatch(&call, &ctx).await.content
}

/// Compare without an early exit, so the time taken says nothing about the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
