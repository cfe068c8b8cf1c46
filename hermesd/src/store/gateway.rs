//! The gateway's tables: which conversation each chat routes to, the inbound messages taken from allowed users (one row per platform update, so a
//! re-delivered update is never taken twice), and the outbox of replies (recorded before they
//! are sent, so a restart knows what was sent, what was only attempted, and what is left).

use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

use super::{StoreError, now_ms};

pub(super) const GATEWAY_MIGRATION: &str = r#"
CREATE TABLE gateway_routes (
    session_key TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE TABLE gateway_inbound (
    id INTEGER PRIMARY KEY,
    platform TEXT NOT NULL,
    update_id INTEGER NOT NULL,
    session_key TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    thread_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL,
    message_id TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    state TEXT NOT NULL,
    session_id TEXT,
    received_at INTEGER NOT NULL,
    UNIQUE (platform, update_id)
);
CREATE INDEX gateway_inbound_state ON gateway_inbound (platform, state);
CREATE TABLE gateway_outbox (
    id INTEGER PRIMARY KEY,
    inbound_id INTEGER,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    thread_id TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    state TEXT NOT NULL,
    message_id TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX gateway_outbox_state ON gateway_outbox (platform, state);
CREATE TABLE gateway_pairing (
    platform TEXT NOT NULL,
    user_id TEXT NOT NULL,
    user_name TEXT NOT NULL DEFAULT '',
    code_hash TEXT,
    approved INTEGER NOT NULL DEFAULT 0,
    requested_at INTEGER NOT NULL,
    expires_at INTEGER,
    approved_at INTEGER,
    PRIMARY KEY (platform, user_id)
);
CREATE TABLE gateway_pairing_failures (
    platform TEXT PRIMARY KEY,
    failures INTEGER NOT NULL DEFAULT 0,
    locked_until INTEGER
);
"#;

/// How far an inbound message has got.
pub mod inbound_state {
    /// Stored; its turn (or command) has not started.
    pub const RECEIVED: &str = "received";
    /// Its turn started; the answer has not been delivered.
    pub const RUNNING: &str = "running";
    /// Answered (or handled).
    pub const DONE: &str = "done";
    /// Its turn was cut (a crash or a stop); the chat was told.
    pub const INTERRUPTED: &str = "interrupted";
}

/// How far an outbox message has got.
pub mod outbox_state {
    /// Recorded, never handed to the platform.
    pub const PENDING: &str = "pending";
    /// Handed to the platform; no acknowledgement yet (it may or may not have arrived).
    pub const ATTEMPTED: &str = "attempted";
    /// Acknowledged with a message id; a streamed answer is still being edited into it.
    pub const STREAMING: &str = "streaming";
    /// The final text is recorded; the edit that puts it into `message_id` is not acknowledged.
    pub const FINAL: &str = "final";
    /// Delivered.
    pub const DONE: &str = "done";
}

/// An inbound message from an allowed user, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundRow {
    pub id: i64,
    pub platform: String,
    pub update_id: i64,
    pub session_key: String,
    pub chat_id: String,
    pub thread_id: String,
    pub user_id: String,
    /// The sender's name and the chat's title, as the platform gave them.
    pub user_name: String,
    pub chat_name: String,
    pub message_id: String,
    pub text: String,
    pub state: String,
    pub session_id: Option<String>,
    pub received_at: i64,
}

/// An inbound message to store (`id`, `state` and `received_at` are the store's).
#[derive(Debug, Clone, Default)]
pub struct NewInbound {
    pub update_id: i64,
    pub session_key: String,
    pub chat_id: String,
    pub thread_id: String,
    pub user_id: String,
    pub user_name: String,
    pub chat_name: String,
    pub message_id: String,
    pub text: String,
}

/// A reply in the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    pub id: i64,
    pub inbound_id: Option<i64>,
    pub platform: String,
    pub chat_id: String,
    pub thread_id: String,
    pub text: String,
    pub state: String,
    pub message_id: Option<String>,
}

const INBOUND_COLUMNS: &str = "id, platform, update_id, session_key, chat_id, thread_id, user_id, \
     message_id, text, state, session_id, received_at, user_name, chat_name";

fn inbound_row(row: &Row<'_>) -> rusqlite::Result<InboundRow> {
    Ok(InboundRow {
        id: row.get(0)?,
        platform: row.get(1)?,
        update_id: row.get(2)?,
        session_key: row.get(3)?,
        chat_id: row.get(4)?,
        thread_id: row.get(5)?,
        user_id: row.get(6)?,
        message_id: row.get(7)?,
        text: row.get(8)?,
        state: row.get(9)?,
        session_id: row.get(10)?,
        received_at: row.get(11)?,
        user_name: row.get(12)?,
        chat_name: row.get(13)?,
    })
}

const OUTBOX_COLUMNS: &str =
    "id, inbound_id, platform, chat_id, thread_id, text, state, message_id";

fn outbox_row(row: &Row<'_>) -> rusqlite::Result<OutboxRow> {
    Ok(OutboxRow {
        id: row.get(0)?,
        inbound_id: row.get(1)?,
        platform: row.get(2)?,
        chat_id: row.get(3)?,
        thread_id: row.get(4)?,
        text: row.get(5)?,
        state: row.get(6)?,
        message_id: row.get(7)?,
    })
}

/// Store a batch of updates of `platform`, in the caller's transaction. Updates already stored
/// (a re-delivery) are skipped; returns the rows taken now. The platform's own offset is what
/// confirms updates, and it moves only after this commits: the store never needs its own.
pub fn take_updates(
    tx: &Transaction<'_>,
    platform: &str,
    messages: &[NewInbound],
) -> Result<Vec<InboundRow>, StoreError> {
    const CTX: &str = "store an inbound message";
    let now = now_ms();
    let mut taken = Vec::new();
    for message in messages {
        let inserted = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO gateway_inbound (platform, update_id, session_key, chat_id,
                     thread_id, user_id, message_id, text, state, received_at, user_name,
                     chat_name)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    platform,
                    message.update_id,
                    message.session_key,
                    message.chat_id,
                    message.thread_id,
                    message.user_id,
                    message.message_id,
                    message.text,
                    inbound_state::RECEIVED,
                    now,
                    message.user_name,
                    message.chat_name
                ])
            })
            .map_err(StoreError::sql(CTX))?;
        if inserted == 1 {
            let id = tx.last_insert_rowid();
            taken.push(inbound_by_id(tx, id)?);
        }
    }
    Ok(taken)
}

fn inbound_by_id(conn: &Connection, id: i64) -> Result<InboundRow, StoreError> {
    conn.query_row(
        &format!("SELECT {INBOUND_COLUMNS} FROM gateway_inbound WHERE id = ?1"),
        [id],
        inbound_row,
    )
    .map_err(StoreError::sql("read an inbound message"))
}

/// Inbound messages of `platform` in `state`, oldest first.
pub fn inbound_in_state(
    conn: &Connection,
    platform: &str,
    state: &str,
) -> Result<Vec<InboundRow>, StoreError> {
    const CTX: &str = "list inbound messages";
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {INBOUND_COLUMNS} FROM gateway_inbound
              WHERE platform = ?1 AND state = ?2 ORDER BY id"
        ))
        .map_err(StoreError::sql(CTX))?;
    stmt.query_map([platform, state], inbound_row)
        .map_err(StoreError::sql(CTX))?
        .collect::<Result<_, _>>()
        .map_err(StoreError::sql(CTX))
}

/// Move an inbound message on (and record the conversation it went to, when known).
pub fn set_inbound_state(
    tx: &Transaction<'_>,
    id: i64,
    state: &str,
    session_id: Option<&str>,
) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE gateway_inbound SET state = ?2, session_id = coalesce(?3, session_id) WHERE id = ?1",
        params![id, state, session_id],
    )
    .map_err(StoreError::sql("update an inbound message"))?;
    Ok(())
}

/// Move inbound message `id` into the thread `thread_id` opened for its answer, and so into
/// the conversation `session_key`.
pub fn set_inbound_thread(
    tx: &Transaction<'_>,
    id: i64,
    thread_id: &str,
    session_key: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE gateway_inbound SET thread_id = ?2, session_key = ?3 WHERE id = ?1",
        params![id, thread_id, session_key],
    )
    .map_err(StoreError::sql("move an inbound message into its thread"))?;
    Ok(())
}

/// The newest inbound text of the chat `session_key` before `before_id` that is not a command
/// (what `/retry` sends again).
pub fn last_inbound_text(
    conn: &Connection,
    session_key: &str,
    before_id: i64,
) -> Result<Option<String>, StoreError> {
    conn.query_row(
        "SELECT text FROM gateway_inbound
          WHERE session_key = ?1 AND id < ?2 AND substr(text, 1, 1) != '/'
          ORDER BY id DESC LIMIT 1",
        params![session_key, before_id],
        |row| row.get(0),
    )
    .optional()
    .map_err(StoreError::sql("read the last inbound message"))
}

/// The conversation the chat `session_key` routes to.
pub fn gateway_route(conn: &Connection, session_key: &str) -> Result<Option<String>, StoreError> {
    conn.query_row(
        "SELECT session_id FROM gateway_routes WHERE session_key = ?1",
        [session_key],
        |row| row.get(0),
    )
    .optional()
    .map_err(StoreError::sql("read a gateway route"))
}

/// Route the chat `session_key` to `session_id` from now on.
pub fn set_gateway_route(
    tx: &Transaction<'_>,
    session_key: &str,
    session_id: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO gateway_routes (session_key, session_id, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id,
             updated_at = excluded.updated_at",
        params![session_key, session_id, now_ms()],
    )
    .map_err(StoreError::sql("store a gateway route"))?;
    Ok(())
}

/// Record a reply before it is sent; returns its outbox id.
pub fn outbox_add(
    tx: &Transaction<'_>,
    platform: &str,
    inbound_id: Option<i64>,
    chat_id: &str,
    thread_id: &str,
    text: &str,
    state: &str,
) -> Result<i64, StoreError> {
    let now = now_ms();
    tx.execute(
        "INSERT INTO gateway_outbox (inbound_id, platform, chat_id, thread_id, text, state,
             created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
        params![inbound_id, platform, chat_id, thread_id, text, state, now],
    )
    .map_err(StoreError::sql("record an outgoing message"))?;
    Ok(tx.last_insert_rowid())
}

/// Move an outbox message on; `text` and `message_id` are kept when `None`.
pub fn outbox_set(
    tx: &Transaction<'_>,
    id: i64,
    state: &str,
    text: Option<&str>,
    message_id: Option<&str>,
) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE gateway_outbox SET state = ?2, text = coalesce(?3, text),
             message_id = coalesce(?4, message_id), updated_at = ?5 WHERE id = ?1",
        params![id, state, text, message_id, now_ms()],
    )
    .map_err(StoreError::sql("update an outgoing message"))?;
    Ok(())
}

/// Outbox messages of `platform` not delivered yet, oldest first.
pub fn outbox_unfinished(conn: &Connection, platform: &str) -> Result<Vec<OutboxRow>, StoreError> {
    const CTX: &str = "list outgoing messages";
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {OUTBOX_COLUMNS} FROM gateway_outbox
              WHERE platform = ?1 AND state != ?2 ORDER BY id"
        ))
        .map_err(StoreError::sql(CTX))?;
    stmt.query_map([platform, outbox_state::DONE], outbox_row)
        .map_err(StoreError::sql(CTX))?
        .collect::<Result<_, _>>()
        .map_err(StoreError::sql(CTX))
}

/// Forget outbox and inbound messages older than `before_ms`, whatever their state (one left
/// unfinished that long is never to be finished: a restart must not send a week-old reply or
/// notice), and routes to conversations that no longer exist; returns how many rows went.
pub fn prune_gateway(tx: &Transaction<'_>, before_ms: i64) -> Result<usize, StoreError> {
    const CTX: &str = "prune the gateway's tables";
    let outbox = tx
        .execute(
            "DELETE FROM gateway_outbox WHERE updated_at < ?1",
            [before_ms],
        )
        .map_err(StoreError::sql(CTX))?;
    let inbound = tx
        .execute(
            "DELETE FROM gateway_inbound WHERE received_at < ?1",
            [before_ms],
        )
        .map_err(StoreError::sql(CTX))?;
    let routes = tx
        .execute(
            "DELETE FROM gateway_routes
              WHERE session_id NOT IN (SELECT id FROM sessions)",
            [],
        )
        .map_err(StoreError::sql(CTX))?;
    Ok(outbox + inbound + routes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn message(update_id: i64) -> NewInbound {
        NewInbound {
            update_id,
            session_key: "agent:main:telegram:dm:42".into(),
            chat_id: "42".into(),
            user_id: "42".into(),
            text: format!("message {update_id}"),
            ..NewInbound::default()
        }
    }

    #[tokio::test]
    async fn a_redelivered_update_is_taken_once_and_old_rows_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let first = store
            .write(|tx| take_updates(tx, "telegram", &[message(1), message(2)]))
            .await
            .unwrap();
        assert_eq!(first.len(), 2);
        let again = store
            .write(|tx| take_updates(tx, "telegram", &[message(2), message(3)]))
            .await
            .unwrap();
        assert_eq!(again.iter().map(|r| r.update_id).collect::<Vec<_>>(), [3]);
        let ids: Vec<i64> = first.iter().map(|r| r.id).collect();
        store
            .write(move |tx| {
                for id in ids {
                    set_inbound_state(tx, id, inbound_state::DONE, None)?;
                }
                let out = outbox_add(tx, "telegram", None, "42", "", "hi", outbox_state::PENDING)?;
                outbox_set(tx, out, outbox_state::DONE, None, Some("7"))
            })
            .await
            .unwrap();
        let kept = store
            .write(|tx| prune_gateway(tx, now_ms() - 60_000))
            .await
            .unwrap();
        assert_eq!(kept, 0, "nothing is older than the cutoff");
        let pruned = store
            .write(|tx| prune_gateway(tx, now_ms() + 1))
            .await
            .unwrap();
        assert_eq!(pruned, 4, "three messages, one reply, finished or not");
        let left = store
            .read(|conn| inbound_in_state(conn, "telegram", inbound_state::RECEIVED))
            .await
            .unwrap();
        assert!(left.is_empty());
        // Pruned ids can come again only as new rows: de-duplication lasts as long as rows do.
    }
}
