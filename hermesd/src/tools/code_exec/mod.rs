//! `execute_code` (toolset `code_execution`): a Python script that calls the session's tools
//! itself, so many calls cost one model step. The script runs in its own process group with
//! the environment the terminal gets (every secret stripped), in the session's directory; a
//! generated `hermes_tools` module reaches the daemon over a private socket (`rpc`). Limits:
//! `code_execution.timeout`, `code_execution.max_tool_calls`, 50 KB of printed output. Only
//! what the script prints goes back to the model.

mod rpc;
mod stubs;

use std::{
    path::{Path, PathBuf},
    sync::{Arc, OnceLock, atomic::AtomicU32},
    time::Instant,
};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{
    ApprovalDecision, ApprovalRequest, Tool, ToolContext, ToolError, ToolServices,
    outcome::preview, required_str,
};
use crate::exec::{self, ProgramEnd, ProgramRequest};

/// Bytes of printed output kept (Hermes' cap), and characters of error output.
const MAX_STDOUT_BYTES: usize = 50_000;
const MAX_STDERR_CHARS: usize = 10_000;
/// Characters of the script the approval prompt shows.
const SHOWN_CHARS: usize = 2_000;

pub struct ExecuteCodeTool;

/// The Python interpreter on the daemon's PATH (`python3`, else `python`), found once.
fn python() -> Option<&'static Path> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let path = std::env::var_os("PATH")?;
            ["python3", "python"].iter().find_map(|name| {
                std::env::split_paths(&path)
                    .map(|dir| dir.join(name))
                    .find(|candidate| is_executable(candidate))
            })
        })
        .as_deref()
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn description() -> String {
    format!(
        "Run a Python script that calls tools itself (3+ calls with logic between, loops, \
         filtering big outputs). `from hermes_tools import` {} (Hermes' arguments; each \
         returns a dict), json_parse, shell_quote, retry. Runs in the session's directory; \
         5 min, 50 calls, 50 KB; terminal() foreground only. Only what you print comes back.",
        stubs::signatures()
    )
}

#[async_trait]
impl Tool for ExecuteCodeTool {
    fn name(&self) -> &'static str {
        "execute_code"
    }
    fn toolset(&self) -> &'static str {
        "code_execution"
    }
    fn schema(&self) -> Value {
        json!({
            "name": "execute_code",
            "description": description(),
            "parameters": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "The Python script; print what you need."}
                },
                "required": ["code"]
            }
        })
    }
    fn available(&self, _services: &ToolServices) -> bool {
        python().is_some()
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let code = required_str(&args, "code")?;
        if code.trim().is_empty() {
            return Err(ToolError::Arguments("`code` is empty".into()));
        }
        let python = python().ok_or_else(|| {
            ToolError::Failed("no Python interpreter (python3) on the daemon's PATH".into())
        })?;
        // The script can reach files and processes directly, past the guard its tool calls
        // meet: the script as a whole needs the user's word first, as in Hermes.
        let request = ApprovalRequest {
            command: preview(code, SHOWN_CHARS).into_owned(),
            pattern_key: "execute_code".into(),
            reason: "execute_code runs a Python script that can read, write and run anything \
                     directly, without the per-command checks"
                .into(),
        };
        if let ApprovalDecision::Denied(why) = ctx.turn.approve(request).await {
            return Ok(json!({"status": "blocked", "error": why, "tool_calls_made": 0}));
        }
        run(python, code, ctx).await
    }
}

async fn run(python: &Path, code: &str, ctx: &ToolContext) -> Result<Value, ToolError> {
    let started = Instant::now();
    let staging = stage(code, ctx).await?;
    let socket = staging.dir.path().join("rpc.sock");
    let listener = tokio::net::UnixListener::bind(&socket)
        .map_err(|e| ToolError::Failed(format!("cannot listen on {}: {e}", socket.display())))?;
    let limits = ctx.settings.code_execution;
    let channel = Arc::new(rpc::Channel {
        token: staging.token.clone(),
        allowed: staging.tools.clone(),
        max_calls: limits.max_tool_calls,
        calls: AtomicU32::new(0),
        toolbox: ctx.toolbox.clone(),
        ctx: ctx.clone(),
    });
    let server = tokio::spawn(rpc::serve(listener, Arc::clone(&channel)));
    let login = ctx.services.login_env().await;
    let mut env = exec::child_env(&login, &[]);
    let dir = staging.dir.path().as_os_str().to_owned();
    for (key, value) in [
        ("HERMES_RPC_SOCKET", socket.as_os_str().to_owned()),
        ("HERMES_RPC_TOKEN", staging.token.clone().into()),
        ("PYTHONPATH", dir),
        ("PYTHONDONTWRITEBYTECODE", "1".into()),
        ("PYTHONIOENCODING", "utf-8".into()),
        ("PYTHONUTF8", "1".into()),
    ] {
        env.retain(|(k, _)| k != key);
        env.push((key.into(), value));
    }
    let request = ProgramRequest {
        program: python.to_path_buf(),
        args: vec![staging.dir.path().join("script.py").into()],
        cwd: ctx.cwd.clone(),
        env,
        timeout: limits.timeout,
        max_output_bytes: MAX_STDOUT_BYTES,
    };
    let ran = exec::run_program(request, ctx.cancel.child_token()).await;
    server.abort();
    // Removing the directory is file-system work: off the runtime.
    drop(tokio::task::spawn_blocking(move || drop(staging)));
    let calls = channel.calls.load(std::sync::atomic::Ordering::SeqCst);
    let seconds = (started.elapsed().as_secs_f64() * 100.0).round() / 100.0;
    let stderr = preview(&ran.stderr, MAX_STDERR_CHARS).into_owned();
    let mut output = ran.stdout;
    if ran.truncated && output.len() >= MAX_STDOUT_BYTES {
        output.push_str("\n\n[output truncated at 50 KB: print less]");
    }
    let mut result = json!({
        "status": "success",
        "output": output,
        "tool_calls_made": calls,
        "duration_seconds": seconds,
    });
    match ran.end {
        ProgramEnd::Exited(0) => result["exit_code"] = json!(0),
        ProgramEnd::Exited(code) => {
            result["status"] = json!("error");
            result["exit_code"] = json!(code);
            result["error"] = json!(if stderr.is_empty() {
                format!("the script exited with code {code}")
            } else {
                stderr
            });
        }
        ProgramEnd::TimedOut => {
            result["status"] = json!("timeout");
            result["error"] = json!(format!(
                "the script ran past {} s and was killed",
                limits.timeout.as_secs()
            ));
        }
        ProgramEnd::Interrupted => {
            result["status"] = json!("interrupted");
            result["error"] = json!("interrupted by the user");
        }
        ProgramEnd::SpawnFailed(why) => return Err(ToolError::Failed(why)),
    }
    Ok(result)
}

/// A run's private directory (0700, removed when dropped) with the script and its module.
struct Staging {
    dir: tempfile::TempDir,
    token: String,
    /// The tools the script may call.
    tools: Vec<String>,
}

async fn stage(code: &str, ctx: &ToolContext) -> Result<Staging, ToolError> {
    let tools: Vec<String> = stubs::SCRIPT_TOOLS
        .iter()
        .filter(|t| ctx.toolbox.has(t))
        .map(|t| t.to_string())
        .collect();
    let names: Vec<&str> = tools.iter().map(String::as_str).collect();
    let module = stubs::module(&names);
    let code = code.to_string();
    let token = token().map_err(ToolError::Failed)?;
    let dir = tokio::task::spawn_blocking(move || -> std::io::Result<tempfile::TempDir> {
        // tempfile makes the directory 0700: only this user reaches the socket inside.
        let dir = tempfile::Builder::new().prefix("hermes-code-").tempdir()?;
        std::fs::write(dir.path().join("hermes_tools.py"), module)?;
        std::fs::write(dir.path().join("script.py"), code)?;
        Ok(dir)
    })
    .await
    .map_err(|e| ToolError::Failed(format!("cannot stage the script: {e}")))?
    .map_err(|e| ToolError::Failed(format!("cannot stage the script: {e}")))?;
    Ok(Staging { dir, token, tools })
}

/// 32 random bytes, hex; unlike `ids::random_hex` a missing random source is an error, never a
/// guessable token.
fn token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random source: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
