//! Socket Mode: `apps.connections.open` with the app token hands out a websocket URL; the
//! connection is taken once Slack says `hello`. A task then owns the socket: it passes every
//! envelope on (with its id), writes the acks it is given (each only once its update is stored,
//! so Slack redelivers what the daemon did not keep), pings every `ping_interval`, and ends on a
//! `disconnect` envelope (Slack wants a new connection), a close, or silence: nothing heard for
//! three ping intervals means the link is dead even if TCP does not know it yet.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message as Frame;

use super::api::{Args, WebApi};
use crate::gateway::{adapter::PlatformError, websocket};

/// How long opening the websocket and Slack's `hello` may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(15);
/// Envelopes waiting to be taken.
const QUEUE: usize = 256;

/// What the connection passes on.
#[derive(Debug)]
pub enum Incoming {
    Envelope {
        id: String,
        kind: String,
        payload: Value,
    },
    /// The connection is over; `refresh` when Slack asked for a new one (`disconnect`).
    Ended { why: String, refresh: bool },
}

/// An ack to write: the envelope id and an optional response payload.
pub type Ack = (String, Option<Value>);

/// A live Socket Mode connection; dropping it closes the socket.
pub struct Connection {
    pub incoming: mpsc::Receiver<Incoming>,
    pub acks: mpsc::UnboundedSender<Ack>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Open a connection with `app_token`, pinging every `ping`.
pub async fn open(
    api: &WebApi,
    app_token: &str,
    ping: Duration,
) -> Result<Connection, PlatformError> {
    let opened = api
        .call("apps.connections.open", app_token, "app", Args::None)
        .await?;
    let url = opened["url"]
        .as_str()
        .ok_or_else(|| PlatformError::Unavailable("apps.connections.open gave no URL".into()))?;
    let mut socket = websocket::connect(url, OPEN_TIMEOUT)
        .await
        .map_err(|e| PlatformError::Unavailable(format!("Socket Mode: {e}")))?;
    let hello = tokio::time::timeout(OPEN_TIMEOUT, async {
        while let Some(frame) = socket.next().await {
            match frame {
                Ok(Frame::Text(text)) => {
                    let value: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
                    match value["type"].as_str() {
                        Some("hello") => return Ok(value),
                        Some("disconnect") => {
                            return Err(format!(
                                "Slack refused the connection ({})",
                                value["reason"].as_str().unwrap_or("no reason")
                            ));
                        }
                        _ => {}
                    }
                }
                Ok(Frame::Close(_)) | Err(_) => break,
                Ok(_) => {}
            }
        }
        Err("the connection closed before Slack's hello".to_string())
    })
    .await
    .map_err(|_| PlatformError::Unavailable("Slack's hello did not come".into()))?
    .map_err(|e| PlatformError::Unavailable(format!("Socket Mode: {e}")))?;
    tracing::debug!(
        connections = hello["num_connections"].as_u64().unwrap_or(0),
        "slack: Socket Mode connected"
    );
    let (tx, incoming) = mpsc::channel(QUEUE);
    let (acks, ack_rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(run(socket, tx, ack_rx, ping));
    Ok(Connection {
        incoming,
        acks,
        task,
    })
}

async fn run(
    mut socket: websocket::Socket,
    tx: mpsc::Sender<Incoming>,
    mut acks: mpsc::UnboundedReceiver<Ack>,
    ping: Duration,
) {
    let silence = ping * 3;
    let mut heard = Instant::now();
    let mut ticker = tokio::time::interval(ping);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let end = |why: String, refresh: bool| Incoming::Ended { why, refresh };
    let ended = loop {
        tokio::select! {
            ack = acks.recv() => {
                let Some((id, payload)) = ack else { break end("the adapter left".into(), false) };
                let mut frame = json!({"envelope_id": id});
                if let Some(payload) = payload {
                    frame["payload"] = payload;
                }
                if let Err(e) = socket.send(Frame::text(frame.to_string())).await {
                    break end(format!("an ack could not be written: {e}"), false);
                }
            }
            frame = socket.next() => {
                heard = Instant::now();
                match frame {
                    Some(Ok(Frame::Text(text))) => {
                        let Ok(value) = serde_json::from_str::<Value>(text.as_str()) else {
                            continue;
                        };
                        if value["type"] == "disconnect" {
                            let reason = value["reason"].as_str().unwrap_or("no reason").to_string();
                            break end(format!("Slack asked for a new connection ({reason})"), true);
                        }
                        let Some(id) = value["envelope_id"].as_str() else { continue };
                        let envelope = Incoming::Envelope {
                            id: id.to_string(),
                            kind: value["type"].as_str().unwrap_or_default().to_string(),
                            payload: value["payload"].clone(),
                        };
                        if tx.send(envelope).await.is_err() {
                            return;
                        }
                    }
                    Some(Ok(Frame::Close(close))) => {
                        let why = close.map(|c| c.reason.to_string()).unwrap_or_default();
                        break end(format!("Slack closed the connection {why}").trim_end().to_string(), false);
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => break end(format!("the connection failed: {e}"), false),
                    None => break end("the connection closed".into(), false),
                }
            }
            _ = ticker.tick() => {
                if heard.elapsed() >= silence {
                    break end(format!("nothing heard for {} s", silence.as_secs_f64().round()), false);
                }
                if let Err(e) = socket.send(Frame::Ping(Vec::new().into())).await {
                    break end(format!("a ping could not be written: {e}"), false);
                }
            }
        }
    };
    let _ = tx.send(ended).await;
    let _ = tokio::time::timeout(Duration::from_secs(1), socket.close(None)).await;
}
