//! Reads of single rows and small batches around a search: where matched messages are, the
//! messages of a segment, their details and text, compression chains and titles, and whether
//! `messages_cjk` holds a message.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

use super::super::StoreError;
use super::rank::json_ids;
use super::window::{Filters, Place, admitted_sql};

/// Longest chain of segments followed (a guard against a corrupt, cyclic chain).
const MAX_CHAIN: usize = 10_000;

/// Places of the messages `ids` (those that still exist), with the filters checked in SQL.
pub(super) fn places(
    conn: &Connection,
    ids: &[i64],
    filters: &Filters<'_>,
) -> Result<HashMap<i64, Place>, StoreError> {
    // One id: a plain lookup, cheaper than going through a JSON list.
    let (sql, listed) = match ids {
        [id] => (
            concat!(
                "SELECT m.id, m.session_id, s.continued_by, ",
                admitted_sql!(),
                " FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = ?1"
            ),
            rusqlite::types::Value::Integer(*id),
        ),
        _ => (
            concat!(
                "SELECT m.id, m.session_id, s.continued_by, ",
                admitted_sql!(),
                " FROM messages m JOIN sessions s ON s.id = m.session_id
                 WHERE m.id IN (SELECT value FROM json_each(?1))"
            ),
            rusqlite::types::Value::Text(json_ids(ids)),
        ),
    };
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(StoreError::sql("read matched messages"))?;
    let params = params![
        listed,
        filters.role,
        filters.source,
        filters.since_ms,
        filters.until_ms
    ];
    stmt.query_map(params, |row| {
        let place = Place {
            segment: row.get(1)?,
            continued_by: row.get(2)?,
            admitted: row.get(3)?,
        };
        Ok((row.get(0)?, place))
    })
    .and_then(|rows| rows.collect())
    .map_err(StoreError::sql("read matched messages"))
}

/// What a hit reports about its message beyond its place.
#[derive(Debug, Clone)]
pub(super) struct Details {
    pub role: String,
    pub created_at: i64,
    pub source: String,
    /// The segment's own title.
    pub title: Option<String>,
    pub content: String,
}

/// Details of the messages `ids`, in one statement.
pub(super) fn details(conn: &Connection, ids: &[i64]) -> Result<HashMap<i64, Details>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT m.id, m.role, m.created_at, s.source, s.title, m.content
             FROM messages m JOIN sessions s ON s.id = m.session_id
             WHERE m.id IN (SELECT value FROM json_each(?1))",
        )
        .map_err(StoreError::sql("read matched messages"))?;
    stmt.query_map([json_ids(ids)], |row| {
        let details = Details {
            role: row.get(1)?,
            created_at: row.get(2)?,
            source: row.get(3)?,
            title: row.get(4)?,
            content: row.get(5)?,
        };
        Ok((row.get(0)?, details))
    })
    .and_then(|rows| rows.collect())
    .map_err(StoreError::sql("read matched messages"))
}

/// The messages of `segment` with ids in `low..=high`: their id range when no other message
/// falls inside it (the usual case, checked by counting), else their ids. Both from the
/// `messages_by_session` index.
pub(super) fn segment_messages(
    conn: &Connection,
    segment: &str,
    low: i64,
    high: i64,
) -> Result<SegmentMessages, StoreError> {
    let bounds = |sql: &str| -> Result<Option<i64>, StoreError> {
        conn.prepare_cached(sql)
            .and_then(|mut stmt| stmt.query_row(params![segment, low, high], |row| row.get(0)))
            .optional()
            .map(Option::flatten)
            .map_err(StoreError::sql("list a segment's messages"))
    };
    let first = bounds(
        "SELECT id FROM messages WHERE session_id = ?1 AND id BETWEEN ?2 AND ?3 ORDER BY id LIMIT 1",
    )?;
    let last = bounds(
        "SELECT id FROM messages WHERE session_id = ?1 AND id BETWEEN ?2 AND ?3
         ORDER BY id DESC LIMIT 1",
    )?;
    let (Some(first), Some(last)) = (first, last) else {
        return Ok(SegmentMessages::Ids(Vec::new()));
    };
    let count: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM messages WHERE session_id = ?1 AND id BETWEEN ?2 AND ?3",
        )
        .and_then(|mut stmt| stmt.query_row(params![segment, first, last], |row| row.get(0)))
        .map_err(StoreError::sql("list a segment's messages"))?;
    if last - first + 1 == count {
        return Ok(SegmentMessages::Range(first, last));
    }
    let listed: Option<String> = conn
        .prepare_cached(
            "SELECT group_concat(id) FROM messages WHERE session_id = ?1 AND id BETWEEN ?2 AND ?3",
        )
        .and_then(|mut stmt| stmt.query_row(params![segment, low, high], |row| row.get(0)))
        .map_err(StoreError::sql("list a segment's messages"))?;
    Ok(SegmentMessages::Ids(
        listed
            .unwrap_or_default()
            .split(',')
            .filter_map(|id| id.parse().ok())
            .collect(),
    ))
}

/// See [`segment_messages`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SegmentMessages {
    /// Every id in `first..=last` is one of them.
    Range(i64, i64),
    Ids(Vec<i64>),
}

/// Every segment of the conversation `id` belongs to (empty if there is no such session).
pub(super) fn segments(conn: &Connection, id: &str) -> Result<HashSet<String>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "WITH RECURSIVE
               back(id, parent, lineage) AS (
                 SELECT id, parent_session_id, lineage FROM sessions WHERE id = ?1
                 UNION
                 SELECT s.id, s.parent_session_id, s.lineage FROM sessions s
                   JOIN back b ON s.id = b.parent AND b.lineage = 'compression'),
               fwd(id, next) AS (
                 SELECT id, continued_by FROM sessions WHERE id = ?1
                 UNION
                 SELECT s.id, s.continued_by FROM sessions s JOIN fwd f ON s.id = f.next)
             SELECT id FROM back UNION SELECT id FROM fwd",
        )
        .map_err(StoreError::sql("find conversation segments"))?;
    stmt.query_map([id], |row| row.get(0))
        .and_then(|rows| rows.collect())
        .map_err(StoreError::sql("find conversation segments"))
}

/// Whether `messages_cjk` holds any row (when it does not, only `messages_fts` is searched).
/// Read from its `_docsize` shadow table (one row per indexed message): a plain table lookup
/// where asking the FTS5 table itself costs a full-scan setup.
pub(super) fn cjk_rows_exist(conn: &Connection) -> Result<bool, StoreError> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM messages_cjk_docsize)")
        .and_then(|mut stmt| stmt.query_row([], |row| row.get(0)))
        .map_err(StoreError::sql("check the CJK search index"))
}

/// Whether message `id` is indexed in `messages_cjk` (its content has CJK text).
pub(super) fn is_cjk_row(conn: &Connection, id: i64) -> Result<bool, StoreError> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM messages_cjk_docsize WHERE id = ?1)")
        .and_then(|mut stmt| stmt.query_row([id], |row| row.get(0)))
        .map_err(StoreError::sql("check the CJK search index"))
}

/// The newest segment of the compression chain continuing at segment `next`.
pub(super) fn newest_segment(conn: &Connection, next: &str) -> Result<String, StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT continued_by FROM sessions WHERE id = ?1")
        .map_err(StoreError::sql("follow a compressed conversation"))?;
    let mut newest = next.to_string();
    for _ in 0..MAX_CHAIN {
        let following: Option<String> = stmt
            .query_row([&newest], |row| row.get(0))
            .optional()
            .map_err(StoreError::sql("follow a compressed conversation"))?
            .flatten();
        match following {
            Some(following) => newest = following,
            None => break,
        }
    }
    Ok(newest)
}

/// The title of conversation `newest`: its own, else that of its oldest titled segment.
pub(super) fn title(conn: &Connection, newest: &str) -> Result<Option<String>, StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT title, lineage, parent_session_id FROM sessions WHERE id = ?1")
        .map_err(StoreError::sql("read a conversation title"))?;
    let mut found = None;
    let mut id = newest.to_string();
    for step in 0..MAX_CHAIN {
        let row: Option<(Option<String>, String, Option<String>)> = stmt
            .query_row([&id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .optional()
            .map_err(StoreError::sql("read a conversation title"))?;
        let Some((title, lineage, parent)) = row else {
            break;
        };
        if let Some(title) = title.filter(|t| !t.is_empty()) {
            if step == 0 {
                return Ok(Some(title));
            }
            found = Some(title);
        }
        match parent {
            Some(parent) if lineage == "compression" => id = parent,
            _ => break,
        }
    }
    Ok(found)
}
