//! `hermesctl attach SESSION`: the last messages of a session, then everything that happens in it
//! as it happens. A read-write client answers approvals and questions from the keyboard; Ctrl-C
//! detaches and the session goes on. A lost connection is re-attached from the last seq seen.

use std::{
    io::{IsTerminal, Write},
    time::Duration,
};

use hermes_proto::pb::{self, client_frame, session_event::Kind};
use tokio::sync::mpsc;

use super::events_json;
use crate::{connection, context::Context, error::CliError};

const CLIENT_NAME: &str = "hermesctl attach";
/// Messages of backlog shown on attach.
const BACKLOG_MESSAGES: u32 = 20;
const RECONNECT_TRIES: u32 = 50;

/// What the terminal shows of one event; `streamed` remembers whether the answer being shown
/// arrived as deltas (then its complete message is not printed again).
fn render(kind: &Kind, streamed: &mut bool) {
    let mut out = std::io::stdout();
    match kind {
        Kind::UserMessage(m) => println!("\n> {}", m.text),
        Kind::TextDelta(d) => {
            *streamed = true;
            print!("{}", d.text);
            let _ = out.flush();
        }
        Kind::AssistantMessage(m) => {
            if !*streamed && !m.text.is_empty() {
                print!("{}", m.text);
            }
            if *streamed || !m.text.is_empty() {
                println!();
            }
            *streamed = false;
        }
        Kind::ToolStarted(t) => println!("· {} {}", t.name, t.arguments.replace('\n', " ")),
        Kind::ToolFinished(t) => {
            let mark = if t.ok { "✓" } else { "✗" };
            println!("  {mark} {} ({} ms)", t.summary, t.duration_ms);
        }
        Kind::ApprovalRequested(a) => println!("⚠ approval needed: {} ({})", a.command, a.reason),
        Kind::ApprovalResolved(a) => println!("  approval: {} by {}", a.decision, a.by),
        Kind::ClarifyRequested(q) => println!("? {} {:?}", q.question, q.choices),
        Kind::TurnFinished(f) => {
            let u = f.usage.unwrap_or_default();
            println!(
                "— done: {} model calls, {} tool calls, {} in / {} out tokens",
                f.iterations, f.tool_calls, u.input_tokens, u.output_tokens
            );
        }
        Kind::TurnFailed(f) => println!("✗ {} — {}", f.message, f.hint),
        Kind::TurnInterrupted(i) => println!("— interrupted by {}", i.by),
        Kind::Notice(n) => println!("note: {}", n.text),
        Kind::ReplayDone(_) => println!("— live —"),
        _ => {}
    }
}

async fn answer(kind: &Kind, frames: &mpsc::Sender<pb::ClientFrame>) -> Result<(), CliError> {
    let reply = match kind {
        Kind::ApprovalRequested(a) => {
            let choice = super::send_attached::ask_line(
                "Allow? [o]nce / [s]ession / [a]lways / [d]eny: ".into(),
            )
            .await?;
            client_frame::Kind::ApprovalResponse(pb::ApprovalResponse {
                id: a.id.clone(),
                decision: super::send_attached::approval_choice(&choice).into(),
            })
        }
        Kind::ClarifyRequested(q) => {
            let text = super::send_attached::ask_line("> ".into()).await?;
            client_frame::Kind::ClarifyResponse(pb::ClarifyResponse {
                id: q.id.clone(),
                answer: text,
            })
        }
        _ => return Ok(()),
    };
    frames
        .send(pb::ClientFrame { kind: Some(reply) })
        .await
        .map_err(|_| CliError::new("the connection to hermesd closed"))
}

pub async fn run(ctx: &Context, id: &str, read_only: bool) -> Result<(), CliError> {
    let answers = !read_only && std::io::stdin().is_terminal();
    let mut last_seq: Option<u64> = None;
    let mut streamed = false;
    let mut tries = 0;
    loop {
        let daemon = connection::connect(ctx).await?;
        let hello = pb::Hello {
            session_id: id.to_string(),
            since_seq: last_seq.unwrap_or(0),
            last_messages: if last_seq.is_none() {
                BACKLOG_MESSAGES
            } else {
                0
            },
            read_only: !answers,
            client_name: CLIENT_NAME.into(),
            protocol_version: hermes_proto::PROTOCOL_VERSION,
        };
        let (frames, mut events) = daemon.attach(hello).await?;
        loop {
            let event = tokio::select! {
                event = events.message() => event,
                _ = tokio::signal::ctrl_c() => {
                    eprintln!("\ndetached; the session goes on. Re-attach: hermesctl attach {id}");
                    return Ok(());
                }
            };
            let event = match event {
                Ok(Some(event)) => event,
                Ok(None) | Err(_) => break,
            };
            tries = 0;
            if event.seq > 0 {
                last_seq = Some(last_seq.unwrap_or(0).max(event.seq));
            }
            let Some(kind) = &event.kind else { continue };
            if matches!(kind, Kind::Lagged(_)) {
                break;
            }
            if ctx.json {
                println!("{}", events_json::event_json(&event));
            } else {
                render(kind, &mut streamed);
            }
            if answers {
                answer(kind, &frames).await?;
            }
        }
        tries += 1;
        if tries > RECONNECT_TRIES {
            return Err(CliError::new(format!(
                "lost the connection to hermesd; re-attach with `hermesctl attach {id}`"
            )));
        }
        eprintln!(
            "connection lost; re-attaching from seq {}…",
            last_seq.unwrap_or(0)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
