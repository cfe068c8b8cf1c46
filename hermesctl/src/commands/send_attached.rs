//! `hermesctl send` on a terminal: attach to the session, start the turn, show tool progress on
//! stderr, answer approvals and questions from the keyboard, Ctrl-C interrupts the turn.

use std::io::Write;

use hermes_proto::pb::{self, client_frame, session_event::Kind};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::send::SendArgs;
use crate::{connection::Daemon, error::CliError};

const CLIENT_NAME: &str = "hermesctl send";

fn frame(kind: client_frame::Kind) -> pb::ClientFrame {
    pb::ClientFrame { kind: Some(kind) }
}

/// Read one line from the terminal without blocking the runtime.
async fn ask(prompt: String) -> Result<String, CliError> {
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

fn approval_choice(answer: &str) -> &'static str {
    match answer.to_lowercase().as_str() {
        "o" | "once" | "y" | "yes" => "once",
        "s" | "session" => "session",
        "a" | "always" => "always",
        _ => "deny",
    }
}

pub async fn run(daemon: &Daemon, args: SendArgs) -> Result<pb::SendResponse, CliError> {
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
    let (frames, outbound) = mpsc::channel(16);
    let send = |kind| {
        let frames = frames.clone();
        async move {
            frames
                .send(frame(kind))
                .await
                .map_err(|_| CliError::new("the connection to hermesd closed"))
        }
    };
    send(client_frame::Kind::Hello(pb::Hello {
        session_id: session.id.clone(),
        since_seq: session.last_seq,
        client_name: CLIENT_NAME.into(),
        protocol_version: hermes_proto::PROTOCOL_VERSION,
        ..pb::Hello::default()
    }))
    .await?;
    let mut events = sessions
        .attach(ReceiverStream::new(outbound))
        .await?
        .into_inner();
    send(client_frame::Kind::UserInput(pb::UserInput {
        text: args.text.clone(),
        yolo: args.yolo,
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
        let Some(kind) = event.kind else { continue };
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
        match kind {
            Kind::ToolStarted(tool) => {
                eprintln!("· {} {}", tool.name, shorten(&tool.arguments, 100));
            }
            Kind::ToolFinished(done) if !done.ok => {
                eprintln!("  ✗ {}", done.summary);
            }
            Kind::Notice(notice) => eprintln!("note: {}", notice.text),
            Kind::ApprovalRequested(request) => {
                let answer = ask(format!(
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
                let answer = ask(prompt).await?;
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
