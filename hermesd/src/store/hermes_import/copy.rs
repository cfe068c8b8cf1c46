//! The message copy: one pass over the source's new rows in id order, each converted and
//! staged for its session (or that session's `-compacted` segment), then inserted into
//! `messages` by a single statement. One statement matters: FTS5 flushes its pending index at
//! every statement of a transaction, and 100,000 single-row inserts spend most of their time
//! merging 100,000 tiny index segments (12 s instead of 2 s).

use std::collections::HashMap;

use rusqlite::{Connection, Row, params};

use super::{
    ImportReport, StoreError, convert,
    sessions::Route,
    source::{self, Schema},
};

/// Page cache for the copy, in KiB (negative `cache_size`): with hermesd's default 2 MB the
/// transaction spills pages to the WAL and reads them back, doubling the insert time.
const COPY_CACHE_KIB: i64 = 64 * 1024;

/// Raises the target connection's page cache for the copy and puts the old size back on drop.
struct BigCache<'c> {
    conn: &'c Connection,
    previous: i64,
}

impl<'c> BigCache<'c> {
    fn enlarge(conn: &'c Connection) -> Result<Self, StoreError> {
        let previous: i64 = conn
            .query_row("PRAGMA cache_size", [], |row| row.get(0))
            .map_err(StoreError::sql("read the page cache size"))?;
        conn.execute_batch(&format!("PRAGMA cache_size = {}", -COPY_CACHE_KIB))
            .map_err(StoreError::sql("enlarge the page cache"))?;
        Ok(Self { conn, previous })
    }
}

impl Drop for BigCache<'_> {
    fn drop(&mut self) {
        // Best effort: a failure leaves a larger cache, which is harmless.
        let _ = self
            .conn
            .execute_batch(&format!("PRAGMA cache_size = {}", self.previous));
    }
}

/// Where a source row belongs.
enum Destination {
    Live,
    Archive,
    Skip,
}

/// Rows waiting for the single insert; dropped again in the same transaction.
const STAGING_TABLE: &str = "DROP TABLE IF EXISTS temp.hermes_import_staging;
CREATE TEMP TABLE hermes_import_staging (
    seq           INTEGER PRIMARY KEY,
    session_id    TEXT NOT NULL,
    role          TEXT NOT NULL,
    content       TEXT NOT NULL,
    tool_calls    TEXT,
    tool_call_id  TEXT,
    tool_name     TEXT,
    reasoning     TEXT,
    finish_reason TEXT,
    created_at    INTEGER NOT NULL
)";

const KEPT_ROLES: [&str; 4] = ["system", "user", "assistant", "tool"];

fn read_failed(source: rusqlite::Error) -> StoreError {
    StoreError::Sql {
        context: "read Hermes messages",
        source,
    }
}

fn select_sql(schema: &Schema) -> String {
    let m = |name, fallback| schema.message(name, fallback);
    format!(
        "SELECT id, session_id, role, {}, {}, {}, {}, timestamp, {}, {}, {}, {}, {} \
         FROM messages WHERE id > ?1 ORDER BY id",
        m("content", "NULL"),
        m("tool_calls", "NULL"),
        m("tool_call_id", "NULL"),
        m("tool_name", "NULL"),
        m("finish_reason", "NULL"),
        m("reasoning", "NULL"),
        m("reasoning_content", "NULL"),
        m("active", "1"),
        m("compacted", "0"),
    )
}

fn destination(row: &Row<'_>) -> rusqlite::Result<Destination> {
    let flag = |i: usize| -> rusqlite::Result<Option<i64>> {
        Ok(convert::real(row.get_ref(i)?).map(|f| f as i64))
    };
    // Python heals NULL `active` to 1 on open; a NULL here means the same.
    Ok(match (flag(11)?.unwrap_or(1), flag(12)?.unwrap_or(0)) {
        (0, 1) => Destination::Archive,
        (0, _) => Destination::Skip,
        _ => Destination::Live,
    })
}

/// Copy every not-yet-imported row of the routed sessions.
pub(super) fn copy_messages(
    source: &Connection,
    target: &Connection,
    schema: &Schema,
    routes: &mut HashMap<String, Route>,
    report: &mut ImportReport,
) -> Result<(), StoreError> {
    let Some(start) = routes.values().map(|r| r.watermark).min() else {
        return Ok(());
    };
    let mut select = source.prepare(&select_sql(schema)).map_err(read_failed)?;
    let _cache = BigCache::enlarge(target)?;
    target
        .execute_batch(STAGING_TABLE)
        .map_err(StoreError::sql("stage imported messages"))?;
    let mut stage = target
        .prepare(
            "INSERT INTO temp.hermes_import_staging (session_id, role, content, tool_calls,
                 tool_call_id, tool_name, reasoning, finish_reason, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .map_err(StoreError::sql("stage imported message"))?;
    let mut rows = select.query([start]).map_err(read_failed)?;
    while let Some(row) = rows.next().map_err(read_failed)? {
        let Some(session_id) = row.get_ref(1).map_err(read_failed)?.as_str().ok() else {
            continue;
        };
        let Some(route) = routes.get_mut(session_id) else {
            continue;
        };
        let id: i64 = row.get(0).map_err(read_failed)?;
        if id <= route.watermark {
            continue;
        }
        let role = row.get_ref(2).map_err(read_failed)?;
        let role = role.as_str().unwrap_or_default();
        let destination = destination(row).map_err(read_failed)?;
        let into = match destination {
            _ if !KEPT_ROLES.contains(&role) => None,
            Destination::Skip => None,
            Destination::Live => Some(route.live.as_str()),
            Destination::Archive => route.archive.as_deref(),
        };
        let Some(into) = into else {
            report.skipped_messages += 1;
            continue;
        };
        let value = |i: usize| row.get_ref(i).map_err(read_failed);
        let content = convert::message_content(value(3)?);
        let tool_calls = match convert::non_empty(value(4)?) {
            Some(raw) => convert::tool_calls(raw, id, |n| {
                source::following_tool_call_ids(source, session_id, id, n).unwrap_or_default()
            }),
            None => None,
        };
        let reasoning = convert::non_empty(value(9)?).or(convert::non_empty(value(10)?));
        let created_at = convert::real(value(7)?).map_or(route.fallback_ms, convert::millis);
        route.fallback_ms = created_at;
        stage
            .execute(params![
                into,
                role,
                content,
                tool_calls,
                convert::non_empty(value(5)?),
                convert::non_empty(value(6)?),
                reasoning,
                convert::non_empty(value(8)?),
                created_at
            ])
            .map_err(StoreError::sql("stage imported message"))?;
        route.inserted += 1;
        report.messages += 1;
    }
    drop(stage);
    target
        .execute_batch(
            "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, tool_name,
                                   reasoning, finish_reason, created_at)
             SELECT session_id, role, content, tool_calls, tool_call_id, tool_name, reasoning,
                    finish_reason, created_at
             FROM temp.hermes_import_staging ORDER BY seq;
             DROP TABLE temp.hermes_import_staging;",
        )
        .map_err(StoreError::sql("insert imported messages"))
}
