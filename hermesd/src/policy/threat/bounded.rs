//! The exact check of a rule with one bounded gap, `A[^c]{0,N}B` (Hermes'
//! `curl\s+[^\n]{0,2048}\$\{?\w*(KEY|…)`), without an automaton that counts.
//!
//! A DFA of the whole pattern keeps, in its state, how far into the gap every start so far is:
//! on text crowded by `A` it needs a new state at nearly every byte. Here the gap is measured
//! instead. Every start of an `A` match is found by `A`'s regex (with its literal prefilter),
//! every end of an `A` match from that start by a small anchored lazy DFA of `A` alone, and for
//! an end `p` the gap reaches `min(p + N, the first c at or after p)`. The rule matches exactly
//! when, for some end `p`, the first start of a `B` match at or after `p` is within that reach:
//! a match of the whole pattern is an `A` match ending at `p`, a gap `[p, q)` of at most N bytes
//! without `c`, and a `B` match starting at `q`, and the first such `q` is the best one for `p`.
//! Where `B` starts is found by `B`'s own regex and remembered, so each stretch of the text is
//! read about once whatever the number of anchors.
//!
//! The crowd guard of `gap` still runs (in the same pass, on the same starts), so text crowded
//! by anchors is refused as before; and the search has a budget of steps linear in the text,
//! past which it gives up and the rule counts as matching (fail closed; ordinary text needs
//! about one step a byte).

use regex::bytes::{Regex, RegexBuilder};
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::{Anchored, Input, MatchKind};

use super::gap::{Crowd, Gap};

/// Steps a search may take for each byte of text, and on top of those (then it gives up).
const STEPS_PER_BYTE: usize = 4;
const STEPS_BASE: usize = 64 * 1024;
/// Cache refills the small DFA of `A` may need before the search gives up.
const ENDS_REFILLS: usize = 3;

/// What a search found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The exact pattern matches.
    Match,
    /// It does not.
    Clear,
    /// The gap is crowded by its anchors (see `gap`): refused without an answer.
    Crowded,
    /// The budget ran out: refused without an answer.
    GaveUp,
}

impl Outcome {
    /// Whether the rule counts as matching: a match, and every search without an answer.
    pub fn counts_as_match(self) -> bool {
        self != Outcome::Clear
    }
}

/// A rule of the form `A[^c]{0,N}B`, ready to search.
pub(crate) struct Bounded {
    gap: Gap,
    /// `A`, anchored, reporting every match end (not only the leftmost-first one).
    ends: DFA,
    /// `B`.
    tail: Regex,
}

impl Bounded {
    /// `pattern` split at its bounded gap; `None` unless it has exactly one, at the top level
    /// (not inside a group or an alternation), with no quantifier after it and no flags that
    /// would reach across it. Other rules keep the DFA check.
    pub fn of(pattern: &str) -> Option<Self> {
        let (gap, head, tail) = Gap::split(pattern)?;
        let quantified = tail.starts_with(['?', '*', '+', '{']);
        if quantified || Gap::of(tail).is_some() || !is_whole(head) || !is_whole(tail) {
            return None;
        }
        let config = DFA::config()
            .match_kind(MatchKind::All)
            .minimum_cache_clear_count(Some(ENDS_REFILLS));
        let ends = super::engine::byte_dfa(head, config).ok()?;
        let tail = RegexBuilder::new(tail)
            .case_insensitive(true)
            .unicode(false)
            .build()
            .ok()?;
        Some(Self { gap, ends, tail })
    }

    /// Whether the exact pattern matches somewhere in `haystack` (see the module comment).
    pub fn search(&self, haystack: &[u8]) -> Outcome {
        let steps = haystack
            .len()
            .saturating_mul(STEPS_PER_BYTE)
            .saturating_add(STEPS_BASE);
        self.search_within(haystack, steps)
    }

    /// [`Bounded::search`] with a budget of `steps`.
    pub fn search_within(&self, haystack: &[u8], steps: usize) -> Outcome {
        let mut search = Search {
            rule: self,
            haystack,
            cache: self.ends.create_cache(),
            steps,
            tail: None,
            excluded: None,
        };
        match search.run() {
            Ok(true) => Outcome::Match,
            Ok(false) => Outcome::Clear,
            Err(stop) => stop,
        }
    }
}

/// Whether `piece` is a regex on its own that concatenates with its neighbours unchanged:
/// balanced groups, no `|` outside them, and no group but `(?:` (no inline flags).
fn is_whole(piece: &str) -> bool {
    let mut depth = 0usize;
    let mut chars = piece.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' => {
                // A class, to its closing bracket (a `]` first, or after `^`, is a member).
                let mut nested = 1usize;
                chars.next_if_eq(&'^');
                chars.next_if_eq(&']');
                while nested > 0 {
                    match chars.next() {
                        Some('\\') => {
                            chars.next();
                        }
                        Some('[') => nested += 1,
                        Some(']') => nested -= 1,
                        Some(_) => {}
                        None => return false,
                    }
                }
            }
            '(' => {
                if chars.next_if_eq(&'?').is_some() && chars.next_if_eq(&':').is_none() {
                    return false;
                }
                depth += 1;
            }
            ')' => match depth.checked_sub(1) {
                Some(outer) => depth = outer,
                None => return false,
            },
            '|' if depth == 0 => return false,
            _ => {}
        }
    }
    depth == 0
}

/// One search's state: the steps left, and what it learnt about the text so far.
struct Search<'a> {
    rule: &'a Bounded,
    haystack: &'a [u8],
    cache: Cache,
    steps: usize,
    /// `(from, first)`: the first start of a `B` match at or after `from` (`None`: there is none).
    tail: Option<(usize, Option<usize>)>,
    /// `(from, next)`: the first excluded byte at or after `from` (the text's length if none).
    excluded: Option<(usize, usize)>,
}

impl Search<'_> {
    fn spend(&mut self, steps: usize) -> Result<(), Outcome> {
        self.steps = self.steps.checked_sub(steps).ok_or(Outcome::GaveUp)?;
        Ok(())
    }

    /// Every start of an `A` match, in order: counted for the crowd guard as `find_iter` would
    /// report them, and each searched from.
    fn run(&mut self) -> Result<bool, Outcome> {
        let (haystack, gap) = (self.haystack, &self.rule.gap);
        let mut crowd = Crowd::new(gap);
        // Where `find_iter` would look next: a start before it lies inside a reported match.
        let mut listed_to = 0;
        let mut at = 0;
        while let Some(found) = gap.anchor.find_at(haystack, at) {
            self.spend(found.end() - at + 1)?;
            let start = found.start();
            if start >= listed_to {
                if crowd.push(haystack, start) {
                    return Err(Outcome::Crowded);
                }
                listed_to = found.end().max(start + 1);
            }
            if self.an_end_reaches_the_tail(start)? {
                return Ok(true);
            }
            at = start + 1;
            if at > haystack.len() {
                break;
            }
        }
        Ok(false)
    }

    /// Whether an `A` match from `start` ends where the gap reaches a start of `B`.
    fn an_end_reaches_the_tail(&mut self, start: usize) -> Result<bool, Outcome> {
        let (haystack, dfa) = (self.haystack, &self.rule.ends);
        let input = Input::new(haystack).range(start..).anchored(Anchored::Yes);
        let mut state = dfa
            .start_state_forward(&mut self.cache, &input)
            .map_err(|_| Outcome::GaveUp)?;
        for at in start..=haystack.len() {
            self.spend(1)?;
            // Matches are reported one byte late: a match state after the byte at `at` (or
            // after the end) is a match ending at `at`.
            state = match haystack.get(at) {
                Some(&byte) => dfa.next_state(&mut self.cache, state, byte),
                None => dfa.next_eoi_state(&mut self.cache, state),
            }
            .map_err(|_| Outcome::GaveUp)?;
            if state.is_match() && self.reaches_the_tail(at)? {
                return Ok(true);
            }
            if state.is_quit() {
                return Err(Outcome::GaveUp);
            }
            if state.is_dead() {
                break;
            }
        }
        Ok(false)
    }

    /// Whether a gap from `end` (where an `A` match ends) reaches a start of `B`.
    fn reaches_the_tail(&mut self, end: usize) -> Result<bool, Outcome> {
        let reach = end
            .saturating_add(self.rule.gap.width)
            .min(self.next_excluded(end)?);
        Ok(self.first_tail(end)?.is_some_and(|start| start <= reach))
    }

    /// The first excluded byte at or after `from` (the text's length if none).
    fn next_excluded(&mut self, from: usize) -> Result<usize, Outcome> {
        if let Some((known, next)) = self.excluded
            && known <= from
            && from <= next
        {
            return Ok(next);
        }
        let rest = self.haystack.get(from..).unwrap_or_default();
        let next =
            memchr::memchr(self.rule.gap.excluded, rest).map_or(self.haystack.len(), |i| from + i);
        // memchr reads many bytes a step.
        self.spend((next - from) / 16 + 1)?;
        self.excluded = Some((from, next));
        Ok(next)
    }

    /// The first start of a `B` match at or after `from`.
    fn first_tail(&mut self, from: usize) -> Result<Option<usize>, Outcome> {
        if let Some((known, first)) = self.tail
            && known <= from
            && first.is_none_or(|first| from <= first)
        {
            return Ok(first);
        }
        let found = self.rule.tail.find_at(self.haystack, from);
        let read_to = found.map_or(self.haystack.len(), |m| m.end());
        self.spend(read_to.saturating_sub(from) + 1)?;
        let first = found.map(|m| m.start());
        self.tail = Some((from, first));
        Ok(first)
    }
}

#[cfg(test)]
#[path = "bounded_tests.rs"]
mod tests;
