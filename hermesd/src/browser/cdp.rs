//! One Chrome DevTools Protocol connection: JSON commands over a plain `ws://` WebSocket to
//! the browser, each answered by id, and the events the browser sends, handed to one consumer
//! through a bounded queue (a slow consumer slows the socket's reader; nothing is dropped). The
//! calls in flight are bounded by their callers: one tool call per session and the guard's
//! answers to paused requests.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use super::BrowserError;

/// Events waiting for their consumer.
const EVENT_QUEUE: usize = 1024;
/// The largest message accepted from the browser (a full accessibility tree of a big page).
const MAX_MESSAGE: usize = 64 << 20;

/// An event the browser sent: its method, parameters and the target session it concerns.
#[derive(Debug)]
pub struct Event {
    pub method: String,
    pub params: Value,
    pub session: Option<String>,
}

/// Each waiting call gets the whole answer's text (parsed by the caller into what it needs).
type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<String, String>>>>>;

/// What the reader looks at in every message; the rest (a large `result`) is skipped, not
/// built.
#[derive(serde::Deserialize)]
struct Envelope {
    id: Option<u64>,
    method: Option<String>,
    #[serde(rename = "sessionId")]
    session: Option<String>,
    error: Option<ErrorBody>,
    params: Option<Value>,
}

#[derive(serde::Deserialize)]
struct ErrorBody {
    message: Option<String>,
}

#[derive(serde::Deserialize)]
struct Answer<T> {
    result: T,
}

/// The sending half of a connection; cheap to clone. The connection ends when the browser
/// closes it or [`Cdp::close`] is called; every call waiting then fails.
#[derive(Clone)]
pub struct Cdp {
    out: mpsc::Sender<String>,
    pending: Pending,
    next_id: Arc<AtomicU64>,
    closed: CancellationToken,
}

impl std::fmt::Debug for Cdp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cdp")
            .field("closed", &self.closed.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Cdp {
    /// Connect to `ws_url` within `timeout`; returns the connection and its events.
    pub async fn connect(
        ws_url: &str,
        timeout: Duration,
    ) -> Result<(Self, mpsc::Receiver<Event>), BrowserError> {
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let connect = tokio_tungstenite::connect_async_with_config(ws_url, Some(config), false);
        let (socket, _) = tokio::time::timeout(timeout, connect)
            .await
            .map_err(|_| {
                BrowserError::Start(format!(
                    "the DevTools endpoint {ws_url} did not answer within {}s",
                    timeout.as_secs()
                ))
            })?
            .map_err(|e| BrowserError::Start(format!("cannot connect to {ws_url}: {e}")))?;
        let (mut sink, mut stream) = socket.split();
        let (out, mut out_rx) = mpsc::channel::<String>(64);
        let (events, events_rx) = mpsc::channel(EVENT_QUEUE);
        let pending: Pending = Arc::default();
        let closed = CancellationToken::new();
        let writer_closed = closed.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = writer_closed.cancelled() => break,
                    next = out_rx.recv() => match next {
                        Some(text) => {
                            if sink.send(Message::text(text)).await.is_err() {
                                break;
                            }
                        }
                        None => break,
                    },
                }
            }
            let _ = sink.close().await;
            writer_closed.cancel();
        });
        let reader_pending = Arc::clone(&pending);
        let reader_closed = closed.clone();
        tokio::spawn(async move {
            loop {
                let message = tokio::select! {
                    () = reader_closed.cancelled() => break,
                    m = stream.next() => m,
                };
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                let Ok(envelope) = serde_json::from_str::<Envelope>(text.as_str()) else {
                    continue;
                };
                if let Some(id) = envelope.id {
                    let answer = match envelope.error {
                        Some(error) => Err(error
                            .message
                            .unwrap_or_else(|| "unknown DevTools error".into())),
                        None => Ok(text.as_str().to_string()),
                    };
                    let waiter = reader_pending.lock().ok().and_then(|mut p| p.remove(&id));
                    if let Some(waiter) = waiter {
                        let _ = waiter.send(answer);
                    }
                } else if let Some(method) = envelope.method {
                    let event = Event {
                        method,
                        session: envelope.session,
                        params: envelope.params.unwrap_or_default(),
                    };
                    if events.send(event).await.is_err() {
                        // Nobody listens any more: the connection is being closed.
                        break;
                    }
                }
            }
            reader_closed.cancel();
            // Every waiting call learns the connection is gone.
            if let Ok(mut p) = reader_pending.lock() {
                p.clear();
            }
        });
        Ok((
            Self {
                out,
                pending,
                next_id: Arc::new(AtomicU64::new(1)),
                closed,
            },
            events_rx,
        ))
    }

    /// Whether the connection is gone.
    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// End the connection.
    pub fn close(&self) {
        self.closed.cancel();
    }

    /// Send `method` with `params` (to target `session` when given) and wait for its answer.
    pub async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, BrowserError> {
        self.call_as(session, method, params, timeout).await
    }

    /// [`Self::call`] with the answer read into `T` (fields it does not name are skipped).
    pub async fn call_as<T: serde::de::DeserializeOwned>(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<T, BrowserError> {
        if self.is_closed() {
            return Err(BrowserError::Gone);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = Value::String(session.to_string());
        }
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id, tx);
        }
        let forget = || {
            if let Ok(mut p) = self.pending.lock() {
                p.remove(&id);
            }
        };
        if self.out.send(message.to_string()).await.is_err() {
            forget();
            return Err(BrowserError::Gone);
        }
        let text = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(text))) => text,
            Ok(Ok(Err(message))) => {
                return Err(BrowserError::Protocol(format!("{method}: {message}")));
            }
            Ok(Err(_)) => return Err(BrowserError::Gone),
            Err(_) => {
                forget();
                return Err(BrowserError::Timeout(format!(
                    "{method} got no answer within {}s",
                    timeout.as_secs_f64().ceil()
                )));
            }
        };
        serde_json::from_str::<Answer<T>>(&text)
            .map(|a| a.result)
            .map_err(|e| BrowserError::Protocol(format!("{method}: an answer not understood: {e}")))
    }
}
