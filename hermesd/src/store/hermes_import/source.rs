//! Reading a Python Hermes `state.db` of any schema version (v6 … v30): which columns exist,
//! the sessions, and per-session message statistics.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use super::{StoreError, convert};

/// The columns a source database has, and its recorded schema version.
#[derive(Debug)]
pub(super) struct Schema {
    pub version: Option<i64>,
    session_columns: HashSet<String>,
    message_columns: HashSet<String>,
}

impl Schema {
    /// `name` when `sessions` has that column, else the SQL `fallback` expression.
    fn session<'a>(&self, name: &'a str, fallback: &'a str) -> &'a str {
        if self.session_columns.contains(name) {
            name
        } else {
            fallback
        }
    }

    /// `name` when `messages` has that column, else the SQL `fallback` expression.
    pub fn message<'a>(&self, name: &'a str, fallback: &'a str) -> &'a str {
        if self.message_columns.contains(name) {
            name
        } else {
            fallback
        }
    }

    /// Whether `messages` records in-place compaction.
    pub fn has_compaction(&self) -> bool {
        self.message_columns.contains("compacted")
    }
}

const REQUIRED_SESSION_COLUMNS: [&str; 2] = ["id", "started_at"];
const REQUIRED_MESSAGE_COLUMNS: [&str; 4] = ["id", "session_id", "role", "timestamp"];

fn not_hermes(conn: &Connection, detail: String) -> StoreError {
    StoreError::ImportSource {
        path: conn.path().unwrap_or("state.db").to_string(),
        detail,
    }
}

/// Why a file could not be read, in words that say what to do.
pub(super) fn unreadable(e: &rusqlite::Error) -> String {
    use rusqlite::ErrorCode::{CannotOpen, DatabaseBusy, DatabaseLocked, PermissionDenied};
    match e.sqlite_error_code() {
        Some(DatabaseBusy | DatabaseLocked) => {
            format!("it stayed locked by another process (Python Hermes?) for 5 s ({e}); try again")
        }
        Some(CannotOpen | PermissionDenied) => format!("it cannot be opened for reading ({e})"),
        _ => format!("not a readable SQLite database ({e})"),
    }
}

fn columns(conn: &Connection, table: &str) -> Result<HashSet<String>, StoreError> {
    conn.prepare(&format!("PRAGMA table_info(\"{table}\")"))
        .and_then(|mut stmt| {
            stmt.query_map([], |row| row.get::<_, String>(1))?
                .collect::<Result<HashSet<_>, _>>()
        })
        .map_err(|e| not_hermes(conn, unreadable(&e)))
}

/// Check that `conn` holds a Hermes state.db and learn its columns and version.
pub(super) fn inspect(conn: &Connection) -> Result<Schema, StoreError> {
    let session_columns = columns(conn, "sessions")?;
    let message_columns = columns(conn, "messages")?;
    if session_columns.is_empty() || message_columns.is_empty() {
        return Err(not_hermes(
            conn,
            "it has no `sessions` and `messages` tables, so it is not a Hermes state.db".into(),
        ));
    }
    let missing: Vec<String> = REQUIRED_SESSION_COLUMNS
        .iter()
        .filter(|c| !session_columns.contains(**c))
        .map(|c| format!("sessions.{c}"))
        .chain(
            REQUIRED_MESSAGE_COLUMNS
                .iter()
                .filter(|c| !message_columns.contains(**c))
                .map(|c| format!("messages.{c}")),
        )
        .collect();
    if !missing.is_empty() {
        return Err(not_hermes(
            conn,
            format!("it lacks the Hermes columns {}", missing.join(", ")),
        ));
    }
    let has_version_table: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version')",
            [],
            |row| row.get(0),
        )
        .map_err(StoreError::sql("read the Hermes schema"))?;
    let version = if has_version_table {
        conn.query_row("SELECT max(version) FROM schema_version", [], |row| {
            row.get::<_, Option<i64>>(0)
        })
        .optional()
        .map_err(StoreError::sql("read the Hermes schema version"))?
        .flatten()
    } else {
        None
    };
    Ok(Schema {
        version,
        session_columns,
        message_columns,
    })
}

/// How Python marked a child session at creation (`model_config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Marker {
    #[default]
    None,
    Branched,
    Delegated,
}

/// One row of Python's `sessions`, reduced to what hermesd keeps.
#[derive(Debug, Clone, Default)]
pub(super) struct SourceSession {
    pub id: String,
    pub source: String,
    pub model: Option<String>,
    pub parent: Option<String>,
    pub marker: Marker,
    pub started_at: f64,
    pub ended_at: Option<f64>,
    pub end_reason: Option<String>,
    pub title: Option<String>,
    pub cwd: Option<String>,
    /// input, output, cache read, cache write, reasoning.
    pub tokens: [i64; 5],
    pub cost_usd: Option<f64>,
}

fn marker(model_config: Option<&str>) -> Marker {
    let Some(config) = model_config.and_then(|c| serde_json::from_str::<Value>(c).ok()) else {
        return Marker::None;
    };
    let set = |key: &str| config.get(key).is_some_and(|v| !v.is_null());
    if set("_delegate_from") {
        Marker::Delegated
    } else if set("_branched_from") {
        Marker::Branched
    } else {
        Marker::None
    }
}

/// Every session, in no particular order.
pub(super) fn read_sessions(
    conn: &Connection,
    schema: &Schema,
) -> Result<Vec<SourceSession>, StoreError> {
    let s = |name, fallback| schema.session(name, fallback);
    let sql = format!(
        "SELECT id, {}, {}, {}, {}, started_at, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {} \
         FROM sessions WHERE id IS NOT NULL AND id != ''",
        s("source", "NULL"),
        s("model", "NULL"),
        s("model_config", "NULL"),
        s("parent_session_id", "NULL"),
        s("ended_at", "NULL"),
        s("end_reason", "NULL"),
        s("title", "NULL"),
        s("cwd", "NULL"),
        s("input_tokens", "0"),
        s("output_tokens", "0"),
        s("cache_read_tokens", "0"),
        s("cache_write_tokens", "0"),
        s("reasoning_tokens", "0"),
        s("actual_cost_usd", "NULL"),
        s("estimated_cost_usd", "NULL"),
    );
    let mut stmt = conn
        .prepare(&sql)
        .map_err(StoreError::sql("read Hermes sessions"))?;
    let rows = stmt
        .query_map([], |row| {
            let text = |i: usize| -> rusqlite::Result<Option<String>> {
                Ok(convert::text(row.get_ref(i)?).map(|t| t.into_owned()))
            };
            let number = |i: usize| -> rusqlite::Result<i64> {
                Ok(convert::real(row.get_ref(i)?).map_or(0, |n| n as i64))
            };
            let model_config = text(3)?;
            Ok(SourceSession {
                id: text(0)?.unwrap_or_default(),
                source: text(1)?.unwrap_or_else(|| "unknown".into()),
                model: text(2)?,
                parent: text(4)?.filter(|p| !p.is_empty()),
                marker: marker(model_config.as_deref()),
                started_at: convert::real(row.get_ref(5)?).unwrap_or(0.0),
                ended_at: convert::real(row.get_ref(6)?),
                end_reason: text(7)?,
                title: text(8)?.filter(|t| !t.trim().is_empty()),
                cwd: text(9)?,
                tokens: [
                    number(10)?,
                    number(11)?,
                    number(12)?,
                    number(13)?,
                    number(14)?,
                ],
                cost_usd: convert::real(row.get_ref(15)?).or(convert::real(row.get_ref(16)?)),
            })
        })
        .map_err(StoreError::sql("read Hermes sessions"))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(StoreError::sql("read Hermes sessions"))
}

/// What the source holds for one session's messages.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct MessageStats {
    /// Highest message id (0 when none).
    pub max_id: i64,
    /// Highest id of a row archived by in-place compaction.
    pub max_compacted_id: Option<i64>,
    /// Time of the newest message, epoch seconds.
    pub last_at: Option<f64>,
}

/// Message statistics per session id.
pub(super) fn message_stats(
    conn: &Connection,
    schema: &Schema,
) -> Result<HashMap<String, MessageStats>, StoreError> {
    let compacted = if schema.has_compaction() {
        format!(
            "max(CASE WHEN compacted = 1 AND {} = 0 THEN id END)",
            schema.message("active", "0")
        )
    } else {
        "NULL".to_string()
    };
    let sql = format!(
        "SELECT session_id, max(id), {compacted}, max(timestamp) FROM messages GROUP BY session_id"
    );
    let mut stmt = conn
        .prepare(&sql)
        .map_err(StoreError::sql("count Hermes messages"))?;
    let mut rows = stmt
        .query([])
        .map_err(StoreError::sql("count Hermes messages"))?;
    let mut stats = HashMap::new();
    while let Some(row) = rows
        .next()
        .map_err(StoreError::sql("count Hermes messages"))?
    {
        let Some(id) = convert::text(
            row.get_ref(0)
                .map_err(StoreError::sql("count Hermes messages"))?,
        ) else {
            continue;
        };
        let entry = MessageStats {
            max_id: row.get::<_, Option<i64>>(1).ok().flatten().unwrap_or(0),
            max_compacted_id: row.get::<_, Option<i64>>(2).ok().flatten(),
            last_at: row.get_ref(3).ok().and_then(convert::real),
        };
        stats.insert(id.into_owned(), entry);
    }
    Ok(stats)
}

/// How many rows of `session_id` have an id above `after`.
pub(super) fn count_after(
    conn: &Connection,
    session_id: &str,
    after: i64,
) -> Result<usize, StoreError> {
    conn.prepare_cached("SELECT count(*) FROM messages WHERE session_id = ?1 AND id > ?2")
        .and_then(|mut stmt| stmt.query_row((session_id, after), |row| row.get::<_, i64>(0)))
        .map(|n| usize::try_from(n).unwrap_or(0))
        .map_err(StoreError::sql("count Hermes messages"))
}

/// Whether a row of `session_id` with id in `(after, up_to]` is now archived by compaction.
pub(super) fn compacted_between(
    conn: &Connection,
    schema: &Schema,
    session_id: &str,
    after: i64,
    up_to: i64,
) -> Result<bool, StoreError> {
    if !schema.has_compaction() {
        return Ok(false);
    }
    let sql = format!(
        "SELECT EXISTS (SELECT 1 FROM messages WHERE session_id = ?1 AND id > ?2 AND id <= ?3 \
         AND compacted = 1 AND {} = 0)",
        schema.message("active", "0")
    );
    conn.prepare_cached(&sql)
        .and_then(|mut stmt| stmt.query_row((session_id, after, up_to), |row| row.get(0)))
        .map_err(StoreError::sql("read Hermes compaction"))
}

/// The `tool_call_id`s of the tool rows right after message `after` in `session_id`, at most
/// `limit` (pairs Python's flat, id-less tool calls with their results).
pub(super) fn following_tool_call_ids(
    conn: &Connection,
    session_id: &str,
    after: i64,
    limit: usize,
) -> Result<Vec<String>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut stmt = conn
        .prepare_cached(
            "SELECT role, tool_call_id FROM messages WHERE session_id = ?1 AND id > ?2 \
             ORDER BY id LIMIT ?3",
        )
        .map_err(StoreError::sql("read Hermes tool results"))?;
    let mut rows = stmt
        .query((session_id, after, limit))
        .map_err(StoreError::sql("read Hermes tool results"))?;
    let mut ids = Vec::new();
    while let Some(row) = rows
        .next()
        .map_err(StoreError::sql("read Hermes tool results"))?
    {
        let role: Option<String> = row.get(0).ok();
        if role.as_deref() != Some("tool") {
            break;
        }
        if let Some(id) = row.get::<_, Option<String>>(1).ok().flatten() {
            ids.push(id);
        }
    }
    Ok(ids)
}
