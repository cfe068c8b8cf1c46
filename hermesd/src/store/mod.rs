//! The daemon's SQLite database `hermesd.db`: one writer connection, a pool of readers, every call
//! on the blocking pool, WAL and incremental auto-vacuum, embedded append-only migrations.

mod api_responses;
mod branch;
mod chain;
mod cron;
mod error;
mod events;
mod gateway;
mod gateway_places;
pub mod hermes_import;
mod messages;
mod migrations;
mod pairing;
mod retention;
mod rewind;
pub mod search;
mod sessions;
mod skill_records;
mod webhook;

use std::{
    fs::OpenOptions,
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags, Transaction};

pub use api_responses::{api_response, delete_api_response, put_api_response};
pub use branch::branch_conversation;
pub use chain::{conversation_segments, start_compressed_segment};
pub use cron::{
    Advance, CronJobRow, CronRunRow, PENDING_MAX_AGE_MS, PENDING_MAX_ROWS, PendingDelivery,
    PrunedRun, RunForDelivery, add_pending_delivery, advance_cron_job, amend_cron_delivery,
    cron_job, cron_jobs, cron_run, cron_run_started, cron_runs, delete_cron_job, due_cron_jobs,
    expire_pending_deliveries, finish_cron_job_run, finish_cron_run, insert_cron_job,
    interrupt_leased_runs, lease_cron_run, link_cron_run_session, mark_cron_job_running,
    next_cron_due, pending_deliveries, pending_platforms, prune_cron_runs, record_cron_run,
    recover_cron_runs, run_for_delivery, running_cron_run, take_pending_delivery, update_cron_job,
};
pub use error::StoreError;
pub use events::{StoredEvent, events_after, put_event, reserve_seqs, seq_before_last_messages};
pub use gateway::{
    InboundRow, NewInbound, OutboxRow, gateway_route, inbound_in_state, inbound_state,
    last_inbound_text, outbox_add, outbox_set, outbox_state, outbox_unfinished, prune_gateway,
    set_gateway_route, set_inbound_state, set_inbound_thread, take_updates,
};
pub use gateway_places::{
    ChatPlace, chat_is_known, conversation_place, home, recent_places, set_home, set_route_place,
};
pub use messages::{
    MessageRow, NewMessage, append_message, list_messages, recent_exchange_messages,
    tool_result_in_conversation,
};
pub use pairing::{
    PairingRow, delete_pairing, pairing, pairing_failures, pairings, prune_pairing_requests,
    put_pairing, set_pairing_failures,
};
pub use retention::{delete_conversations, fts_merge_step, stale_conversations, vacuum_step};
pub use rewind::{Undone, undo_last_exchange};
pub use sessions::{
    Lineage, ListFilter, NewSession, SessionRow, delete_conversation, end_session, get_session,
    insert_session, insert_session_as, list_sessions, owned_sessions, resolve_conversation,
    resolve_reference, set_busy_policy, set_system_prompt, set_title, system_prompt,
};
pub use skill_records::{
    SkillRecord, delete_skill_record, put_skill_record, skill_record, skill_records,
};
pub use webhook::{
    Claim as WebhookClaim, MAX_BODIES_PER_ROUTE as MAX_WEBHOOK_BODIES_PER_ROUTE,
    Window as WebhookWindow, claim_webhook,
};

const READERS: u32 = 4;

/// Handle to the database; cheap to clone.
#[derive(Clone)]
pub struct Store {
    path: Arc<PathBuf>,
    readers: r2d2::Pool<SqliteConnectionManager>,
    writer: Arc<Mutex<Connection>>,
    /// Held (asynchronously) by the write whose turn it is.
    write_turn: Arc<tokio::sync::Mutex<()>>,
    /// One per reader connection.
    read_permits: Arc<tokio::sync::Semaphore>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Open (creating with mode 0600 if missing) and migrate. Blocking: call off the async runtime.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        create_private(path)?;
        let writer = Connection::open(path).map_err(|e| StoreError::open(path, e))?;
        configure_writer(&writer).map_err(|e| StoreError::open(path, e))?;
        search::register_functions(&writer).map_err(|e| StoreError::open(path, e))?;
        let found = migrations::version(&writer).map_err(|e| StoreError::open(path, e))?;
        if found > migrations::LATEST {
            return Err(StoreError::TooNew {
                path: path.display().to_string(),
                found,
                known: migrations::LATEST,
            });
        }
        migrations::apply(&writer).map_err(|e| StoreError::open(path, e))?;
        let manager = SqliteConnectionManager::file(path)
            .with_flags(OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .with_init(|c| {
                c.execute_batch("PRAGMA busy_timeout = 5000;")?;
                search::register_functions(c)
            });
        let readers = r2d2::Pool::builder()
            .max_size(READERS)
            .min_idle(Some(0))
            .build_unchecked(manager);
        Ok(Self {
            path: Arc::new(path.to_path_buf()),
            readers,
            writer: Arc::new(Mutex::new(writer)),
            write_turn: Arc::new(tokio::sync::Mutex::new(())),
            read_permits: Arc::new(tokio::sync::Semaphore::new(READERS as usize)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Size of the database and its WAL on disk.
    pub fn size_bytes(&self) -> u64 {
        let wal = PathBuf::from(format!("{}-wal", self.path.display()));
        [self.path.as_path(), wal.as_path()]
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }

    /// Run `f` on a reader connection on the blocking pool.
    pub async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        // At most as many reads on the blocking pool as there are reader connections.
        let _permit = self
            .read_permits
            .acquire()
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?;
        let pool = self.readers.clone();
        let path = Arc::clone(&self.path);
        tokio::task::spawn_blocking(move || {
            let conn = pool.get().map_err(|e| StoreError::Pool {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
            f(&conn)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Run `f` in one transaction on the writer connection on the blocking pool; committed when
    /// `f` returns Ok, rolled back otherwise.
    pub async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        // Writers wait their turn here, parked, rather than each holding a blocking-pool thread
        // while it waits for the one connection (100 chats writing at once made 150 threads).
        let _turn = self.write_turn.lock().await;
        let writer = Arc::clone(&self.writer);
        tokio::task::spawn_blocking(move || {
            let mut conn = writer
                .lock()
                .map_err(|_| StoreError::Task("writer connection poisoned".into()))?;
            let tx = conn.transaction().map_err(StoreError::sql("begin"))?;
            let value = f(&tx)?;
            let committing = std::time::Instant::now();
            tx.commit().map_err(StoreError::sql("commit"))?;
            // The commit's own time is the WAL fsync under synchronous = FULL (bench-agent
            // reads these lines at debug level).
            tracing::debug!(
                commit_us = committing.elapsed().as_micros() as u64,
                "commit"
            );
            Ok(value)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Give back the page caches of the connections not in use (after idle sessions were
    /// evicted): `PRAGMA shrink_memory` on the writer and on every idle reader. Blocking.
    pub fn release_memory_blocking(&self) {
        if let Ok(conn) = self.writer.try_lock() {
            let _ = conn.execute_batch("PRAGMA shrink_memory;");
        }
        let mut idle = Vec::new();
        while let Some(conn) = self.readers.try_get() {
            let _ = conn.execute_batch("PRAGMA shrink_memory;");
            idle.push(conn);
        }
    }

    /// Run a blocking closure with the writer connection outside a transaction (maintenance).
    pub fn with_writer_blocking<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self
            .writer
            .lock()
            .map_err(|_| StoreError::Task("writer connection poisoned".into()))?;
        f(&mut conn)
    }
}

/// Create the file with mode 0600 before SQLite does (SQLite gives -wal/-shm the same mode).
fn create_private(path: &Path) -> Result<(), StoreError> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map(drop)
        .map_err(|e| StoreError::Unreadable {
            path: path.display().to_string(),
            source: e,
        })
}

fn configure_writer(conn: &Connection) -> rusqlite::Result<()> {
    // auto_vacuum must be chosen before the first table exists; on an existing database it is a no-op.
    // synchronous = FULL: in WAL mode NORMAL may lose the last commits on power loss, and what
    // a commit holds (a message, the events clients were shown) must survive it. The cost is one
    // fsync of the WAL per commit, which the publisher's batching keeps to a few per turn.
    conn.execute_batch(
        "PRAGMA auto_vacuum = INCREMENTAL;
         PRAGMA journal_mode = WAL;
         PRAGMA synchronous = FULL;
         PRAGMA foreign_keys = ON;
         PRAGMA busy_timeout = 5000;",
    )
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[cfg(test)]
mod tests;
