//! One Gateway connection: open the websocket, take HELLO, identify or resume, and hand the
//! socket to a background task that owns it for its life. The task heartbeats every
//! `heartbeat_interval` (the first beat jittered), counts a beat whose ACK never came as a
//! zombie connection, answers Discord's own heartbeat requests, and forwards every dispatch into
//! a bounded channel. It ends — and says why ([`Ending`]) — on a close code, `RECONNECT`,
//! `INVALID_SESSION`, a missed ACK, a broken socket, a reader that fell behind (the channel is
//! full: resuming replays what was not stored) or when told to stop.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::{
    sync::{mpsc, oneshot},
    task::JoinHandle,
    time::Instant,
};
use tokio_tungstenite::tungstenite::{
    Message,
    protocol::{CloseFrame, frame::coding::CloseCode},
};
use tokio_util::sync::CancellationToken;

use super::protocol::{self, CLOSE_TO_RESUME, Ending, Frame, op};
use crate::gateway::websocket::{self, Socket};

/// Dispatches buffered between the socket and the daemon; more means the daemon fell behind.
pub const BUFFER: usize = 1024;
/// How long opening, HELLO and READY/RESUMED may take each.
const HANDSHAKE: Duration = Duration::from_secs(20);

/// One dispatch event.
#[derive(Debug, Clone)]
pub struct Dispatch {
    pub seq: i64,
    pub name: String,
    pub data: Value,
}

/// How a connection began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Began {
    /// A new session (READY): its id, where to resume it, the bot's user and application.
    Ready {
        session_id: String,
        resume_url: String,
        user_id: String,
        user_name: String,
        application_id: String,
    },
    /// The session went on (RESUMED); the missed events came first.
    Resumed,
}

/// A live connection: its dispatches, and its task (which says why it ended). Dropping it
/// stops the task.
#[derive(Debug)]
pub struct Live {
    pub events: mpsc::Receiver<Dispatch>,
    pub task: JoinHandle<Ending>,
    pub _stop: tokio_util::sync::DropGuard,
}

/// What to ask for once HELLO came.
pub enum Start<'a> {
    Identify,
    Resume { session_id: &'a str, seq: i64 },
}

/// Open a connection to `url` and start its session; the error says how the next attempt
/// should go.
pub async fn open(url: &str, token: &str, start: Start<'_>) -> Result<(Live, Began), Ending> {
    let mut socket = websocket::connect(&protocol::with_query(url), HANDSHAKE)
        .await
        .map_err(|e| Ending::Resume(format!("cannot open the Discord Gateway: {e}")))?;
    let interval = hello(&mut socket).await?;
    let first = match start {
        Start::Identify => protocol::identify(token),
        Start::Resume { session_id, seq } => protocol::resume(token, session_id, seq),
    };
    socket
        .send(Message::text(first))
        .await
        .map_err(|e| Ending::Resume(format!("the Discord Gateway broke: {e}")))?;
    let (tx, events) = mpsc::channel(BUFFER);
    let (began_tx, began) = oneshot::channel();
    let stop = CancellationToken::new();
    let task = tokio::spawn(run(socket, interval, tx, began_tx, stop.clone()));
    let live = Live {
        events,
        task,
        _stop: stop.drop_guard(),
    };
    match tokio::time::timeout(HANDSHAKE, began).await {
        Ok(Ok(began)) => Ok((live, began)),
        // The task ended before the session began: its reason is the answer.
        Ok(Err(_)) => Err(live.task.await.unwrap_or_else(|e| {
            Ending::Resume(format!("the Discord connection task failed: {e}"))
        })),
        Err(_) => Err(Ending::Resume(format!(
            "Discord did not confirm the session within {} s",
            HANDSHAKE.as_secs()
        ))),
    }
}

/// The heartbeat interval of the HELLO that opens a connection.
async fn hello(socket: &mut Socket) -> Result<Duration, Ending> {
    let frame = tokio::time::timeout(HANDSHAKE, next_frame(socket))
        .await
        .map_err(|_| Ending::Resume("Discord sent no HELLO".into()))??;
    if frame.op != op::HELLO {
        return Err(Ending::Resume(format!(
            "Discord opened with op {} instead of HELLO",
            frame.op
        )));
    }
    let ms = frame.d["heartbeat_interval"].as_u64().unwrap_or(41_250);
    Ok(Duration::from_millis(ms.clamp(1, 600_000)))
}

/// The next frame, or why there is none.
async fn next_frame(socket: &mut Socket) -> Result<Frame, Ending> {
    loop {
        let message = match socket.next().await {
            None => return Err(Ending::Resume("the Discord Gateway hung up".into())),
            Some(Err(e)) => return Err(Ending::Resume(format!("the Discord Gateway broke: {e}"))),
            Some(Ok(message)) => message,
        };
        match message {
            Message::Text(text) => {
                return serde_json::from_str(text.as_str()).map_err(|e| {
                    Ending::Resume(format!("Discord sent a frame hermesd cannot read: {e}"))
                });
            }
            Message::Close(frame) => {
                return Err(match frame {
                    Some(frame) => protocol::on_close(u16::from(frame.code), &frame.reason),
                    None => Ending::Resume("Discord closed the Gateway".into()),
                });
            }
            Message::Binary(_) => {
                return Err(Ending::Resume(
                    "Discord sent a binary frame (hermesd asks for JSON)".into(),
                ));
            }
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
        }
    }
}

/// The connection's life: heartbeats, dispatches, the end.
async fn run(
    mut socket: Socket,
    interval: Duration,
    events: mpsc::Sender<Dispatch>,
    began: oneshot::Sender<Began>,
    stop: CancellationToken,
) -> Ending {
    let mut began = Some(began);
    let mut seq: Option<i64> = None;
    let mut acked = true;
    // The first beat at a random point of the first interval, so reconnecting clients spread.
    let mut next_beat = Instant::now() + interval.mul_f64(fastrand::f64());
    let ending = loop {
        tokio::select! {
            biased;
            () = stop.cancelled() => break Ending::Resume("the connection was dropped".into()),
            () = tokio::time::sleep_until(next_beat) => {
                if !acked {
                    break Ending::Resume(
                        "Discord did not acknowledge a heartbeat (a zombie connection); resuming"
                            .into(),
                    );
                }
                if let Err(e) = socket.send(Message::text(protocol::heartbeat(seq))).await {
                    break Ending::Resume(format!("a heartbeat could not be sent: {e}"));
                }
                acked = false;
                next_beat = Instant::now() + interval;
            }
            frame = next_frame(&mut socket) => {
                let frame = match frame {
                    Ok(frame) => frame,
                    Err(ending) => return ending,
                };
                match frame.op {
                    op::HEARTBEAT_ACK => acked = true,
                    op::HEARTBEAT => {
                        if let Err(e) = socket.send(Message::text(protocol::heartbeat(seq))).await {
                            break Ending::Resume(format!("a heartbeat could not be sent: {e}"));
                        }
                    }
                    op::RECONNECT => break Ending::Resume("Discord asked to reconnect".into()),
                    op::INVALID_SESSION if frame.d.as_bool() == Some(true) => {
                        break Ending::Resume("Discord found the session invalid (resumable)".into());
                    }
                    op::INVALID_SESSION => {
                        break Ending::Reidentify("Discord found the session invalid".into());
                    }
                    op::DISPATCH => {
                        if let Some(s) = frame.s {
                            seq = Some(seq.map_or(s, |old| old.max(s)));
                        }
                        let name = frame.t.unwrap_or_default();
                        if let Some(first) = began_by(&name, &frame.d)
                            && let Some(began) = began.take()
                        {
                            let _ = began.send(first);
                        }
                        let dispatch = Dispatch { seq: frame.s.unwrap_or(0), name, data: frame.d };
                        if events.try_send(dispatch).is_err() {
                            break Ending::Resume(
                                "the daemon fell behind Discord's events; resuming".into(),
                            );
                        }
                    }
                    _ => {}
                }
            }
        }
    };
    let close = CloseFrame {
        code: CloseCode::from(CLOSE_TO_RESUME),
        reason: "".into(),
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), socket.close(Some(close))).await;
    ending
}

/// How a session began, if the dispatch `name` says so.
fn began_by(name: &str, data: &Value) -> Option<Began> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    match name {
        "READY" => Some(Began::Ready {
            session_id: text(&data["session_id"]),
            resume_url: text(&data["resume_gateway_url"]),
            user_id: text(&data["user"]["id"]),
            user_name: text(&data["user"]["username"]),
            application_id: text(&data["application"]["id"]),
        }),
        "RESUMED" => Some(Began::Resumed),
        _ => None,
    }
}
