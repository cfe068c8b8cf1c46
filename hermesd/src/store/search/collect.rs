//! Gathering hits: windows of matches from each index, ranked, then walked best first keeping
//! the first admitted message of each conversation until the limit.
//!
//! Without narrowing filters the windows are bare (read from the FTS5 index alone) and the walk
//! reads where a message is (segment, filters) only when it reaches it, a few at a time. With
//! them (role, source, dates) the windows are joined and filtered in SQL, so they hold the
//! newest matches that pass. The walk skips messages of conversations already taken without
//! reading them, by listing a segment's messages from the `messages_by_session` index.

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
const DENSE_PLACE_BATCH: usize = 1;
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

/// What [`Collector::ranked_round`] read: candidates newest first, the places that came with
/// them, and whether any index had more matches than it took.
struct Round {
    candidates: Vec<Candidate>,
    places: HashMap<i64, Place>,
    more: bool,
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
        self.walk(candidates, places, false)
    }

    /// The newest `window` matches ranked ([`super::Ranking::Recent`]); then, while the limit
    /// is not reached and more matches exist, older matches newest first, in chunks doubling
    /// in size, up to `EXTEND` windows in all. With no word to rank by, every match ties and
    /// the whole walk is newest first.
    pub fn recent(&mut self, sides: &[Side], window: i64) -> Result<(), StoreError> {
        let narrow = self.filters.narrow();
        let mut below = i64::MAX;
        let mut rest = window.saturating_mul(EXTEND);
        let mut chunk = window;
        if sides.iter().any(|side| !side.informative.is_empty()) {
            let Round {
                candidates,
                places,
                more,
            } = self.ranked_round(sides, window)?;
            let Some(oldest) = candidates.iter().map(|c| c.id).min() else {
                return Ok(());
            };
            self.walk(candidates, places, !narrow)?;
            if !more || self.full() {
                return Ok(());
            }
            (below, rest, chunk) = (oldest, rest - window, window.saturating_mul(2));
        }
        // One open statement per side, read a chunk at a time: re-opening below the last id
        // would make FTS5 seek backwards through its doclists again each time.
        let conn = self.conn;
        let mut statements = sides
            .iter()
            .map(|side| window::stream_statement(conn, side.index, narrow))
            .collect::<Result<Vec<_>, _>>()?;
        let mut streams = Vec::with_capacity(sides.len());
        for (statement, side) in statements.iter_mut().zip(sides) {
            let rows =
                window::open_stream(statement, &side.fts, &self.filters, narrow, below, rest)?;
            streams.push((rows, side.index, true));
        }
        while rest > 0 && !self.full() {
            let count = chunk.min(rest);
            let mut candidates = Vec::new();
            let mut places = HashMap::new();
            for (rows, index, open) in streams.iter_mut().filter(|(_, _, open)| *open) {
                let mut found = Vec::new();
                let read = window::pull(rows, *index, narrow, count, &mut found, &mut places)?;
                *open = read == count;
                candidates = merge(candidates, found, count);
            }
            if candidates.is_empty() {
                break;
            }
            rest -= count;
            chunk = chunk.saturating_mul(2);
            self.walk(candidates, places, !narrow)?;
            if streams.iter().all(|(_, _, open)| !open) {
                break;
            }
        }
        Ok(())
    }

    /// The newest `limit` matches from every side, merged and scored (see [`rank`]). Narrowing
    /// filters are applied in SQL (the places come with the matches), else the windows are
    /// bare. Also tells whether any side had more matches than it took.
    fn ranked_round(&self, sides: &[Side], limit: i64) -> Result<Round, StoreError> {
        let mut candidates = Vec::new();
        let mut places = HashMap::new();
        let mut more = false;
        for side in sides {
            let words: Vec<&str> = side.informative.iter().map(String::as_str).collect();
            let found = if self.filters.narrow() {
                let (found, found_places) = window::filtered(
                    self.conn,
                    side.index,
                    &side.fts,
                    &self.filters,
                    i64::MAX,
                    limit,
                    false,
                )?;
                places.extend(found_places);
                let ids: Vec<i64> = found.iter().map(|c| c.id).collect();
                scored(self.conn, side.index, &words, &ids)?
            } else if side.single_word && !words.is_empty() {
                rank::scored_window(self.conn, side.index, &side.fts, limit)?
                    .into_iter()
                    .map(|(id, score)| Candidate {
                        id,
                        score,
                        index: side.index,
                    })
                    .collect()
            } else if !side.single_word {
                let (ids, more_found) =
                    window::bare_selective(self.conn, side.index, &side.fts, limit)?;
                more |= more_found;
                scored(self.conn, side.index, &words, &ids)?
            } else {
                let ids = window::bare(self.conn, side.index, &side.fts, i64::MAX, limit)?;
                scored(self.conn, side.index, &words, &ids)?
            };
            more |= found.len() as i64 == limit;
            candidates = merge(candidates, found, limit);
        }
        Ok(Round {
            candidates,
            places,
            more,
        })
    }

    /// Walk `candidates` best first (ties: newest first), keeping the first admitted message
    /// of each conversation. Places not in `places` are read in batches. `bare` (the places are
    /// not known beforehand): messages of a segment whose conversation is taken are listed
    /// and skipped, at once in a dense window, else once the segment has turned up twice more.
    fn walk(
        &mut self,
        mut candidates: Vec<Candidate>,
        mut places: HashMap<i64, Place>,
        bare: bool,
    ) -> Result<(), StoreError> {
        let (Some(low), Some(high)) = (
            candidates.iter().map(|c| c.id).min(),
            candidates.iter().map(|c| c.id).max(),
        ) else {
            return Ok(());
        };
        // Unscored candidates come newest first, so a chosen segment's newer messages are
        // behind the walk and only its older ones need skipping.
        let scored = candidates.iter().any(|c| c.score != 0.0);
        if scored {
            candidates.sort_unstable_by_key(rank_key);
        }
        // Dense: at least one id in eight of the window's range matches.
        let dense = bare && high - low < 8 * candidates.len() as i64;
        let mut repeats: HashMap<String, u32> = HashMap::new();
        let mut skip = Skip::default();
        let mut listed = HashSet::new();
        for (i, candidate) in candidates.iter().enumerate() {
            if self.full() {
                break;
            }
            if skip.contains(candidate.id) {
                continue;
            }
            if !places.contains_key(&candidate.id) {
                let size = if dense {
                    DENSE_PLACE_BATCH
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
            let repeated = !new && {
                let count = repeats.entry(place.segment.clone()).or_default();
                *count += 1;
                *count >= 2
            };
            if bare && (dense || repeated) && listed.insert(place.segment.clone()) {
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
        Ok(())
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
    candidates.sort_unstable_by_key(|c| std::cmp::Reverse(c.id));
    if window >= 0 {
        candidates.truncate(window as usize);
    }
    candidates
}
