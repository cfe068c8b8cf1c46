//! `hermesctl chat [SESSION]`: a conversation in the terminal that is not tied to it. Shows the
//! session's last messages, then streams live; Enter sends, Ctrl-C interrupts the running turn
//! (twice quits), Ctrl-D or `/detach` leaves the session running. A lost connection re-attaches
//! from the last seq seen; input is never sent twice.

mod commands;
mod line_input;
mod markdown;
mod slash;
mod turn_keys;
mod view;

use std::{
    io::IsTerminal,
    time::{Duration, Instant},
};

use hermes_proto::pb::{self, client_frame, session_event::Kind};
use tokio::sync::mpsc;

use self::{
    line_input::{Line, LineInput, Printer},
    turn_keys::{TurnKey, TurnKeys},
    view::View,
};
use crate::{
    connection::{self, Daemon},
    context::Context,
    error::CliError,
};

const CLIENT_NAME: &str = "hermesctl chat";
const BACKLOG_MESSAGES: u32 = 20;

/// One attachment to the session.
struct Link {
    frames: mpsc::Sender<pb::ClientFrame>,
    events: mpsc::Receiver<Option<pb::SessionEvent>>,
}

async fn attach(daemon: &Daemon, session: &str, since: Option<u64>) -> Result<Link, CliError> {
    let hello = pb::Hello {
        session_id: session.to_string(),
        since_seq: since.unwrap_or(0),
        last_messages: if since.is_none() { BACKLOG_MESSAGES } else { 0 },
        read_only: false,
        client_name: CLIENT_NAME.into(),
        protocol_version: hermes_proto::PROTOCOL_VERSION,
    };
    let (frames, mut stream) = daemon.attach(hello).await?;
    let (tx, events) = mpsc::channel(256);
    tokio::spawn(async move {
        while let Ok(Some(event)) = stream.message().await {
            if tx.send(Some(event)).await.is_err() {
                return;
            }
        }
        let _ = tx.send(None).await;
    });
    Ok(Link { frames, events })
}

async fn resolve_session(
    daemon: &Daemon,
    wanted: Option<String>,
    resume_latest: bool,
) -> Result<pb::Session, CliError> {
    let mut sessions = daemon.sessions();
    let found = match wanted {
        Some(id) => {
            sessions
                .get(pb::GetSessionRequest {
                    id,
                    include_messages: false,
                })
                .await?
                .into_inner()
                .session
        }
        None if resume_latest => sessions
            .list(pb::ListSessionsRequest {
                limit: 1,
                ..pb::ListSessionsRequest::default()
            })
            .await?
            .into_inner()
            .sessions
            .into_iter()
            .next(),
        None => None,
    };
    match found {
        Some(session) => Ok(session),
        None => {
            let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
            sessions
                .create(pb::CreateSessionRequest {
                    source: "cli".into(),
                    cwd: cwd.display().to_string(),
                    ..pb::CreateSessionRequest::default()
                })
                .await?
                .into_inner()
                .session
                .ok_or_else(|| CliError::new("hermesd returned no session"))
        }
    }
}

/// Where a chat is and what it is doing.
struct Chat {
    session: pb::Session,
    view: View,
    input: LineInput,
    printer: Printer,
    last_seq: Option<u64>,
    running: bool,
    last_ctrl_c: Option<Instant>,
    /// Input typed while the connection was down, sent once re-attached.
    unsent: Option<String>,
    /// Images attached with `/image` (absolute paths), sent with the next message.
    images: Vec<String>,
    /// The keyboard while a turn runs (a terminal only).
    keys: Option<TurnKeys>,
    /// Text typed during the turn, waiting for the next prompt.
    typed_ahead: String,
    /// An approval asked while the prompt was open (a delegated child's): the next line answers it.
    approval_at_prompt: Option<String>,
}

/// The approval decision a typed answer means (anything else denies).
fn decision_of(answer: &str) -> &'static str {
    match answer.trim().to_lowercase().as_str() {
        "o" | "once" | "y" | "yes" => "once",
        "s" | "session" => "session",
        "a" | "always" => "always",
        _ => "deny",
    }
}

enum Next {
    Continue,
    Detach,
    Quit,
}

pub async fn run(
    ctx: &Context,
    wanted: Option<String>,
    resume_latest: bool,
) -> Result<(), CliError> {
    let daemon = connection::connect(ctx).await?;
    let session = resolve_session(&daemon, wanted, resume_latest).await?;
    let width = std::io::stdout()
        .is_terminal()
        .then(|| terminal_size::terminal_size().map_or(80, |(w, _)| usize::from(w.0)));
    let (input, printer) = LineInput::start(ctx.home.dir.join("chat_history"));
    let mut chat = Chat {
        view: View::new(width),
        input,
        printer,
        session,
        last_seq: None,
        running: false,
        last_ctrl_c: None,
        unsent: None,
        images: Vec::new(),
        keys: None,
        typed_ahead: String::new(),
        approval_at_prompt: None,
    };
    println!(
        "session {} — /help for commands, Ctrl-D detaches",
        chat.session.id
    );
    let mut daemon = daemon;
    let mut link = attach(&daemon, &chat.session.id, None).await?;
    loop {
        let next = if chat.running {
            chat.watch_turn(&mut link).await?
        } else {
            chat.prompt(&daemon, &mut link).await?
        };
        match next {
            Next::Continue => {}
            Next::Detach => {
                chat.release_keys();
                println!(
                    "detached; the session goes on. Re-attach: hermesctl chat {}",
                    chat.session.id
                );
                return Ok(());
            }
            Next::Quit => {
                chat.release_keys();
                return Ok(());
            }
        }
        if link.frames.is_closed() || link.events.is_closed() {
            (daemon, link) = chat.reconnect(ctx).await?;
        }
        if let Some(text) = chat.unsent.take() {
            chat.view.own_input = Some(text.clone());
            send(
                &link,
                client_frame::Kind::UserInput(pb::UserInput {
                    text,
                    attachments: std::mem::take(&mut chat.images),
                    ..pb::UserInput::default()
                }),
            )
            .await;
            chat.running = true;
        }
    }
}

impl Chat {
    /// Apply one event; `false` when the connection ended.
    async fn on_event(
        &mut self,
        event: Option<pb::SessionEvent>,
        link: &mut Link,
    ) -> Result<bool, CliError> {
        let Some(event) = event else {
            return Ok(false);
        };
        if event.seq > 0 {
            self.last_seq = Some(self.last_seq.unwrap_or(0).max(event.seq));
        }
        let Some(kind) = &event.kind else {
            return Ok(true);
        };
        self.view.show(kind);
        match kind {
            Kind::TurnStarted(_) | Kind::UserMessage(_) if !event.turn_id.is_empty() => {
                self.running = true;
            }
            // Idle is only believed from the turn's own end: a late "idle" of the previous turn
            // must not hide the one just started.
            Kind::StateChanged(s) if s.state != pb::SessionState::Idle as i32 => {
                self.running = true;
            }
            Kind::TurnFinished(_) | Kind::TurnFailed(_) | Kind::TurnInterrupted(_) => {
                self.running = false;
            }
            Kind::Lagged(_) => return Ok(false),
            Kind::ApprovalRequested(a) => {
                let answer = self
                    .ask("Allow? [o]nce / [s]ession / [a]lways / [d]eny: ")
                    .await;
                let decision = decision_of(&answer);
                send(
                    link,
                    client_frame::Kind::ApprovalResponse(pb::ApprovalResponse {
                        id: a.id.clone(),
                        decision: decision.into(),
                    }),
                )
                .await;
            }
            Kind::ClarifyRequested(q) => {
                let answer = self.ask("> ").await;
                let answer = answer
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| q.choices.get(n.wrapping_sub(1)).cloned())
                    .unwrap_or(answer);
                send(
                    link,
                    client_frame::Kind::ClarifyResponse(pb::ClarifyResponse {
                        id: q.id.clone(),
                        answer,
                    }),
                )
                .await;
            }
            _ => {}
        }
        Ok(true)
    }

    /// Show an event while the prompt is up (no questions can be answered from here).
    fn print_above(&mut self, event: &pb::SessionEvent) {
        if event.seq > 0 {
            self.last_seq = Some(self.last_seq.unwrap_or(0).max(event.seq));
        }
        if let Some(kind) = &event.kind {
            let text = self.view.render(kind);
            if !text.is_empty() {
                self.printer.print(text);
            }
        }
    }

    /// An approval asked while the prompt is open (a delegated child's, while this session's own
    /// turn is over) is answered by the next line; one resolved elsewhere is forgotten.
    fn note_approval_at_prompt(&mut self, event: &pb::SessionEvent) {
        match &event.kind {
            Some(Kind::ApprovalRequested(asked)) => {
                self.printer
                    .print("Allow? type [o]nce / [s]ession / [a]lways / [d]eny and Enter\n".into());
                self.approval_at_prompt = Some(asked.id.clone());
            }
            Some(Kind::ApprovalResolved(done))
                if self.approval_at_prompt.as_deref() == Some(done.id.as_str()) =>
            {
                self.approval_at_prompt = None;
            }
            _ => {}
        }
    }

    /// Give the keyboard back to the line editor, keeping what was typed during the turn.
    fn release_keys(&mut self) {
        if let Some(keys) = self.keys.take() {
            self.typed_ahead.push_str(&keys.finish());
        }
    }

    async fn ask(&mut self, prompt: &str) -> String {
        self.release_keys();
        match self.input.read(prompt, "").await {
            Line::Text(text) => text.trim().to_string(),
            Line::Interrupted | Line::Eof => String::new(),
        }
    }

    /// While a turn runs: show its events; Ctrl-C interrupts it, twice within 2 s quits; Ctrl-D
    /// detaches. On a terminal the keys are read as bytes (see `turn_keys`); otherwise SIGINT is
    /// listened for.
    async fn watch_turn(&mut self, link: &mut Link) -> Result<Next, CliError> {
        if self.keys.is_none() && std::io::stdin().is_terminal() {
            self.keys = TurnKeys::start();
        }
        let key = async {
            match self.keys.as_mut() {
                Some(keys) => keys.next().await,
                None => tokio::signal::ctrl_c()
                    .await
                    .ok()
                    .map(|()| TurnKey::Interrupt),
            }
        };
        let key = tokio::select! {
            event = link.events.recv() => {
                if !self.on_event(event.flatten(), link).await? {
                    link.events.close();
                }
                return Ok(Next::Continue);
            }
            Some(key) = key => key,
        };
        match key {
            TurnKey::Detach => Ok(Next::Detach),
            TurnKey::Interrupt => {
                let twice = self
                    .last_ctrl_c
                    .is_some_and(|t| t.elapsed() < Duration::from_secs(2));
                if twice {
                    return Ok(Next::Quit);
                }
                self.last_ctrl_c = Some(Instant::now());
                eprintln!("\ninterrupting (Ctrl-C again to quit)…");
                send(link, client_frame::Kind::Interrupt(pb::InterruptTurn {})).await;
                Ok(Next::Continue)
            }
        }
    }

    /// While idle: show what arrived, then read one entry.
    async fn prompt(&mut self, daemon: &Daemon, link: &mut Link) -> Result<Next, CliError> {
        while let Ok(event) = link.events.try_recv() {
            if !self.on_event(event, link).await? {
                link.events.close();
                return Ok(Next::Continue);
            }
            if self.running {
                return Ok(Next::Continue);
            }
        }
        // While the user types, what happens in the session (another client's turn) is printed
        // above the prompt.
        self.release_keys();
        let typed_ahead = std::mem::take(&mut self.typed_ahead);
        let input = self.input.clone();
        let read = input.read("› ", &typed_ahead);
        tokio::pin!(read);
        let mut connected = !link.events.is_closed();
        let line = loop {
            tokio::select! {
                line = &mut read => break line,
                event = link.events.recv(), if connected => match event.flatten() {
                    Some(event) => {
                        self.print_above(&event);
                        self.note_approval_at_prompt(&event);
                    }
                    None => {
                        link.events.close();
                        connected = false;
                    }
                },
            }
        };
        let text = match line {
            Line::Eof => return Ok(Next::Detach),
            Line::Interrupted => {
                let twice = self
                    .last_ctrl_c
                    .is_some_and(|t| t.elapsed() < Duration::from_secs(2));
                if twice {
                    return Ok(Next::Quit);
                }
                self.last_ctrl_c = Some(Instant::now());
                println!("(Ctrl-C again to quit, Ctrl-D to detach)");
                return Ok(Next::Continue);
            }
            Line::Text(text) => text,
        };
        if let Some(id) = self.approval_at_prompt.take() {
            let decision = decision_of(&text);
            send(
                link,
                client_frame::Kind::ApprovalResponse(pb::ApprovalResponse {
                    id,
                    decision: decision.into(),
                }),
            )
            .await;
            return Ok(Next::Continue);
        }
        if text.trim().is_empty() {
            return Ok(Next::Continue);
        }
        let text = match slash::parse(&text) {
            Ok(Some(command)) => return self.command(daemon, link, command).await,
            Ok(None) => text,
            Err(message) => match skill_line(daemon, &text).await {
                Some(request) => request,
                None => {
                    println!("{message}");
                    return Ok(Next::Continue);
                }
            },
        };
        // The daemon went away while we waited for the line: re-attach first, so the input is
        // sent exactly once, on the new connection.
        while let Ok(event) = link.events.try_recv() {
            if !self.on_event(event, link).await? {
                link.events.close();
                break;
            }
        }
        if link.frames.is_closed() || link.events.is_closed() {
            self.unsent = Some(text);
            return Ok(Next::Continue);
        }
        self.view.own_input = Some(text.clone());
        send(
            link,
            client_frame::Kind::UserInput(pb::UserInput {
                text,
                attachments: std::mem::take(&mut self.images),
                ..pb::UserInput::default()
            }),
        )
        .await;
        self.running = true;
        Ok(Next::Continue)
    }

    async fn reconnect(&mut self, ctx: &Context) -> Result<(Daemon, Link), CliError> {
        eprintln!(
            "connection lost; re-attaching from seq {}…",
            self.last_seq.unwrap_or(0)
        );
        for _ in 0..50 {
            if let Ok(daemon) = connection::connect(ctx).await
                && let Ok(link) =
                    attach(&daemon, &self.session.id, Some(self.last_seq.unwrap_or(0))).await
            {
                return Ok((daemon, link));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Err(CliError::new(format!(
            "cannot reach hermesd; re-attach later with `hermesctl chat {}`",
            self.session.id
        )))
    }
}

async fn send(link: &Link, kind: client_frame::Kind) {
    let _ = link.frames.send(pb::ClientFrame { kind: Some(kind) }).await;
}

/// The message of a `/<skill-name> request` line when the daemon offers that skill as a command
/// (`ListCommands`: every trusted skill).
async fn skill_line(daemon: &Daemon, line: &str) -> Option<String> {
    let (name, rest) = hermes_proto::commands::split(line)?;
    let offered = daemon
        .gateway()
        .list_commands(pb::ListCommandsRequest {})
        .await
        .ok()?
        .into_inner()
        .commands;
    offered
        .iter()
        .find(|c| c.kind == "skill" && c.terminal && c.name == name.replace('-', "_"))
        .map(|c| hermes_proto::commands::skill_request(&c.name, &rest))
}
