//! Each chat's messages, in order: one worker task per active chat (session key) takes its
//! queue — at most [`QUEUE`] waiting, the rest refused with a visible reply — and ends as soon as
//! its queue is empty, so memory follows the chats that are talking, not every chat ever seen.
//! `/stop`, `/approve` and `/deny` act at once instead of waiting their turn. At most
//! [`MAX_RUNNING`] chats' messages are answered at once, across every platform; the others
//! wait their turn in order, so a burst from many chats costs the memory of that many turns,
//! not of one per chat. A chat that waits its turn costs little: its queue holds boxed rows
//! (a queue's slots are allocated 32 at a time) and its turn's state is allocated once it runs
//! — a burst of 1,000 new Slack threads, each a conversation of its own, waits in about half a
//! megabyte.

use std::{collections::HashMap, sync::Arc};

use tokio::sync::mpsc;

use super::{Gateway, Link, adapter::ChatRef};
use crate::store::{self, InboundRow, inbound_state};

/// Messages waiting per chat.
pub const QUEUE: usize = 32;
/// Chats answered at once (each holds a turn: its prompt, its model stream, its tools).
pub const MAX_RUNNING: usize = 16;
/// Marks an attachment line in a stored message (`kind:file_id:name`), fetched when it runs.
pub const ATTACHMENT_MARK: &str = "\u{1}attachment:";

/// The workers of the active chats.
pub struct Chats {
    workers: std::sync::Mutex<HashMap<String, mpsc::Sender<Box<InboundRow>>>>,
    /// One permit per answer under way (a fair semaphore: waiting chats go in order).
    running: Arc<tokio::sync::Semaphore>,
}

impl Default for Chats {
    fn default() -> Self {
        Self {
            workers: std::sync::Mutex::default(),
            running: Arc::new(tokio::sync::Semaphore::new(MAX_RUNNING)),
        }
    }
}

impl Chats {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::Sender<Box<InboundRow>>>> {
        match self.workers.lock() {
            Ok(map) => map,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Queue a stored message on its chat (commands that act at once run here).
    pub async fn queue(&self, gateway: &Arc<Gateway>, link: &Arc<Link>, row: InboundRow) {
        if super::commands::is_immediate(&row.text) {
            super::commands::run(gateway, link, &row).await;
            return;
        }
        if !super::commands::is_command(&row.text) && steered(gateway, link, &row).await {
            return;
        }
        self.enqueue(gateway, link, row).await;
    }

    /// Put a message on its chat's worker queue, starting the worker if none runs.
    async fn enqueue(&self, gateway: &Arc<Gateway>, link: &Arc<Link>, row: InboundRow) {
        let refused = {
            let mut workers = self.lock();
            let key = row.session_key.clone();
            let mut spawn = || {
                let (tx, rx) = mpsc::channel(QUEUE);
                tokio::spawn(work(Arc::clone(gateway), Arc::clone(link), key.clone(), rx));
                tx
            };
            let sender = workers.entry(key.clone()).or_insert_with(&mut spawn);
            match sender.try_send(Box::new(row)) {
                Ok(()) => None,
                Err(mpsc::error::TrySendError::Full(row)) => Some(row),
                // The worker ended between its last look and now: start another.
                Err(mpsc::error::TrySendError::Closed(row)) => {
                    let tx = spawn();
                    let refused = tx.try_send(row).err().map(|e| e.into_inner());
                    workers.insert(key, tx);
                    refused
                }
            }
        };
        if let Some(row) = refused {
            refuse(gateway, link, &row).await;
        }
    }
}

/// Apply the conversation's busy policy while a turn runs in it: `steer` hands the text to the
/// running turn (whose answer covers it), `interrupt` stops that turn so this one runs next,
/// `queue` (the default) waits. True when the message was steered in.
///
/// A steered message stays `running` until the turn takes it. If the turn ends first (stopped,
/// failed, or past its last look), the text comes back and is queued on its chat like any
/// message, so its answer reaches the chat; a stopping gateway leaves it `running`, and the
/// restart tells the chat. A message arriving in that instant may run before it.
async fn steered(gateway: &Arc<Gateway>, link: &Arc<Link>, row: &InboundRow) -> bool {
    let Ok(Some(session)) = super::reply::conversation(gateway, &row.session_key).await else {
        return false;
    };
    let Some(live) = gateway.runner.hub.get(&session.conversation_id) else {
        return false;
    };
    if !live.is_running() {
        return false;
    }
    match crate::agent::BusyPolicy::parse(&session.busy_policy) {
        Some(crate::agent::BusyPolicy::Steer) => {
            let Ok(returned) = live.steer_or_return(row.text.clone()) else {
                return false;
            };
            let conversation = session.conversation_id.clone();
            mark(gateway, row.id, inbound_state::RUNNING, Some(conversation)).await;
            let (gateway, link, row) = (Arc::clone(gateway), Arc::clone(link), row.clone());
            tokio::spawn(async move {
                match returned.await {
                    // The turn took it: its answer covers this message.
                    Err(_) => mark(&gateway, row.id, inbound_state::DONE, None).await,
                    Ok(_) if gateway.shutdown.is_cancelled() => {}
                    Ok(_) => {
                        tracing::info!(chat = %row.chat_id, "gateway: a steered message came back; it runs next");
                        gateway.chats.enqueue(&gateway, &link, row).await;
                    }
                }
            });
            true
        }
        Some(crate::agent::BusyPolicy::Interrupt) => {
            live.interrupt_for("a new message arrived");
            false
        }
        _ => false,
    }
}

async fn mark(gateway: &Arc<Gateway>, id: i64, state: &'static str, conversation: Option<String>) {
    let written = gateway
        .runner
        .store
        .write(move |tx| store::set_inbound_state(tx, id, state, conversation.as_deref()))
        .await;
    if let Err(e) = written {
        tracing::warn!(error = %e, id, state, "gateway: cannot mark a steered message");
    }
}

async fn refuse(gateway: &Arc<Gateway>, link: &Arc<Link>, row: &InboundRow) {
    tracing::warn!(chat = %row.chat_id, "gateway: a chat's queue is full; a message was refused");
    let id = row.id;
    let done = gateway
        .runner
        .store
        .write(move |tx| store::set_inbound_state(tx, id, inbound_state::DONE, None))
        .await;
    if let Err(e) = done {
        tracing::warn!(error = %e, "gateway: cannot mark a refused message");
    }
    let text = format!(
        "Too many messages are waiting ({QUEUE}); this one was not taken. Send it again once the agent has answered."
    );
    super::outbox::send_now(gateway, link, &chat_of(row), Some(row.id), &text).await;
}

/// The chat a stored message came from.
pub fn chat_of(row: &InboundRow) -> ChatRef {
    ChatRef {
        chat_id: row.chat_id.clone(),
        thread_id: row.thread_id.clone(),
    }
}

async fn work(
    gateway: Arc<Gateway>,
    link: Arc<Link>,
    key: String,
    mut rx: mpsc::Receiver<Box<InboundRow>>,
) {
    loop {
        let Ok(row) = rx.try_recv() else {
            // Nothing waits: the worker ends. Queueing checks the map under the same lock, so
            // a message sent meanwhile is either seen here or starts a new worker.
            let mut workers = gateway.chats.lock();
            if rx.is_empty() {
                workers.remove(&key);
                return;
            }
            continue;
        };
        if gateway.shutdown.is_cancelled() {
            gateway.chats.lock().remove(&key);
            return;
        }
        if super::commands::is_command(&row.text) {
            super::commands::run(&gateway, &link, &row).await;
        } else {
            let running = Arc::clone(&gateway.chats.running);
            let permit = tokio::select! {
                () = gateway.shutdown.cancelled() => {
                    gateway.chats.lock().remove(&key);
                    return;
                }
                permit = running.acquire_owned() => permit,
            };
            // Boxed: a chat waiting for its permit does not carry a turn's state.
            Box::pin(super::reply::answer(&gateway, &link, *row)).await;
            drop(permit);
        }
    }
}
