//! `hermesctl send MESSAGE`: one turn, the answer on stdout. On a terminal it attaches to the
//! session as an interactive client, so dangerous commands and questions are asked inline;
//! otherwise it runs the turn with the unary `Send` (approvals are denied unless `--yolo`).

use std::{
    io::{IsTerminal, Read},
    path::PathBuf,
};

use hermes_proto::pb;
use serde_json::json;

use super::send_attached::{self, Stream};
use crate::{connection, context::Context, error::CliError, output};

/// What was asked.
pub struct SendArgs {
    pub text: String,
    pub session: Option<String>,
    pub cwd: PathBuf,
    pub yolo: bool,
    /// Absolute paths of attached images.
    pub images: Vec<String>,
}

/// The options of `hermesctl send`.
pub struct SendFlags {
    pub session: Option<String>,
    pub cwd: Option<PathBuf>,
    pub yolo: bool,
    pub stream: bool,
    pub images: Vec<PathBuf>,
}

pub async fn run(ctx: &Context, words: Vec<String>, flags: SendFlags) -> Result<(), CliError> {
    let SendFlags {
        session,
        cwd,
        yolo,
        stream,
        images,
    } = flags;
    let from_stdin = words.len() == 1 && words[0] == "-";
    let text = if from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::new(format!("cannot read the message from stdin: {e}")))?;
        text
    } else {
        words.join(" ")
    };
    let cwd = match cwd {
        Some(dir) => std::path::absolute(&dir)
            .map_err(|e| CliError::new(format!("--cwd {}: {e}", dir.display())))?,
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    };
    if !cwd.is_dir() {
        return Err(CliError::new(format!(
            "--cwd {}: not a directory",
            cwd.display()
        )));
    }
    let images = absolute_images(&images)?;
    let args = SendArgs {
        text,
        session,
        cwd,
        yolo,
        images,
    };
    let daemon = connection::connect(ctx).await?;
    let interactive = !from_stdin && std::io::stdin().is_terminal();
    let stream = match (stream, ctx.json) {
        (false, _) => Stream::Off,
        (true, false) => Stream::Text,
        (true, true) => Stream::Json,
    };
    let reply = if interactive || stream != Stream::Off {
        send_attached::run(&daemon, args, interactive, stream).await?
    } else {
        daemon
            .sessions()
            .send(pb::SendRequest {
                session_id: args.session.unwrap_or_default(),
                text: args.text,
                cwd: args.cwd.display().to_string(),
                busy_policy: pb::BusyPolicy::Unspecified as i32,
                source: "cli".into(),
                yolo: args.yolo,
                client_name: "hermesctl send".into(),
                images: args.images,
            })
            .await?
            .into_inner()
    };
    if stream != Stream::Off {
        // Already printed as it arrived.
    } else if ctx.json {
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
                "cost_status": crate::commands::events_json::cost_status(usage.cost_status),
            },
        }));
    } else {
        output::line(reply.answer.trim_end());
    }
    Ok(())
}

/// The `--image` paths made absolute (the daemon reads them); a missing file is named here.
pub fn absolute_images(images: &[PathBuf]) -> Result<Vec<String>, CliError> {
    images
        .iter()
        .map(|path| {
            let absolute = std::path::absolute(path)
                .map_err(|e| CliError::new(format!("--image {}: {e}", path.display())))?;
            if !absolute.is_file() {
                return Err(CliError::new(format!(
                    "--image {}: no such file",
                    path.display()
                )));
            }
            Ok(absolute.display().to_string())
        })
        .collect()
}
