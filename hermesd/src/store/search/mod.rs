//! Full-text search over stored messages: the query language, CJK substring search through a
//! second FTS5 index, filters, bounded bm25 ranking and one hit per conversation.
//!
//! A query is parsed once ([`query`]) and written as FTS5 for each index it must ask
//! ([`render`]): `messages_fts` (unicode61 over the text) unless every match needs CJK text,
//! and `messages_cjk` (bigrams, see [`cjk`]) when it has rows. A message with CJK text is
//! judged by `messages_cjk` only. Matches are gathered newest first and ranked ([`collect`],
//! [`rank`]), collapsed to the best message of each conversation, then given their details,
//! titles and snippets ([`snippet`]).

mod cjk;
mod collect;
mod query;
mod rank;
mod render;
mod rows;
mod snippet;
#[cfg(test)]
mod tests;
mod window;

use std::collections::HashSet;

use rusqlite::Connection;

use super::StoreError;
use collect::{Chosen, Collector, Side};
use render::Index;
use window::Filters;

pub use cjk::{CJK_MIGRATION, cjk_terms, has_cjk, is_cjk, register_functions};
pub use query::MAX_QUERY_BYTES;

/// Matches ranked by the default [`Ranking::Recent`]. (bm25 costs FTS5 a docsize lookup per
/// message: at 1,000 the median of the benchmark in `tests/bench.rs` is about 1.5× higher.)
pub const DEFAULT_WINDOW: u32 = 250;

/// How matches are ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranking {
    /// Rank by bm25 the newest this-many matching messages (of those passing the role, source
    /// and date filters, when given), over the query's informative words (see `rank.rs`). When
    /// they hold fewer than `limit` conversations, older matches follow newest first, up to 8
    /// windows in all. The work stays bounded however common the words are.
    Recent(u32),
    /// Rank every matching message by FTS5 bm25 of the whole query (slow for common words on
    /// a large history).
    All,
}

impl Default for Ranking {
    fn default() -> Self {
        Self::Recent(DEFAULT_WINDOW)
    }
}

/// What to search for and where.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchQuery {
    /// What the user typed: words, "phrases", `prefix*`, AND / OR / NOT, parentheses.
    pub text: String,
    /// Conversations to return at most.
    pub limit: u32,
    /// Only segments from this source; also lets subagent sessions in.
    pub source: Option<String>,
    /// Only messages of this role (`user`, `assistant` or `tool`); default user and assistant.
    pub role: Option<String>,
    /// Only messages created at or after this time (epoch milliseconds).
    pub since_ms: Option<i64>,
    /// Only messages created before this time (epoch milliseconds).
    pub until_ms: Option<i64>,
    /// Leave out every segment of the conversation this session id belongs to.
    pub exclude_conversation: Option<String>,
    pub ranking: Ranking,
    /// Forgive syntax mistakes (unmatched quotes or parentheses, dangling operators) by dropping
    /// them, as the model's tool wants, instead of failing with [`StoreError::BadQuery`].
    pub lenient: bool,
}

/// The best-ranked matching message of one conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    /// The newest segment of the conversation (the end of its `continued_by` chain).
    pub conversation_id: String,
    /// The segment holding the message.
    pub segment_id: String,
    /// The conversation's title, else that of its oldest titled segment.
    pub title: Option<String>,
    /// Source of the segment holding the message.
    pub source: String,
    pub message_id: i64,
    pub role: String,
    /// Text around the match, matched words between « and ».
    pub snippet: String,
    /// FTS5 bm25, lower (more negative) is better: over the query's informative words with
    /// [`Ranking::Recent`] (0 when the message has none of them or came after the ranked
    /// window), over the whole query with [`Ranking::All`]. Messages with CJK text are scored
    /// in the bigram index, so their scores are only roughly comparable with others.
    pub score: f64,
    /// When the message was stored (epoch milliseconds).
    pub created_at: i64,
}

/// The FTS5 expression for `messages_fts` made from `text` leniently, as the model's tool has
/// always used it; `None` when nothing searchable is left.
pub fn fts_query(text: &str) -> Option<String> {
    query::parse_lenient(text).map(|expr| render::fts5(&expr, Index::Plain))
}

/// Check `text` as [`search`] would in strict mode, without touching the database.
pub fn check_query(text: &str) -> Result<(), StoreError> {
    query::parse_strict(text)
        .map(drop)
        .map_err(StoreError::BadQuery)
}

/// Search stored messages: the best hit of each conversation, best first, at most `limit`.
/// Filters apply to messages before they are grouped by conversation. Needs no SQL function
/// on `conn` (a read-only reader is fine).
pub fn search(conn: &Connection, query: &SearchQuery) -> Result<Vec<SearchHit>, StoreError> {
    let expr = if query.lenient {
        query::parse_lenient(&query.text)
            .ok_or_else(|| StoreError::BadQuery("search query has no words to search for".into()))?
    } else {
        query::parse_strict(&query.text).map_err(StoreError::BadQuery)?
    };
    let role = query.role.as_deref();
    if let Some(role) = role.filter(|r| !matches!(*r, "user" | "assistant" | "tool")) {
        return Err(StoreError::BadQuery(format!(
            "unknown role `{role}` to search; use user, assistant or tool"
        )));
    }
    if query.limit == 0 {
        return Ok(Vec::new());
    }
    let cjk_rows = rows::cjk_rows_exist(conn)?;
    let newest_id = rank::newest_message_id(conn)?;
    let mut sides = Vec::with_capacity(2);
    if render::matches_without_cjk(&expr) {
        sides.push(side(conn, &expr, Index::Plain, newest_id)?);
    }
    if cjk_rows {
        sides.push(side(conn, &expr, Index::Cjk, newest_id)?);
    }
    let filters = Filters {
        role,
        source: query.source.as_deref(),
        since_ms: query.since_ms,
        until_ms: query.until_ms,
        exclude: query.exclude_conversation.as_deref(),
    };
    let mut collector = Collector::new(conn, query.limit as usize, filters, cjk_rows)?;
    match query.ranking {
        Ranking::Recent(window) => collector.recent(&sides, i64::from(window.max(query.limit)))?,
        Ranking::All => collector.all(&sides)?,
    }
    finish(conn, &expr, &sides, collector.chosen)
}

/// What to ask `index` for `expr`.
fn side(
    conn: &Connection,
    expr: &query::Expr,
    index: Index,
    newest_id: i64,
) -> Result<Side, StoreError> {
    let words = render::positive_words(expr, index);
    Ok(Side {
        index,
        fts: render::fts5(expr, index),
        informative: rank::informative(conn, index, words, newest_id)?,
        single_word: render::single_word(expr),
    })
}

/// Details, titles and snippets for the chosen messages.
fn finish(
    conn: &Connection,
    expr: &query::Expr,
    sides: &[Side],
    chosen: Vec<Chosen>,
) -> Result<Vec<SearchHit>, StoreError> {
    let ids: Vec<i64> = chosen.iter().map(|c| c.candidate.id).collect();
    let mut details = rows::details(conn, &ids)?;
    // Mark only the words that rank, when there are any: marking every "the" helps nobody.
    let informative: HashSet<String> = sides
        .iter()
        .filter(|side| side.index == Index::Plain)
        .flat_map(|side| &side.informative)
        .map(|word| word.trim_end_matches('*').trim_matches('"').to_lowercase())
        .collect();
    let only = (!informative.is_empty()).then_some(&informative);
    let needles = snippet::needles(expr, only);
    let mut hits = Vec::with_capacity(chosen.len());
    for Chosen {
        candidate,
        segment,
        conversation,
    } in chosen
    {
        let Some(details) = details.remove(&candidate.id) else {
            continue;
        };
        let title = match details.title {
            Some(title) if !title.is_empty() && conversation == segment => Some(title),
            _ => rows::title(conn, &conversation)?,
        };
        hits.push(SearchHit {
            conversation_id: conversation,
            segment_id: segment,
            title,
            source: details.source,
            message_id: candidate.id,
            role: details.role,
            snippet: snippet::snippet(&details.content, &needles),
            score: candidate.score,
            created_at: details.created_at,
        });
    }
    Ok(hits)
}
