//! Writes to hermesd's database: session rows, their links and counters, and the
//! `hermes_imports` bookkeeping.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::{StoreError, convert, lineage::Lineage, source::SourceSession};

/// A `hermes_imports` row.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Bookkeeping {
    pub source_max_message_id: i64,
    pub source_max_compacted_id: i64,
    pub last_message_id: i64,
}

/// Every imported session's bookkeeping.
pub(super) fn load_bookkeeping(
    conn: &Connection,
) -> Result<HashMap<String, Bookkeeping>, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT session_id, source_max_message_id, source_max_compacted_id, last_message_id
             FROM hermes_imports",
        )
        .map_err(StoreError::sql("read import bookkeeping"))?;
    let rows = stmt
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                Bookkeeping {
                    source_max_message_id: row.get(1)?,
                    source_max_compacted_id: row.get(2)?,
                    last_message_id: row.get(3)?,
                },
            ))
        })
        .map_err(StoreError::sql("read import bookkeeping"))?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("read import bookkeeping"))
}

/// Record what has been imported of `session_id`.
pub(super) fn save_bookkeeping(
    conn: &Connection,
    session_id: &str,
    book: &Bookkeeping,
    now_ms: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO hermes_imports
           (session_id, source_max_message_id, source_max_compacted_id, last_message_id, imported_at)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (session_id) DO UPDATE SET
           source_max_message_id = excluded.source_max_message_id,
           source_max_compacted_id = excluded.source_max_compacted_id,
           last_message_id = excluded.last_message_id,
           imported_at = excluded.imported_at",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            session_id,
            book.source_max_message_id,
            book.source_max_compacted_id,
            book.last_message_id,
            now_ms
        ])
    })
    .map(drop)
    .map_err(StoreError::sql("record import bookkeeping"))
}

/// How an existing hermesd session is linked.
#[derive(Debug, Clone, Default)]
pub(super) struct Existing {
    pub parent: Option<String>,
    pub lineage: String,
    pub continued_by: Option<String>,
}

/// The hermesd session `id`, if there is one.
pub(super) fn existing(conn: &Connection, id: &str) -> Result<Option<Existing>, StoreError> {
    conn.prepare_cached(
        "SELECT parent_session_id, lineage, continued_by FROM sessions WHERE id = ?1",
    )
    .and_then(|mut stmt| {
        stmt.query_row([id], |row| {
            Ok(Existing {
                parent: row.get(0)?,
                lineage: row.get(1)?,
                continued_by: row.get(2)?,
            })
        })
        .optional()
    })
    .map_err(StoreError::sql("look up session"))
}

/// The highest message id of a hermesd session (0 when it has none).
pub(super) fn max_message_id(conn: &Connection, session_id: &str) -> Result<i64, StoreError> {
    conn.prepare_cached("SELECT coalesce(max(id), 0) FROM messages WHERE session_id = ?1")
        .and_then(|mut stmt| stmt.query_row([session_id], |row| row.get(0)))
        .map_err(StoreError::sql("look up session messages"))
}

/// A hermesd segment to create for a Python session.
pub(super) struct Segment<'a> {
    pub id: &'a str,
    pub parent: Option<&'a str>,
    pub lineage: &'a str,
    pub session: &'a SourceSession,
    /// The `-compacted` history segment: no counters of its own, ended by compression.
    pub archive: bool,
}

/// Insert a segment (counters and `updated_at` are settled by [`settle_counts`]).
pub(super) fn insert_segment(conn: &Connection, segment: &Segment<'_>) -> Result<(), StoreError> {
    let s = segment.session;
    let created = convert::millis(s.started_at);
    let (ended_at, end_reason, tokens, cost) = if segment.archive {
        (None, Some("compression"), [0; 5], None)
    } else {
        (
            s.ended_at.map(convert::millis),
            s.end_reason.as_deref(),
            s.tokens,
            s.cost_usd,
        )
    };
    conn.prepare_cached(
        "INSERT INTO sessions
           (id, parent_session_id, lineage, source, title, model, cwd, created_at, updated_at,
            ended_at, end_reason, input_tokens, output_tokens, cache_read_tokens,
            cache_write_tokens, reasoning_tokens, cost_usd)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            segment.id,
            segment.parent,
            segment.lineage,
            s.source,
            s.title,
            s.model.as_deref().unwrap_or(""),
            s.cwd.as_deref().unwrap_or(""),
            created,
            ended_at,
            end_reason,
            tokens[0],
            tokens[1],
            tokens[2],
            tokens[3],
            tokens[4],
            cost
        ])
    })
    .map(drop)
    .map_err(StoreError::sql("insert imported session"))
}

/// Set `id`'s newer compression segment.
pub(super) fn set_continued_by(conn: &Connection, id: &str, next: &str) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE sessions SET continued_by = ?2 WHERE id = ?1")
        .and_then(|mut stmt| stmt.execute([id, next]))
        .map(drop)
        .map_err(StoreError::sql("link compression segment"))
}

/// Put a new `-compacted` segment `archive` in the place of the imported session `live`
/// (same parent and lineage, inheriting whatever continued into `live`); `live` becomes its
/// compression continuation.
pub(super) fn insert_archive_before(
    conn: &Connection,
    archive: &str,
    live: &str,
    session: &SourceSession,
    live_link: &Existing,
) -> Result<(), StoreError> {
    insert_segment(
        conn,
        &Segment {
            id: archive,
            parent: live_link.parent.as_deref(),
            lineage: &live_link.lineage,
            session,
            archive: true,
        },
    )?;
    conn.execute(
        "UPDATE sessions SET continued_by = ?1 WHERE continued_by = ?2 AND id != ?1",
        [archive, live],
    )
    .map_err(StoreError::sql("relink compression segment"))?;
    conn.execute(
        "UPDATE sessions SET parent_session_id = ?1, lineage = ?2 WHERE id = ?3",
        [archive, Lineage::Compression.as_str(), live],
    )
    .map_err(StoreError::sql("relink compression segment"))?;
    set_continued_by(conn, archive, live)
}

/// Move every message of `from` to `to` (keeping ids, so order and search stay as they were).
pub(super) fn move_messages(conn: &Connection, from: &str, to: &str) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE messages SET session_id = ?2 WHERE session_id = ?1",
        [from, to],
    )
    .map(drop)
    .map_err(StoreError::sql("move compacted messages"))
}

/// Refresh an imported session's title, model, end and counters from a newer Python state.
pub(super) fn refresh_session(
    conn: &Connection,
    session: &SourceSession,
) -> Result<(), StoreError> {
    let t = session.tokens;
    conn.prepare_cached(
        "UPDATE sessions SET title = coalesce(?2, title), model = coalesce(?3, model),
             ended_at = ?4, end_reason = ?5, input_tokens = ?6, output_tokens = ?7,
             cache_read_tokens = ?8, cache_write_tokens = ?9, reasoning_tokens = ?10,
             cost_usd = coalesce(?11, cost_usd)
         WHERE id = ?1",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            session.id,
            session.title,
            session.model,
            session.ended_at.map(convert::millis),
            session.end_reason,
            t[0],
            t[1],
            t[2],
            t[3],
            t[4],
            session.cost_usd
        ])
    })
    .map(drop)
    .map_err(StoreError::sql("refresh imported session"))
}

/// Recount a segment's messages and set `updated_at` to its last message (else its end, else
/// its start); an archive segment also ends at its last message.
pub(super) fn settle_counts(conn: &Connection, id: &str, archive: bool) -> Result<(), StoreError> {
    let sql = if archive {
        "UPDATE sessions SET
             message_count = (SELECT count(*) FROM messages WHERE session_id = ?1),
             updated_at = coalesce((SELECT max(created_at) FROM messages WHERE session_id = ?1),
                                   created_at),
             ended_at = coalesce((SELECT max(created_at) FROM messages WHERE session_id = ?1),
                                 created_at)
         WHERE id = ?1"
    } else {
        "UPDATE sessions SET
             message_count = (SELECT count(*) FROM messages WHERE session_id = ?1),
             updated_at = coalesce((SELECT max(created_at) FROM messages WHERE session_id = ?1),
                                   ended_at, created_at)
         WHERE id = ?1"
    };
    conn.prepare_cached(sql)
        .and_then(|mut stmt| stmt.execute([id]))
        .map(drop)
        .map_err(StoreError::sql("count imported messages"))
}
