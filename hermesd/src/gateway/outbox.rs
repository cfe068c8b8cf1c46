//! Delivering outbox rows. A row is recorded before it is sent, marked `attempted` as the send
//! goes out, and `done` with the platform's message id when acknowledged. A refused or failed
//! request is retried (a 429 after its `retry_after`, a 5xx with a short backoff), but a send that
//! went out and got no answer is not: it may have arrived, and only a restart re-sends it, once,
//! marked. Edits put a known text into a known message, so they are safe to repeat.

use std::{sync::Arc, time::Duration};

use super::{
    Gateway, Link, PlatformError,
    adapter::{ChatRef, Outgoing},
    split,
};
use crate::store::{self, OutboxRow, StoreError, outbox_state};

/// Attempts of one request that was refused (rate limits, 5xx) before it is given up.
const ATTEMPTS: u32 = 5;

/// Record `text` for `chat` (split at the platform's limit) and deliver it now.
pub async fn send_now(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    chat: &ChatRef,
    inbound_id: Option<i64>,
    text: &str,
) {
    let caps = link.adapter.capabilities();
    let pieces = split::split(text, caps.max_len, caps.measure);
    let rows = record(gateway, link, chat, inbound_id, pieces).await;
    match rows {
        Ok(rows) => {
            for row in rows {
                deliver(gateway, link, row).await;
            }
        }
        Err(e) => tracing::error!(error = %e, "gateway: a reply could not be recorded"),
    }
}

/// Record `pieces` as pending rows, in order.
pub async fn record(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    chat: &ChatRef,
    inbound_id: Option<i64>,
    pieces: Vec<String>,
) -> Result<Vec<OutboxRow>, StoreError> {
    let platform = link.platform();
    let chat = chat.clone();
    gateway
        .runner
        .store
        .write(move |tx| record_rows(tx, platform, &chat, inbound_id, pieces))
        .await
}

/// Record `pieces` as pending rows, in order, inside the caller's transaction.
pub fn record_rows(
    tx: &rusqlite::Transaction<'_>,
    platform: &'static str,
    chat: &ChatRef,
    inbound_id: Option<i64>,
    pieces: Vec<String>,
) -> Result<Vec<OutboxRow>, StoreError> {
    let mut rows = Vec::new();
    for text in pieces {
        let id = store::outbox_add(
            tx,
            platform,
            inbound_id,
            &chat.chat_id,
            &chat.thread_id,
            &text,
            outbox_state::PENDING,
        )?;
        rows.push(OutboxRow {
            id,
            inbound_id,
            platform: platform.to_string(),
            chat_id: chat.chat_id.clone(),
            thread_id: chat.thread_id.clone(),
            text,
            state: outbox_state::PENDING.to_string(),
            message_id: None,
        });
    }
    Ok(rows)
}

/// Move a row on in the store (a failure is logged: the row is then finished at the restart).
pub async fn mark(
    gateway: &Gateway,
    id: i64,
    state: &'static str,
    text: Option<String>,
    message_id: Option<String>,
) {
    let result = gateway
        .runner
        .store
        .write(move |tx| store::outbox_set(tx, id, state, text.as_deref(), message_id.as_deref()))
        .await;
    if let Err(e) = result {
        tracing::error!(outbox = id, error = %e, "gateway: cannot record a delivery");
    }
}

fn chat_of(row: &OutboxRow) -> ChatRef {
    ChatRef {
        chat_id: row.chat_id.clone(),
        thread_id: row.thread_id.clone(),
    }
}

/// Deliver a pending row (send) or a final row (edit its message); returns the message id.
pub async fn deliver(gateway: &Arc<Gateway>, link: &Arc<Link>, row: OutboxRow) -> Option<String> {
    let chat = chat_of(&row);
    let message = Outgoing::text(row.text.clone());
    if let Some(message_id) = row.message_id.clone() {
        let edited = retrying(gateway, link, true, || {
            link.adapter.edit(&chat, &message_id, &message)
        })
        .await;
        finish(gateway, link, &row, edited.map(|()| message_id)).await
    } else {
        mark(gateway, row.id, outbox_state::ATTEMPTED, None, None).await;
        let sent = retrying(gateway, link, false, || link.adapter.send(&chat, &message)).await;
        finish(gateway, link, &row, sent).await
    }
}

async fn finish(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    row: &OutboxRow,
    result: Result<String, PlatformError>,
) -> Option<String> {
    match result {
        Ok(message_id) => {
            link.status.sent();
            mark(
                gateway,
                row.id,
                outbox_state::DONE,
                None,
                Some(message_id.clone()),
            )
            .await;
            Some(message_id)
        }
        Err(PlatformError::NoAnswer) => {
            // It may have arrived: left `attempted`, re-sent once (marked) after a restart.
            tracing::warn!(
                outbox = row.id,
                "gateway: a send got no answer; not repeated"
            );
            link.status.note_error("a send got no answer; not repeated");
            None
        }
        Err(e) => {
            tracing::warn!(outbox = row.id, error = %e, "gateway: a message was not delivered");
            link.status.note_error(&e.to_string());
            mark(gateway, row.id, outbox_state::DONE, None, None).await;
            None
        }
    }
}

/// Run `call` again while the platform refuses it for a while (429, 5xx); an edit (`repeatable`)
/// is also repeated when no answer came.
pub async fn retrying<T, F, Fut>(
    gateway: &Gateway,
    link: &Link,
    repeatable: bool,
    mut call: F,
) -> Result<T, PlatformError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, PlatformError>>,
{
    let mut pause = Duration::from_millis(500);
    let mut attempt = 1;
    loop {
        let result = call().await;
        let wait = match &result {
            Err(PlatformError::RateLimited(wait)) => *wait,
            Err(PlatformError::Unavailable(_)) => pause,
            Err(PlatformError::NoAnswer) if repeatable => pause,
            _ => return result,
        };
        if attempt >= ATTEMPTS {
            return result;
        }
        attempt += 1;
        pause *= 2;
        if let Err(e) = &result {
            link.status.note_error(&e.to_string());
        }
        tokio::select! {
            () = gateway.shutdown.cancelled() => return result,
            () = tokio::time::sleep(wait) => {}
        }
    }
}
