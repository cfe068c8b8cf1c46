//! `hermesctl send MESSAGE`: one turn, the answer on stdout.

use std::{io::Read, path::PathBuf};

use hermes_proto::pb;
use serde_json::json;

use crate::{connection, context::Context, error::CliError, output};

pub async fn run(
    ctx: &Context,
    words: Vec<String>,
    session: Option<String>,
    cwd: Option<PathBuf>,
) -> Result<(), CliError> {
    let text = if words.len() == 1 && words[0] == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::new(format!("cannot read the message from stdin: {e}")))?;
        text
    } else {
        words.join(" ")
    };
    let cwd = match cwd {
        Some(dir) => dir,
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    };
    let daemon = connection::connect(ctx).await?;
    let reply = daemon
        .sessions()
        .send(pb::SendRequest {
            session_id: session.unwrap_or_default(),
            text,
            cwd: cwd.display().to_string(),
            busy_policy: pb::BusyPolicy::Unspecified as i32,
            source: "cli".into(),
        })
        .await?
        .into_inner();
    if ctx.json {
        let usage = reply.usage.unwrap_or_default();
        output::json(&json!({
            "session_id": reply.session_id,
            "answer": reply.answer,
            "iterations": reply.iterations,
            "tool_calls": reply.tool_calls,
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
                "reasoning_tokens": usage.reasoning_tokens,
                "cost_usd": usage.cost_usd,
            },
        }));
    } else {
        output::line(reply.answer.trim_end());
    }
    Ok(())
}
