//! The `terminal` toolset: `terminal` runs `bash -c` in the session's directory with the login
//! environment minus every secret, after the approval guard; `background: true` hands the
//! command to the process registry, which the `process` tool lists, polls, reads, waits on and
//! kills.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use std::path::Path;

use super::{ApprovalDecision, ApprovalRequest, Concurrency, Tool, ToolContext, ToolError};
use crate::exec;
use crate::policy::command::{Clearance, Verdict};

/// Why a background process will not report in this session (Hermes' words).
const NOTIFY_UNSUPPORTED: &str = "notify_on_complete / watch_patterns are not available in this \
    session — it cannot receive an async completion after the turn ends (a cron job, a webhook, \
    an API request, a subagent). The process is running in the background; retrieve its result \
    with process(action='poll') or process(action='wait').";

pub struct TerminalTool;

/// The result the model gets for a command it may not run.
fn blocked(message: String) -> Value {
    json!({"output": "", "exit_code": -1, "error": message, "status": "blocked"})
}

#[async_trait]
impl Tool for TerminalTool {
    fn name(&self) -> &'static str {
        "terminal"
    }
    fn toolset(&self) -> &'static str {
        "terminal"
    }
    fn schema(&self) -> Value {
        exec::terminal_schema()
    }
    fn concurrency(&self, _args: &Value) -> Concurrency {
        Concurrency::Sequential
    }
    fn available(&self, _services: &super::ToolServices) -> bool {
        std::path::Path::new("/bin/bash").exists() || std::path::Path::new("/usr/bin/bash").exists()
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let args = match exec::TerminalArgs::parse(&args) {
            Ok(args) => args,
            Err(refusal) => return Ok(refusal),
        };
        let cwd = match args.workdir.as_deref().filter(|w| !w.trim().is_empty()) {
            Some(dir) => ctx.resolve_path(dir),
            None => ctx.cwd.clone(),
        };
        if let Err(refusal) = ctx.services.paths.check_workdir(&cwd) {
            return Ok(blocked(refusal));
        }
        let cleared = match clear_command(ctx, &args.command, &cwd).await? {
            Ok(cleared) => cleared,
            Err(refusal) => return Ok(blocked(refusal)),
        };
        let login = ctx.services.login_env().await;
        let env = exec::child_env(&login, &[]);
        if args.background {
            // A promise the session cannot keep is refused, as Hermes does.
            let unsupported = (args.notify_on_complete || args.watch_patterns.is_some())
                && !ctx.settings.receives_later_messages();
            let mut args = args;
            if unsupported {
                args.notify_on_complete = false;
                args.watch_patterns = None;
            }
            let spawned = ctx
                .scope
                .processes
                .spawn(&cleared, &cwd, env, args.notify())
                .await
                .map_err(|e| ToolError::Failed(format!("cannot start `{}`: {e}", args.command)))?;
            let mut started = exec::background_started(&spawned.session_id, spawned.pid, &args);
            if unsupported {
                started["notify_on_complete"] = json!(false);
                started["notify_unsupported"] = json!(NOTIFY_UNSUPPORTED);
            }
            return Ok(started);
        }
        let mut request = exec::RunRequest::new(&cleared, cwd, env);
        request.timeout = Duration::from_secs(
            args.effective_timeout_secs(ctx.settings.terminal_timeout.as_secs()),
        );
        let turn = &ctx.turn;
        let call_id = ctx.call_id.clone();
        let result = exec::run_foreground(request, ctx.cancel.child_token(), |chunk| {
            turn.tool_output(&call_id, chunk)
        })
        .await;
        serde_json::to_value(&result)
            .map_err(|e| ToolError::Failed(format!("cannot encode the result: {e}")))
    }
}

pub struct ProcessTool;

#[async_trait]
impl Tool for ProcessTool {
    fn name(&self) -> &'static str {
        "process"
    }
    fn toolset(&self) -> &'static str {
        "terminal"
    }
    fn schema(&self) -> Value {
        exec::process_schema()
    }
    fn is_polling(&self, args: &Value) -> bool {
        args.get("action")
            .and_then(Value::as_str)
            .is_some_and(exec::is_polling_action)
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        Ok(ctx
            .scope
            .processes
            .handle_tool_call(&args, &ctx.cancel, &AskingGate(ctx))
            .await)
    }
}

/// Judge `command` (to run in `cwd`) with the command policy, asking the user for each thing
/// it says needs consent; `Ok(Err)` is the refusal the model is told.
async fn clear_command(
    ctx: &ToolContext,
    command: &str,
    cwd: &Path,
) -> Result<Result<Clearance, String>, ToolError> {
    let policy = ctx.services.commands();
    let (command, dir) = (command.to_string(), cwd.to_path_buf());
    let verdict = tokio::task::spawn_blocking(move || policy.judge(&command, &dir))
        .await
        .map_err(|e| ToolError::Failed(format!("the command check failed: {e}")))?;
    Ok(settle(ctx, verdict).await)
}

/// A verdict made final: what it refuses stays refused, what it asks is asked.
async fn settle(ctx: &ToolContext, verdict: Verdict) -> Result<Clearance, String> {
    let pending = match verdict {
        Verdict::Run(cleared) => return Ok(cleared),
        Verdict::Refuse(refusal) => return Err(refusal),
        Verdict::Ask(pending) => pending,
    };
    for ask in &pending.asks {
        let request = ApprovalRequest {
            command: ask.command.clone(),
            pattern_key: ask.key.clone(),
            reason: ask.reason.clone(),
        };
        if let ApprovalDecision::Denied(message) = ctx.turn.approve(request).await {
            return Err(message);
        }
    }
    Ok(pending.approved())
}

/// Writes to a background process's stdin, judged like commands and asked like them.
struct AskingGate<'a>(&'a ToolContext);

#[async_trait]
impl exec::StdinGate for AskingGate<'_> {
    async fn clear(
        &self,
        command: &str,
        cwd: &Path,
        pending: &str,
        data: &str,
    ) -> Result<Clearance, String> {
        let policy = self.0.services.commands();
        let (command, cwd) = (command.to_string(), cwd.to_path_buf());
        let (pending, data) = (pending.to_string(), data.to_string());
        let verdict = tokio::task::spawn_blocking(move || {
            policy.judge_stdin(&command, &cwd, &pending, &data)
        })
        .await
        .map_err(|e| format!("the input check failed: {e}"))?;
        settle(self.0, verdict).await
    }
}
