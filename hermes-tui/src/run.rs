//! Joining the state, the view, the daemon link and a terminal: start-up (connect, pick the
//! session), then one loop over keys, daemon messages and signals — each turned into a
//! [`Msg`], each update's effects carried out, and a frame drawn once the queue is drained.

use std::{path::PathBuf, time::Instant};

use crossterm::event::{Event, EventStream};
use futures_util::StreamExt;
use hermes_proto::{
    client::{self, describe_status, protocol_mismatch},
    pb::{self, daemon_client::DaemonClient, sessions_client::SessionsClient},
};
use ratatui::{Terminal, backend::Backend};
use tokio::sync::mpsc;
use tonic::transport::Channel;

use crate::{
    app::{App, Effect, Msg},
    config::TuiConfig,
    link::Link,
    view::{self, BlockCache},
};

/// Daemon messages waiting for the loop; the link's tasks wait when it is full.
const MSG_QUEUE: usize = 1_024;
/// Messages applied before a frame is drawn, so a burst of deltas costs one frame.
const MSGS_PER_FRAME: usize = 256;

/// Which session to open first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opening {
    /// This one (an id).
    Session(String),
    /// The most recently active one.
    Continue,
    /// A new one, now.
    New,
    /// None until the first message is sent.
    Later,
}

/// Connect to the daemon at `socket` and check it speaks this protocol.
pub async fn connect(socket: &std::path::Path) -> Result<Channel, String> {
    let channel = client::connect(socket).await.map_err(|e| {
        if e.is_not_running() {
            format!("{e}: start it with `hermesctl daemon start`, or run `hermesctl tui`")
        } else {
            e.to_string()
        }
    })?;
    let status = DaemonClient::new(channel.clone())
        .get_status(pb::GetStatusRequest {})
        .await
        .map_err(|s| describe_status(&s))?
        .into_inner();
    if let Some(message) = protocol_mismatch(&status) {
        return Err(message);
    }
    Ok(channel)
}

/// The session `opening` names, if any.
pub async fn opening_session(
    channel: &Channel,
    opening: &Opening,
    cwd: &str,
) -> Result<Option<pb::Session>, String> {
    let mut sessions = SessionsClient::new(channel.clone());
    let found = match opening {
        Opening::Session(id) => {
            sessions
                .get(pb::GetSessionRequest {
                    id: id.clone(),
                    include_messages: false,
                })
                .await
                .map_err(|s| describe_status(&s))?
                .into_inner()
                .session
        }
        Opening::Continue => sessions
            .list(pb::ListSessionsRequest {
                limit: 1,
                ..pb::ListSessionsRequest::default()
            })
            .await
            .map_err(|s| describe_status(&s))?
            .into_inner()
            .sessions
            .into_iter()
            .next(),
        Opening::New => {
            sessions
                .create(pb::CreateSessionRequest {
                    source: "tui".into(),
                    cwd: cwd.to_string(),
                    ..pb::CreateSessionRequest::default()
                })
                .await
                .map_err(|s| describe_status(&s))?
                .into_inner()
                .session
        }
        Opening::Later => None,
    };
    Ok(found)
}

/// The state, the link and its message queue, ready for the first frame.
pub struct Started {
    pub app: App,
    pub link: Link,
    pub msgs: mpsc::Receiver<Msg>,
}

/// Build the state and start the link; the first session (if any) is being attached.
pub async fn start(
    channel: Channel,
    config: TuiConfig,
    history: Vec<String>,
    first: Option<pb::Session>,
    cwd: PathBuf,
) -> Started {
    let (tx, msgs) = mpsc::channel(MSG_QUEUE);
    let mut link = Link::start(channel, cwd, tx);
    let now_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let mut app = App::new(config, history, now_unix);
    if let Some(session) = first {
        for effect in app.update(Msg::Created(session)) {
            link.run(effect).await;
        }
    }
    Started { app, link, msgs }
}

/// Apply `msg` and carry out what it asks for; `false` once the TUI should quit.
pub async fn step(app: &mut App, link: &mut Link, msg: Msg) -> bool {
    app.now = Instant::now();
    let effects = app.update(msg);
    let mut go_on = true;
    for effect in effects {
        if effect == Effect::Quit {
            go_on = false;
        }
        link.run(effect).await;
    }
    go_on && !app.quit
}

/// The loop: until quit, a signal, or the terminal goes away.
pub async fn run<B: Backend>(terminal: &mut Terminal<B>, started: Started) -> Result<App, String> {
    let Started {
        mut app,
        mut link,
        mut msgs,
    } = started;
    let mut cache = BlockCache::default();
    let mut keys = EventStream::new();
    let mut terminate = signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut hangup = signal(tokio::signal::unix::SignalKind::hangup())?;
    if let Ok(size) = terminal.size() {
        app.size = (size.width, size.height);
    }
    loop {
        terminal
            .draw(|frame| view::draw(frame, &mut app, &mut cache))
            .map_err(|e| format!("cannot draw: {e}"))?;
        let msg = tokio::select! {
            key = keys.next() => match key {
                Some(Ok(event)) => match terminal_msg(event) {
                    Some(msg) => msg,
                    None => continue,
                },
                // The terminal went away: leave, the sessions go on.
                Some(Err(_)) | None => break,
            },
            Some(msg) = msgs.recv() => msg,
            _ = terminate.recv() => break,
            _ = hangup.recv() => break,
        };
        if !step(&mut app, &mut link, msg).await {
            break;
        }
        let mut drained = 0;
        while drained < MSGS_PER_FRAME {
            let Ok(msg) = msgs.try_recv() else { break };
            if !step(&mut app, &mut link, msg).await {
                link.run(Effect::Quit).await;
                return Ok(app);
            }
            drained += 1;
        }
    }
    link.run(Effect::Quit).await;
    Ok(app)
}

fn signal(kind: tokio::signal::unix::SignalKind) -> Result<tokio::signal::unix::Signal, String> {
    tokio::signal::unix::signal(kind).map_err(|e| format!("cannot listen for signals: {e}"))
}

/// A terminal event as a message.
fn terminal_msg(event: Event) -> Option<Msg> {
    match event {
        Event::Key(key) => Some(Msg::Key(key)),
        Event::Paste(text) => Some(Msg::Paste(text)),
        Event::Mouse(mouse) => Some(Msg::Mouse(mouse)),
        Event::Resize(w, h) => Some(Msg::Resize(w, h)),
        Event::FocusGained | Event::FocusLost => None,
    }
}
