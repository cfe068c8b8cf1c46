//! Scores for [`super::Ranking::Recent`]: FTS5 bm25 over the query's informative words only.
//!
//! FTS5's bm25 counts, on every query, all documents containing each phrase of the query (for
//! the IDF). For a word in most messages that count is a scan of most of the index and costs
//! more than the rest of the search together, while such a word's IDF is near zero and hardly
//! moves the ranking. So each word of the query is first judged from a sample of its matches: a
//! word found in at least 1 of every [`COMMON_ONE_IN`] messages still filters but does not
//! score; the others are scored by bm25 over the window's messages. Phrases are scored by their
//! words (evaluating a phrase of common words again would cost as much as the search).

use std::collections::HashMap;
use std::fmt::Write as _;

use rusqlite::{Connection, Row, params};

use super::super::StoreError;
use super::render::Index;

/// Matches of a word looked at to judge how common it is.
const SAMPLE: i64 = 200;
/// A word matching at least one message in this many is too common to score by.
const COMMON_ONE_IN: i64 = 20;

/// How many of the oldest ?2 matches of ?1 there are, and the newest of their rowids (read in
/// rowid order, which FTS5 does more cheaply than newest first).
#[rustfmt::skip]
macro_rules! sample_sql {
    ($table:literal) => {
        concat!(
            "SELECT count(*), max(rowid) FROM (SELECT rowid FROM ", $table, " WHERE ", $table,
            " MATCH ?1 LIMIT ?2)"
        )
    };
}

/// The newest ?2 matches of ?1 with their bm25.
#[rustfmt::skip]
macro_rules! scored_window_sql {
    ($table:literal) => {
        concat!(
            "SELECT rowid, bm25(", $table, ") FROM ", $table, " WHERE ", $table,
            " MATCH ?1 ORDER BY rowid DESC LIMIT ?2"
        )
    };
}

/// bm25 of the matches of ?1 with rowids in ?2..=?3 (and, with `$only`, listed in the JSON
/// array ?4, so that bm25 is computed for those only).
#[rustfmt::skip]
macro_rules! rank_sql {
    ($table:literal, $only:literal) => {
        concat!(
            "SELECT rowid, bm25(", $table, ") FROM ", $table, " WHERE ", $table,
            " MATCH ?1 AND rowid BETWEEN ?2 AND ?3", $only
        )
    };
}

/// The largest message id (a bound on how many messages an index can hold).
pub(super) fn newest_message_id(conn: &Connection) -> Result<i64, StoreError> {
    conn.prepare_cached("SELECT coalesce(max(id), 0) FROM messages")
        .and_then(|mut stmt| stmt.query_row([], |row| row.get(0)))
        .map_err(StoreError::sql("count messages"))
}

fn id_and_score(row: &Row<'_>) -> rusqlite::Result<(i64, f64)> {
    Ok((row.get(0)?, row.get(1)?))
}

/// The words among `words` (one-word FTS5 phrases) rare enough to score by: all their matches
/// fewer than `SAMPLE`, or under one message in `COMMON_ONE_IN` over the span of their first
/// `SAMPLE` matches.
pub(super) fn informative(
    conn: &Connection,
    index: Index,
    words: Vec<String>,
    newest_id: i64,
) -> Result<Vec<String>, StoreError> {
    let sql = match index {
        Index::Plain => sample_sql!("messages_fts"),
        Index::Cjk => sample_sql!("messages_cjk"),
    };
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(StoreError::sql("rank search results"))?;
    let mut out = Vec::with_capacity(words.len());
    for word in words {
        let (count, last): (i64, Option<i64>) = stmt
            .query_row(params![&word, SAMPLE], |row| Ok((row.get(0)?, row.get(1)?)))
            .map_err(StoreError::sql("rank search results"))?;
        // Ids start at 1: the sample spans 1..=last.
        let span = last.unwrap_or(newest_id).max(1);
        if count < SAMPLE || count.saturating_mul(COMMON_ONE_IN) < span {
            out.push(word);
        }
    }
    Ok(out)
}

/// The newest `limit` matches of `fts` (a one-word query) with their bm25, newest first.
pub(super) fn scored_window(
    conn: &Connection,
    index: Index,
    fts: &str,
    limit: i64,
) -> Result<Vec<(i64, f64)>, StoreError> {
    let sql = match index {
        Index::Plain => scored_window_sql!("messages_fts"),
        Index::Cjk => scored_window_sql!("messages_cjk"),
    };
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(StoreError::sql("search messages"))?;
    stmt.query_map(params![fts, limit], id_and_score)
        .and_then(|rows| rows.collect::<Result<_, _>>())
        .map_err(StoreError::sql("search messages"))
}

/// bm25 (lower is better) over the `words` of the messages `ids` (newest first) that contain
/// one of them; the others have no entry (score 0).
pub(super) fn scores(
    conn: &Connection,
    index: Index,
    words: &[&str],
    ids: &[i64],
) -> Result<HashMap<i64, f64>, StoreError> {
    let (Some(&high), Some(&low), false) = (ids.first(), ids.last(), words.is_empty()) else {
        return Ok(HashMap::new());
    };
    let sparse = high - low + 1 > 2 * ids.len() as i64;
    let sql = match (index, sparse) {
        (Index::Plain, false) => rank_sql!("messages_fts", ""),
        (Index::Plain, true) => rank_sql!(
            "messages_fts",
            " AND +rowid IN (SELECT value FROM json_each(?4))"
        ),
        (Index::Cjk, false) => rank_sql!("messages_cjk", ""),
        (Index::Cjk, true) => rank_sql!(
            "messages_cjk",
            " AND +rowid IN (SELECT value FROM json_each(?4))"
        ),
    };
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(StoreError::sql("rank search results"))?;
    let expression = words.join(" OR ");
    let rows = if sparse {
        stmt.query_map(params![expression, low, high, json_ids(ids)], id_and_score)
            .and_then(|rows| rows.collect())
    } else {
        stmt.query_map(params![expression, low, high], id_and_score)
            .and_then(|rows| rows.collect())
    };
    rows.map_err(StoreError::sql("rank search results"))
}

/// `ids` as a JSON array.
pub(super) fn json_ids(ids: &[i64]) -> String {
    let mut out = String::with_capacity(ids.len() * 8 + 2);
    out.push('[');
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        // Writing to a String cannot fail.
        let _ = write!(out, "{id}");
    }
    out.push(']');
    out
}
