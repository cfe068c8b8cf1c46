//! `hermesctl import hermes [--home PATH]`: a Python Hermes history (and its cron jobs) brought
//! into hermesd.

use hermes_proto::pb;
use serde_json::json;

use crate::{cli::ImportCommand, connection, context::Context, error::CliError, output};

pub async fn run(ctx: &Context, command: ImportCommand) -> Result<(), CliError> {
    let ImportCommand::Hermes { home } = command;
    let hermes_home = match home {
        Some(path) => std::path::absolute(&path)
            .map_err(|e| CliError::new(format!("cannot resolve {}: {e}", path.display())))?
            .display()
            .to_string(),
        None => String::new(),
    };
    let daemon = connection::connect(ctx).await?;
    let done = daemon
        .sessions()
        .import(pb::ImportSessionsRequest {
            hermes_home,
            include_cron: true,
        })
        .await?
        .into_inner();
    if ctx.json {
        output::json(
            &json!({"sessions": done.sessions, "messages": done.messages,
            "skipped": done.skipped, "cron_jobs": done.cron_jobs}),
        );
    } else {
        output::line(format!(
            "imported {} sessions, {} messages and {} cron jobs ({} sessions skipped: already \
             here or not importable)",
            done.sessions, done.messages, done.cron_jobs, done.skipped
        ));
    }
    Ok(())
}
