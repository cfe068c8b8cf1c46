//! The `terminal` toolset: `terminal` runs `bash -c` in the session's directory with the login
//! environment minus every secret, after the approval guard; `background: true` hands the
//! command to the process registry, which the `process` tool lists, polls, reads, waits on and
//! kills.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{ApprovalDecision, ApprovalRequest, Concurrency, Tool, ToolContext, ToolError};
use crate::{exec, policy};

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
        if let Some(block) = policy::detect_hardline(&args.command)
            .or_else(|| policy::detect_sudo_stdin_guess(&args.command))
        {
            return Ok(blocked(format!(
                "BLOCKED (hardline): {}. This command is on the unconditional blocklist and cannot \
                 be run by the agent, not even with --yolo or approvals.mode=off. If you really \
                 need it, ask the user to run it in their own terminal.",
                block.description
            )));
        }
        let (command, dir) = (args.command.clone(), cwd.clone());
        let danger =
            tokio::task::spawn_blocking(move || policy::detect_dangerous_in(&command, &dir))
                .await
                .map_err(|e| ToolError::Failed(format!("the command check failed: {e}")))?;
        if let Some(danger) = danger {
            let request = ApprovalRequest {
                command: args.command.clone(),
                pattern_key: danger.key.to_string(),
                reason: danger.description.to_string(),
            };
            if let ApprovalDecision::Denied(message) = ctx.turn.approve(request).await {
                return Ok(blocked(message));
            }
        }
        let login = ctx.services.login_env().await;
        let env = exec::child_env(&login, &[]);
        if args.background {
            let spawned = ctx
                .scope
                .processes
                .spawn(&args.command, &cwd, env)
                .await
                .map_err(|e| ToolError::Failed(format!("cannot start `{}`: {e}", args.command)))?;
            return Ok(exec::background_started(
                &spawned.session_id,
                spawned.pid,
                &args,
            ));
        }
        let mut request = exec::RunRequest::new(args.command.clone(), cwd, env);
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
            .handle_tool_call(&args, &ctx.cancel)
            .await)
    }
}
