//! Webhook mode: an HTTP listener Telegram delivers updates to. A delivery must carry the
//! secret-token header (`X-Telegram-Bot-Api-Secret-Token`, compared in constant time) and is
//! answered 200 only once the update is stored, so Telegram re-delivers whatever the daemon did
//! not keep; a full queue answers 503 for the same reason.

use std::sync::Arc;

use axum::{
    Router,
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    routing::post,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::{addressing::Me, convert};
use crate::gateway::adapter::{Batch, PlatformError};

/// Deliveries waiting to be taken.
const QUEUE: usize = 256;
/// Largest delivery accepted.
const MAX_BODY: usize = 1 << 20;

type Delivery = (Value, oneshot::Sender<()>);

/// The running listener's queue.
pub struct Receiver {
    rx: mpsc::Receiver<Delivery>,
}

struct Shared {
    tx: mpsc::Sender<Delivery>,
    secret: String,
}

impl Receiver {
    /// Listen on `listen` (`host:port`) for deliveries carrying `secret`.
    pub async fn start(listen: &str, secret: &str) -> Result<Self, PlatformError> {
        if secret.len() < 8 {
            return Err(PlatformError::Fatal(
                "webhook mode needs TELEGRAM_WEBHOOK_SECRET (at least 8 characters), so only Telegram can deliver".into(),
            ));
        }
        let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| {
            PlatformError::Unavailable(format!("cannot listen for the webhook on {listen}: {e}"))
        })?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let shared = Arc::new(Shared {
            tx,
            secret: secret.to_string(),
        });
        let app = Router::new()
            .fallback(post(deliver))
            .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
            .with_state(shared);
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "telegram: the webhook listener stopped");
            }
        });
        tracing::info!(%listen, "telegram: webhook listener started");
        Ok(Self { rx })
    }

    /// The next deliveries (at least one), with their acknowledgements.
    pub async fn next_batch(&mut self, me: &Me) -> Result<Batch, PlatformError> {
        let Some(first) = self.rx.recv().await else {
            return Err(PlatformError::Unavailable(
                "the webhook listener stopped".into(),
            ));
        };
        let mut batch = Batch::default();
        let mut push = |(update, ack): Delivery| {
            if let Some(inbound) = convert::inbound(update, me) {
                batch.updates.push(inbound);
            }
            batch.stored.push(ack);
        };
        push(first);
        while let Ok(more) = self.rx.try_recv() {
            push(more);
        }
        Ok(batch)
    }
}

async fn deliver(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let given = headers
        .get("x-telegram-bot-api-secret-token")
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    if !crate::gateway::secret::same(given, shared.secret.as_bytes()) {
        return StatusCode::UNAUTHORIZED;
    }
    let Ok(update) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    let (ack, stored) = oneshot::channel();
    if shared.tx.try_send((update, ack)).is_err() {
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    match stored.await {
        Ok(()) => StatusCode::OK,
        // Not stored (the daemon is stopping, the store failed): Telegram delivers it again.
        Err(_) => StatusCode::SERVICE_UNAVAILABLE,
    }
}
