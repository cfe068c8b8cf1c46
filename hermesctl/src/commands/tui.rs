//! `hermesctl tui [SESSION|--continue|--new]`: make sure the daemon runs (starting it as every
//! command does), then hand the terminal to `hermes-tui` — executed in place of this process, so
//! its signals, terminal and exit status are its own — with this command's home and socket.

use std::os::unix::process::CommandExt;

use crate::{connection, context::Context, daemon_process, error::CliError};

pub async fn run(
    ctx: &Context,
    session: Option<String>,
    resume: bool,
    new: bool,
) -> Result<(), CliError> {
    connection::connect(ctx).await?;
    let binary = daemon_process::sibling_binary("hermes-tui").ok_or_else(|| {
        CliError::new("no hermes-tui beside hermesctl or on PATH (it is built with the workspace)")
    })?;
    let mut command = std::process::Command::new(&binary);
    command
        .env("HERMES_HOME", &ctx.home.dir)
        .env_remove("HERMES_PROFILE")
        .arg("--socket")
        .arg(&ctx.socket);
    if resume {
        command.arg("--continue");
    }
    if new {
        command.arg("--new");
    }
    command.args(session);
    let error = command.exec();
    Err(CliError::new(format!(
        "cannot run {}: {error}",
        binary.display()
    )))
}
