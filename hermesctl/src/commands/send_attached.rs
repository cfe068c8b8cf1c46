//! `hermesctl send` attached to its session: on a terminal it shows tool progress on stderr and
//! answers approvals and questions from the keyboard (Ctrl-C interrupts the turn); with
//! `--stream` it prints the answer as it arrives (or every event as a JSON line); without a
//! terminal it denies approvals at once, as a script cannot answer them.

use std::io::Write;

use hermes_proto::pb::{self, client_frame, session_event::Kind};

use super::{events_json, send::SendArgs};
use crate::{connection::Daemon, error::CliError};

const CLIENT_NAME: &str = "hermesctl send";

fn frame(kind: client_frame::Kind) -> pb::ClientFrame {
    pb::ClientFrame { kind: Some(kind) }
}

/// Read one line from the terminal without blocking the runtime.
pub async fn ask_line(prompt: String) -> Result<String, CliError> {
    tokio::task::spawn_blocking(move || {
        let mut err = std::io::stderr();
        let _ = write!(err, "{prompt}");
        let _ = err.flush();
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map(|_| line.trim().to_string())
            .map_err(|e| CliError::new(format!("cannot read your answer: {e}")))
    })
    .await
    .map_err(|e| CliError::new(format!("cannot read your answer: {e}")))?
}

pub fn approval_choice(answer: &str) -> &'static str {
    match answer.to_lowercase().as_str() {
        "o" | "once" | "y" | "yes" => "once",
        "s" | "session" => "session",
        "a" | "always" => "always",
        _ => "deny",
    }
}

/// How the turn is shown while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Only the final answer (printed by the caller).
    Off,
    /// Text deltas on stdout as they arrive.
    Text,
    /// Every event of the turn as a JSON line on stdout.
    Json,
}

pub async fn run(
    daemon: &Daemon,
    args: SendArgs,
    interactive: bool,
    stream: Stream,
) -> Result<pb::SendResponse, CliError> {
    let mut sessions = daemon.sessions();
    let session = match &args.session {
        Some(id) => {
            sessions
                .get(pb::GetSessionRequest {
                    id: id.clone(),
                    include_messages: false,
                })
                .await?
                .into_inner()
                .session
        }
        None => {
            sessions
                .create(pb::CreateSessionRequest {
                    source: "cli".into(),
                    cwd: args.cwd.display().to_string(),
                    ..pb::CreateSessionRequest::default()
                })
                .await?
                .into_inner()
                .session
        }
    }
    .ok_or_else(|| CliError::new("the daemon returned no session"))?;
    let (frames, mut events) = daemon
        .attach(pb::Hello {
            session_id: session.id.clone(),
            since_seq: session.last_seq,
            client_name: CLIENT_NAME.into(),
            protocol_version: hermes_proto::PROTOCOL_VERSION,
            ..pb::Hello::default()
        })
        .await?;
    let send = |kind| {
        let frames = frames.clone();
        async move {
            frames
                .send(frame(kind))
                .await
                .map_err(|_| CliError::new("the connection to hermesd closed"))
        }
    };
    send(client_frame::Kind::UserInput(pb::UserInput {
        text: args.text.clone(),
        yolo: args.yolo,
        attachments: args.images.clone(),
        ..pb::UserInput::default()
    }))
    .await?;
    let mut turn_id: Option<String> = None;
    loop {
        let event = tokio::select! {
            event = events.message() => event?,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("\ninterrupting…");
                send(client_frame::Kind::Interrupt(pb::InterruptTurn {})).await?;
                continue;
            }
        };
        let Some(event) = event else {
            return Err(CliError::new(
                "the connection to hermesd closed before the turn finished; the turn goes on — see `hermesctl sessions show`",
            ));
        };
        let Some(kind) = event.kind.clone() else {
            continue;
        };
        if let Kind::TurnStarted(started) = &kind {
            if turn_id.is_none()
                && started.source_client == CLIENT_NAME
                && started.input == args.text
            {
                turn_id = Some(event.turn_id.clone());
            }
            continue;
        }
        if let Kind::Notice(notice) = &kind
            && event.turn_id.is_empty()
            && notice.kind == "input_rejected"
        {
            return Err(CliError::new(notice.text.clone()));
        }
        if turn_id.as_deref() != Some(event.turn_id.as_str()) {
            continue;
        }
        if stream == Stream::Json {
            println!("{}", events_json::event_json(&event));
        }
        match kind {
            Kind::TextDelta(delta) if stream == Stream::Text => {
                print!("{}", delta.text);
                let _ = std::io::stdout().flush();
            }
            Kind::ApprovalRequested(request) if !interactive => {
                send(client_frame::Kind::ApprovalResponse(pb::ApprovalResponse {
                    id: request.id,
                    decision: "deny".into(),
                }))
                .await?;
            }
            Kind::ClarifyRequested(question) if !interactive => {
                send(client_frame::Kind::ClarifyResponse(pb::ClarifyResponse {
                    id: question.id,
                    answer: "(no answer: the user is not at a terminal; decide yourself)".into(),
                }))
                .await?;
            }
            Kind::ToolStarted(tool) if interactive => {
                eprintln!("· {} {}", tool.name, shorten(&tool.arguments, 100));
            }
            Kind::ToolFinished(done) if interactive && !done.ok => {
                eprintln!("  ✗ {}", done.summary);
            }
            Kind::Notice(notice) if interactive => eprintln!("note: {}", notice.text),
            Kind::ApprovalRequested(request) => {
                let answer = ask_line(format!(
                    "\n⚠ {}\n  {}\nAllow? [o]nce / [s]ession / [a]lways / [d]eny: ",
                    request.reason, request.command
                ))
                .await?;
                send(client_frame::Kind::ApprovalResponse(pb::ApprovalResponse {
                    id: request.id,
                    decision: approval_choice(&answer).into(),
                }))
                .await?;
            }
            Kind::ClarifyRequested(question) => {
                let mut prompt = format!("\n? {}\n", question.question);
                for (i, choice) in question.choices.iter().enumerate() {
                    prompt.push_str(&format!("  {}. {choice}\n", i + 1));
                }
                prompt.push_str("> ");
                let answer = ask_line(prompt).await?;
                let answer = answer
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| question.choices.get(n.wrapping_sub(1)).cloned())
                    .unwrap_or(answer);
                send(client_frame::Kind::ClarifyResponse(pb::ClarifyResponse {
                    id: question.id,
                    answer,
                }))
                .await?;
            }
            Kind::TurnFinished(done) => {
                let _ = send(client_frame::Kind::Detach(pb::Detach {})).await;
                if stream == Stream::Text {
                    println!();
                }
                return Ok(pb::SendResponse {
                    session_id: session.id,
                    answer: done.final_text,
                    iterations: done.iterations,
                    tool_calls: done.tool_calls,
                    usage: done.usage,
                });
            }
            Kind::TurnFailed(failed) => {
                return Err(CliError::new(format!(
                    "{} — {} (session {})",
                    failed.message, failed.hint, session.id
                )));
            }
            Kind::TurnInterrupted(_) => {
                return Err(CliError::new(format!(
                    "the turn was interrupted (session {})",
                    session.id
                ))
                .with_code(130));
            }
            _ => {}
        }
    }
}

fn shorten(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut short: String = one_line.chars().take(max).collect();
    short.push('…');
    short
}
