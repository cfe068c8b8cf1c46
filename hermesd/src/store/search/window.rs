//! Windows of matches read from one FTS5 index: bare (rowids only, from the index alone) or
//! joined with messages and sessions and filtered in SQL; and the filters themselves.

use std::collections::HashMap;

use rusqlite::{CachedStatement, Connection, Rows, params};

use super::super::StoreError;
use super::render::Index;

/// Whether message `m` of session `s` passes the filters: ?2 role (NULL: user and assistant),
/// ?3 source (NULL: any but subagent sessions), ?4 since (inclusive), ?5 until (exclusive).
macro_rules! admitted_sql {
    () => {
        "(CASE WHEN ?2 IS NULL THEN m.role IN ('user', 'assistant') ELSE m.role = ?2 END
          AND (?3 IS NULL OR s.source = ?3)
          AND (?3 IS NOT NULL OR s.lineage != 'subagent')
          AND (?4 IS NULL OR m.created_at >= ?4)
          AND (?5 IS NULL OR m.created_at < ?5))"
    };
}
pub(super) use admitted_sql;

/// Rowids of the newest ?3 matches of ?1 below rowid ?2.
#[rustfmt::skip]
macro_rules! bare_sql {
    ($table:literal) => {
        concat!(
            "SELECT rowid FROM ", $table, " WHERE ", $table, " MATCH ?1 AND rowid < ?2
             ORDER BY rowid DESC LIMIT ?3"
        )
    };
}

/// Rowids of the oldest ?2 matches of ?1, oldest first (FTS5's cheapest order).
#[rustfmt::skip]
macro_rules! oldest_sql {
    ($table:literal) => {
        concat!("SELECT rowid FROM ", $table, " WHERE ", $table, " MATCH ?1 LIMIT ?2")
    };
}

/// Matches of ?1 below rowid ?8 that pass the filters (see `admitted_sql`) and are not in the
/// conversation of segment ?6, newest first, at most ?7 (-1: all), with `$score`.
#[rustfmt::skip]
macro_rules! filtered_sql {
    ($table:literal, $score:literal) => {
        concat!(
            "WITH RECURSIVE
               back(id, parent, lineage) AS (
                 SELECT id, parent_session_id, lineage FROM sessions WHERE id = ?6
                 UNION
                 SELECT s.id, s.parent_session_id, s.lineage FROM sessions s
                   JOIN back b ON s.id = b.parent AND b.lineage = 'compression'),
               fwd(id, next) AS (
                 SELECT id, continued_by FROM sessions WHERE id = ?6
                 UNION
                 SELECT s.id, s.continued_by FROM sessions s JOIN fwd f ON s.id = f.next),
               excluded(id) AS (SELECT id FROM back UNION SELECT id FROM fwd)
             SELECT ", $table, ".rowid, ", $score, ", m.session_id, s.continued_by
             FROM ", $table, "
             JOIN messages m ON m.id = ", $table, ".rowid
             JOIN sessions s ON s.id = m.session_id
             WHERE ", $table, " MATCH ?1 AND ", $table, ".rowid < ?8 AND ", admitted_sql!(), "
               AND m.session_id NOT IN excluded
             ORDER BY ", $table, ".rowid DESC LIMIT ?7"
        )
    };
}

/// One matching message before the per-conversation collapse.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Candidate {
    pub id: i64,
    /// Lower is better (bm25); 0 when not scored.
    pub score: f64,
    pub index: Index,
}

/// Where a message is, and whether it passes the filters.
#[derive(Debug, Clone)]
pub(super) struct Place {
    pub segment: String,
    pub continued_by: Option<String>,
    pub admitted: bool,
}

/// The filters of a search.
#[derive(Debug, Clone, Default)]
pub(super) struct Filters<'a> {
    pub role: Option<&'a str>,
    pub source: Option<&'a str>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub exclude: Option<&'a str>,
}

impl Filters<'_> {
    /// Whether the filters narrow more than the defaults (which pass most messages).
    pub fn narrow(&self) -> bool {
        self.role.is_some()
            || self.source.is_some()
            || self.since_ms.is_some()
            || self.until_ms.is_some()
    }
}

/// Rowids of the newest `limit` matches of `fts` in `index` below rowid `below`, newest first.
pub(super) fn bare(
    conn: &Connection,
    index: Index,
    fts: &str,
    below: i64,
    limit: i64,
) -> Result<Vec<i64>, StoreError> {
    let sql = match index {
        Index::Plain => bare_sql!("messages_fts"),
        Index::Cjk => bare_sql!("messages_cjk"),
    };
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(StoreError::sql("prepare message search"))?;
    stmt.query_map(params![fts, below, limit], |row| row.get(0))
        .and_then(|rows| rows.collect())
        .map_err(StoreError::sql("search messages"))
}

/// Rowids of the newest `limit` matches of `fts` in `index`, newest first, for an expression
/// of several words. FTS5 skips through doclists when reading in rowid order but steps through
/// every entry newest first, so such an expression is first read oldest first: when it has no
/// more than `limit` matches (the usual case) that is the whole answer at about half the cost.
/// Also tells whether more matches exist.
pub(super) fn bare_selective(
    conn: &Connection,
    index: Index,
    fts: &str,
    limit: i64,
) -> Result<(Vec<i64>, bool), StoreError> {
    let sql = match index {
        Index::Plain => oldest_sql!("messages_fts"),
        Index::Cjk => oldest_sql!("messages_cjk"),
    };
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(StoreError::sql("prepare message search"))?;
    let mut ids: Vec<i64> = stmt
        .query_map(params![fts, limit.saturating_add(1)], |row| row.get(0))
        .and_then(|rows| rows.collect())
        .map_err(StoreError::sql("search messages"))?;
    if ids.len() as i64 <= limit {
        ids.reverse();
        return Ok((ids, false));
    }
    bare(conn, index, fts, i64::MAX, limit).map(|ids| (ids, true))
}

/// The newest `limit` (-1: all) matches below rowid `below` that pass `filters` and are not in
/// the excluded conversation, with their places; scored by FTS5 bm25 when `bm25` (else 0).
pub(super) fn filtered(
    conn: &Connection,
    index: Index,
    fts: &str,
    filters: &Filters<'_>,
    below: i64,
    limit: i64,
    bm25: bool,
) -> Result<(Vec<Candidate>, HashMap<i64, Place>), StoreError> {
    let sql = match (index, bm25) {
        (Index::Plain, true) => filtered_sql!("messages_fts", "bm25(messages_fts)"),
        (Index::Plain, false) => filtered_sql!("messages_fts", "0.0"),
        (Index::Cjk, true) => filtered_sql!("messages_cjk", "bm25(messages_cjk)"),
        (Index::Cjk, false) => filtered_sql!("messages_cjk", "0.0"),
    };
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(StoreError::sql("prepare message search"))?;
    let mut rows = stmt
        .query(params![
            fts,
            filters.role,
            filters.source,
            filters.since_ms,
            filters.until_ms,
            filters.exclude,
            limit,
            below
        ])
        .map_err(StoreError::sql("search messages"))?;
    let mut candidates = Vec::new();
    let mut places = HashMap::new();
    while let Some(row) = rows.next().map_err(StoreError::sql("search messages"))? {
        let read = || -> rusqlite::Result<(Candidate, Place)> {
            let candidate = Candidate {
                id: row.get(0)?,
                score: row.get(1)?,
                index,
            };
            let place = Place {
                segment: row.get(2)?,
                continued_by: row.get(3)?,
                admitted: true,
            };
            Ok((candidate, place))
        };
        let (candidate, place) = read().map_err(StoreError::sql("search messages"))?;
        places.insert(candidate.id, place);
        candidates.push(candidate);
    }
    Ok((candidates, places))
}

/// The statement behind a stream of one index's matches, newest first below a rowid: bare
/// (`narrow` false) or filtered in SQL.
pub(super) fn stream_statement(
    conn: &Connection,
    index: Index,
    narrow: bool,
) -> Result<CachedStatement<'_>, StoreError> {
    let sql = match (index, narrow) {
        (Index::Plain, false) => bare_sql!("messages_fts"),
        (Index::Cjk, false) => bare_sql!("messages_cjk"),
        (Index::Plain, true) => filtered_sql!("messages_fts", "0.0"),
        (Index::Cjk, true) => filtered_sql!("messages_cjk", "0.0"),
    };
    conn.prepare_cached(sql)
        .map_err(StoreError::sql("prepare message search"))
}

/// Start the stream of [`stream_statement`]: at most `limit` matches of `fts` below `below`.
pub(super) fn open_stream<'s>(
    stmt: &'s mut CachedStatement<'_>,
    fts: &str,
    filters: &Filters<'_>,
    narrow: bool,
    below: i64,
    limit: i64,
) -> Result<Rows<'s>, StoreError> {
    let rows = if narrow {
        stmt.query(params![
            fts,
            filters.role,
            filters.source,
            filters.since_ms,
            filters.until_ms,
            filters.exclude,
            limit,
            below
        ])
    } else {
        stmt.query(params![fts, below, limit])
    };
    rows.map_err(StoreError::sql("search messages"))
}

/// Read up to `count` more matches from a stream into `candidates` (and their places when it
/// is filtered); returns how many were read.
pub(super) fn pull(
    rows: &mut Rows<'_>,
    index: Index,
    narrow: bool,
    count: i64,
    candidates: &mut Vec<Candidate>,
    places: &mut HashMap<i64, Place>,
) -> Result<i64, StoreError> {
    let mut read = 0;
    while read < count {
        let Some(row) = rows.next().map_err(StoreError::sql("search messages"))? else {
            break;
        };
        let id: i64 = row.get(0).map_err(StoreError::sql("search messages"))?;
        if narrow {
            let place = Place {
                segment: row.get(2).map_err(StoreError::sql("search messages"))?,
                continued_by: row.get(3).map_err(StoreError::sql("search messages"))?,
                admitted: true,
            };
            places.insert(id, place);
        }
        candidates.push(Candidate {
            id,
            score: 0.0,
            index,
        });
        read += 1;
    }
    Ok(read)
}
