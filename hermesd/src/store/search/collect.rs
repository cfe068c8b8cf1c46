//! Gathering hits: windows of matches from each index, ranked, then walked best first keeping
//! the first admitted message of each conversation until the limit.
//!
//! Default ranking without narrowing filters reads bare FTS5 windows (the index alone) and
//! reads where a message is only when the walk reaches it, a few at a time; when filters turned
//! candidates away and the limit is not reached, the walk goes on over older matches filtered
//! in SQL. Narrowing filters are applied in SQL from the start, so the window holds the newest
//! matches that pass them.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use super::super::StoreError;
use super::rank;
use super::render::Index;
use super::rows;
use super::window::{self, Candidate, Filters, Place};

/// One index to search and its MATCH expression.
pub(super) struct Side {
    pub index: Index,
    pub fts: String,
    /// Words a match contains that are rare enough to rank by (see [`rank`]).
    pub informative: Vec<String>,
    /// The expression is one word.
    pub single_word: bool,
}

/// A chosen message: the best of its conversation.
#[derive(Debug, Clone)]
pub(super) struct Chosen {
    pub candidate: Candidate,
    pub segment: String,
    pub conversation: String,
}

/// Places read in one statement when the walk reaches an unread candidate; fewer in a dense
/// window, where the next candidates are mostly in the same segment and get skipped.
const PLACE_BATCH: usize = 16;
const CLUSTERED_PLACE_BATCH: usize = 1;
/// How many windows of matches [`Collector::recent`] reads at most to fill the limit.
const EXTEND: i64 = 8;

/// Messages the walk passes over unread: those of segments whose conversation is taken.
#[derive(Default)]
struct Skip {
    ranges: Vec<(i64, i64)>,
    ids: HashSet<i64>,
}

impl Skip {
    fn add(&mut self, messages: rows::SegmentMessages) {
        match messages {
            rows::SegmentMessages::Range(first, last) => self.ranges.push((first, last)),
            rows::SegmentMessages::Ids(ids) => self.ids.extend(ids),
        }
    }

    fn contains(&self, id: i64) -> bool {
        self.ranges
            .iter()
            .any(|&(first, last)| (first..=last).contains(&id))
            || self.ids.contains(&id)
    }
}

/// The walk's state: conversations found so far and what it has learnt on the way.
pub(super) struct Collector<'c> {
    conn: &'c Connection,
    limit: usize,
    filters: Filters<'c>,
    excluded: HashSet<String>,
    /// `messages_cjk` has rows: a `messages_fts` match on a CJK message is that index's to judge.
    cjk_rows: bool,
    conversations: HashMap<String, String>,
    seen: HashSet<String>,
    pub chosen: Vec<Chosen>,
}

impl<'c> Collector<'c> {
    pub fn new(
        conn: &'c Connection,
        limit: usize,
        filters: Filters<'c>,
        cjk_rows: bool,
    ) -> Result<Self, StoreError> {
        let excluded = match filters.exclude {
            Some(id) => rows::segments(conn, id)?,
            None => HashSet::new(),
        };
        Ok(Self {
            conn,
            limit,
            filters,
            excluded,
            cjk_rows,
            conversations: HashMap::new(),
            seen: HashSet::new(),
            chosen: Vec::with_capacity(limit),
        })
    }

    fn full(&self) -> bool {
        self.chosen.len() >= self.limit
    }

    /// Every match, scored by FTS5 bm25 over the whole query ([`super::Ranking::All`]).
    pub fn all(&mut self, sides: &[Side]) -> Result<(), StoreError> {
        let mut candidates = Vec::new();
        let mut places = HashMap::new();
        for side in sides {
            let (found, found_places) = window::filtered(
                self.conn,
                side.index,
                &side.fts,
                &self.filters,
                i64::MAX,
                -1,
                true,
            )?;
            candidates = merge(candidates, found, -1);
            places.extend(found_places);
        }
        self.walk(candidates, places, false).map(drop)
    }

    /// The newest `window` matches ranked ([`super::Ranking::Recent`]); then, while the limit
    /// is not reached and more matches exist, older matches newest first, in chunks doubling
    /// in size, up to `EXTEND` windows in all.
    pub fn recent(&mut self, sides: &[Side], window: i64) -> Result<(), StoreError> {
        let (candidates, places, mut more) = self.round(sides, i64::MAX, window, true)?;
        let mut below = candidates.iter().map(|c| c.id).min();
        self.walk(candidates, places, !self.filters.narrow())?;
        let cap = window.saturating_mul(EXTEND);
        let (mut read, mut chunk) = (window, window);
        while let Some(oldest) = below.filter(|_| more && read < cap && !self.full()) {
            chunk = chunk.saturating_mul(2).min(cap - read);
            let (candidates, places, more_found) = self.round(sides, oldest, chunk, false)?;
            (more, read) = (more_found, read + chunk);
            below = candidates.iter().map(|c| c.id).min();
            self.walk(candidates, places, !self.filters.narrow())?;
        }
        Ok(())
    }

    /// The newest `limit` matches below rowid `below` from every side, merged; scored when
    /// `rank`. Narrowing filters are applied in SQL (the places come with the matches), else
    /// the windows are bare. Also tells whether any side had more matches than it took.
    fn round(
        &self,
        sides: &[Side],
        below: i64,
        limit: i64,
        rank: bool,
    ) -> Result<(Vec<Candidate>, HashMap<i64, Place>, bool), StoreError> {
        let mut candidates = Vec::new();
        let mut places = HashMap::new();
        let mut more = false;
        for side in sides {
            let words: Vec<&str> = match rank {
                true => side.informative.iter().map(String::as_str).collect(),
                false => Vec::new(),
            };
            let found = if self.filters.narrow() {
                let (found, found_places) = window::filtered(
                    self.conn,
                    side.index,
                    &side.fts,
                    &self.filters,
                    below,
                    limit,
                    false,
                )?;
                places.extend(found_places);
                let ids: Vec<i64> = found.iter().map(|c| c.id).collect();
                scored(self.conn, side.index, &words, &ids)?
            } else if side.single_word && !words.is_empty() {
                rank::scored_window(self.conn, side.index, &side.fts, below, limit)?
                    .into_iter()
                    .map(|(id, score)| Candidate {
                        id,
                        score,
                        index: side.index,
                    })
                    .collect()
            } else {
                let ids = window::bare(self.conn, side.index, &side.fts, below, limit)?;
                scored(self.conn, side.index, &words, &ids)?
            };
            more |= found.len() as i64 == limit;
            candidates = merge(candidates, found, limit);
        }
        Ok((candidates, places, more))
    }

    /// Walk `candidates` best first (ties: newest first), keeping the first admitted message
    /// of each conversation; returns whether filters turned any candidate away. Places not in
    /// `places` are read in batches. `bare`: once a segment whose conversation is taken shows
    /// up again, its other messages in the window are listed (an index range) and skipped.
    fn walk(
        &mut self,
        mut candidates: Vec<Candidate>,
        mut places: HashMap<i64, Place>,
        bare: bool,
    ) -> Result<bool, StoreError> {
        let (Some(low), Some(high)) = (
            candidates.iter().map(|c| c.id).min(),
            candidates.iter().map(|c| c.id).max(),
        ) else {
            return Ok(false);
        };
        // Unscored candidates come newest first, so a chosen segment's newer messages are
        // behind the walk and only its older ones need skipping.
        let scored = candidates.iter().any(|c| c.score != 0.0);
        if scored {
            candidates.sort_unstable_by_key(rank_key);
        }
        // Clustered: segments recur among the candidates (seen once one does, or assumed when
        // most ids in the window's range match), so each chosen segment's other messages are
        // looked up at once and skipped rather than read one by one.
        let mut clustered = bare && high - low + 1 <= 4 * candidates.len() as i64;
        let mut skip = Skip::default();
        let mut listed = HashSet::new();
        let mut turned_away = false;
        for (i, candidate) in candidates.iter().enumerate() {
            if self.full() {
                break;
            }
            if skip.contains(candidate.id) {
                continue;
            }
            if !places.contains_key(&candidate.id) {
                let size = if clustered {
                    CLUSTERED_PLACE_BATCH
                } else {
                    PLACE_BATCH
                };
                let batch: Vec<i64> = candidates[i..]
                    .iter()
                    .map(|c| c.id)
                    .filter(|&id| !skip.contains(id) && !places.contains_key(&id))
                    .take(size)
                    .collect();
                places.extend(rows::places(self.conn, &batch, &self.filters)?);
            }
            let Some(place) = places.remove(&candidate.id) else {
                continue;
            };
            if !place.admitted || self.excluded.contains(&place.segment) {
                turned_away = true;
                continue;
            }
            if self.cjk_rows
                && candidate.index == Index::Plain
                && rows::is_cjk_row(self.conn, candidate.id)?
            {
                continue;
            }
            let conversation = self.conversation(&place)?;
            let new = !self.seen.contains(&conversation);
            clustered |= bare && !new;
            if bare && clustered && listed.insert(place.segment.clone()) {
                let upto = if scored { high } else { candidate.id };
                skip.add(rows::segment_messages(
                    self.conn,
                    &place.segment,
                    low,
                    upto,
                )?);
            }
            if new {
                self.seen.insert(conversation.clone());
                self.chosen.push(Chosen {
                    candidate: *candidate,
                    segment: place.segment,
                    conversation,
                });
            }
        }
        Ok(turned_away)
    }

    /// The conversation (newest segment) of the segment at `place`.
    fn conversation(&mut self, place: &Place) -> Result<String, StoreError> {
        let Some(next) = &place.continued_by else {
            return Ok(place.segment.clone());
        };
        if let Some(known) = self.conversations.get(&place.segment) {
            return Ok(known.clone());
        }
        let newest = rows::newest_segment(self.conn, next)?;
        self.conversations
            .insert(place.segment.clone(), newest.clone());
        Ok(newest)
    }
}

/// Sort key: best (lowest) score first, then newest. Candidates without a score come from
/// windows read newest first, so they need no sorting among themselves.
fn rank_key(candidate: &Candidate) -> (i64, std::cmp::Reverse<i64>) {
    // f64 bits reordered so that integer order is numeric order.
    let bits = candidate.score.to_bits() as i64;
    (
        bits ^ (((bits >> 63) as u64) >> 1) as i64,
        std::cmp::Reverse(candidate.id),
    )
}

/// Candidates for `ids` (newest first) scored by bm25 over `words` (see [`rank::scores`]).
fn scored(
    conn: &Connection,
    index: Index,
    words: &[&str],
    ids: &[i64],
) -> Result<Vec<Candidate>, StoreError> {
    let scores = rank::scores(conn, index, words, ids)?;
    Ok(ids
        .iter()
        .map(|&id| Candidate {
            id,
            score: scores.get(&id).copied().unwrap_or(0.0),
            index,
        })
        .collect())
}

/// Add `more` to `candidates` (both newest first): a message found in both indexes keeps its
/// `messages_cjk` entry; `window` ≥ 0 keeps only that many newest.
fn merge(mut candidates: Vec<Candidate>, more: Vec<Candidate>, window: i64) -> Vec<Candidate> {
    if candidates.is_empty() {
        return more;
    }
    let cjk: HashSet<i64> = more
        .iter()
        .chain(candidates.iter())
        .filter(|c| c.index == Index::Cjk)
        .map(|c| c.id)
        .collect();
    candidates.extend(more);
    candidates.retain(|c| c.index == Index::Cjk || !cjk.contains(&c.id));
    candidates.sort_unstable_by(|a, b| b.id.cmp(&a.id));
    if window >= 0 {
        candidates.truncate(window as usize);
    }
    candidates
}
