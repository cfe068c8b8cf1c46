//! `hermesctl status` and `hermesctl daemon start|stop|restart|status`.

use std::time::Duration;

use hermes_proto::pb;
use serde_json::json;

use crate::{
    cli::DaemonCommand, connection, context::Context, daemon_process, error::CliError, output,
};

/// Exit code of `daemon status` when no daemon runs (as `systemctl status`).
const EXIT_NOT_RUNNING: u8 = 3;
/// Extra time on top of the daemon's drain deadline before `stop` gives up waiting.
const STOP_GRACE: Duration = Duration::from_secs(30);

pub async fn status(ctx: &Context) -> Result<(), CliError> {
    let daemon = connection::connect(ctx).await?;
    print_status(ctx, &daemon.status);
    Ok(())
}

fn print_status(ctx: &Context, s: &pb::GetStatusResponse) {
    if ctx.json {
        output::json(&json!({
            "running": true,
            "version": s.version,
            "protocol_version": s.protocol_version,
            "pid": s.pid,
            "uptime_s": s.uptime_s,
            "home": s.home,
            "profile": s.profile,
            "socket": s.socket,
            "live_sessions": s.live_sessions,
            "model": s.model,
            "db_bytes": s.db_bytes,
            "started_at": output::timestamp(s.started_at.as_ref()),
            "mcp_servers": s.mcp_servers.iter().map(|m| json!({
                "name": m.name, "state": m.state, "tools": m.tools.len(),
                "error": if m.error.is_empty() { serde_json::Value::Null } else { json!(m.error) },
            })).collect::<Vec<_>>(),
            "confinement": s.confinement.as_ref().map(|c| json!({
                "mode": c.mode, "landlock_abi": c.landlock_abi, "marked": c.marked,
                "detail": c.detail,
            })),
            "caller": s.caller,
        }));
        return;
    }
    let profile = if s.profile.is_empty() {
        String::new()
    } else {
        format!(" (profile {})", s.profile)
    };
    let model = if s.model.is_empty() {
        "none configured (`hermesctl model set PROVIDER:MODEL --key-env VAR`; a local Ollama, llama.cpp or LM Studio server is used when found)".to_string()
    } else {
        s.model.clone()
    };
    output::line(format!(
        "hermesd {} (protocol {}), pid {}, up {}",
        s.version,
        s.protocol_version,
        s.pid,
        uptime(s.uptime_s)
    ));
    output::line(format!("home      {}{profile}", s.home));
    output::line(format!("socket    {}", s.socket));
    output::line(format!("model     {model}"));
    output::line(format!("sessions  {} live", s.live_sessions));
    output::line(format!("database  {}", output::size(s.db_bytes)));
    if let Some(c) = &s.confinement {
        output::line(format!("confined  {}: {}", c.mode, c.detail));
    }
    for server in &s.mcp_servers {
        output::line(format!(
            "mcp       {}",
            hermes_proto::mcp::line(server).trim_start_matches("MCP ")
        ));
    }
}

fn uptime(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{}s", s / 60, s % 60),
        s if s < 86_400 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        s => format!("{}d{}h", s / 86_400, (s % 86_400) / 3600),
    }
}

pub async fn run(ctx: &Context, command: DaemonCommand) -> Result<(), CliError> {
    match command {
        DaemonCommand::Start => start(ctx).await,
        DaemonCommand::Stop => {
            let stopped = stop(ctx).await?;
            if ctx.json {
                output::json(&json!({"stopped": stopped.is_some(), "pid": stopped}));
            } else if let Some(pid) = stopped {
                output::line(format!("hermesd (pid {pid}) stopped"));
            } else {
                output::line("hermesd is not running");
            }
            Ok(())
        }
        DaemonCommand::Restart => {
            stop(ctx).await?;
            start(ctx).await
        }
        DaemonCommand::Status => match connection::probe(ctx).await? {
            Some(daemon) => {
                print_status(ctx, &daemon.status);
                if let Some(message) = hermes_proto::client::protocol_mismatch(&daemon.status) {
                    return Err(CliError::new(message));
                }
                Ok(())
            }
            None => {
                if ctx.json {
                    output::json(
                        &json!({"running": false, "socket": ctx.socket.display().to_string()}),
                    );
                } else {
                    output::line(format!(
                        "hermesd is not running (socket {})",
                        ctx.socket.display()
                    ));
                }
                Err(CliError::new("").with_code(EXIT_NOT_RUNNING))
            }
        },
    }
}

async fn start(ctx: &Context) -> Result<(), CliError> {
    let already = connection::probe(ctx).await?;
    let started = already.is_none();
    let daemon = match already {
        Some(daemon) => daemon,
        None => connection::connect(ctx).await?,
    };
    let s = &daemon.status;
    if ctx.json {
        output::json(
            &json!({"started": started, "pid": s.pid, "socket": s.socket, "version": s.version}),
        );
    } else if started {
        output::line(format!("hermesd started (pid {}) on {}", s.pid, s.socket));
    } else {
        output::line(format!(
            "hermesd is already running (pid {}) on {}",
            s.pid, s.socket
        ));
    }
    Ok(())
}

/// Stop the daemon if it runs and wait for its process to exit; returns the pid it had.
async fn stop(ctx: &Context) -> Result<Option<u32>, CliError> {
    let Some(daemon) = connection::probe(ctx).await? else {
        return Ok(None);
    };
    let pid = daemon
        .daemon()
        .shutdown(pb::ShutdownRequest { drain_timeout_s: 0 })
        .await?
        .into_inner()
        .pid;
    daemon_process::wait_for_exit(ctx, STOP_GRACE).await?;
    Ok(Some(pid))
}
