//! A guard in front of the exact check of a bounded gap (`curl\s+[^\n]{0,2048}…`, see
//! `engine`): the starts of the text before the gap (its anchor, `curl\s+`) are counted, and a
//! text with more than [`CROWD_LIMIT`] of them within one gap's width, on one stretch the gap
//! may cross (no `\n` for `[^\n]`), is refused without running the check.
//!
//! Why: each such start is a live count in the check's automaton, so a crowd of them makes it
//! build a new state at nearly every byte until its fixed budget runs out (milliseconds for a
//! `curl curl curl …` line). Text with dozens of `curl`s inside 2,048 characters of one line
//! is itself built against the pattern, and refusing it is failing closed: the guard only ever
//! adds refusals, never removes one. Its own cost is one pass of a small regex, stopping at the
//! first crowd; text below the limit goes on to the exact check, which keeps its own fixed
//! budget (and fails closed when it is spent).

use std::collections::VecDeque;

use regex::bytes::{Regex, RegexBuilder};

/// Starts of a gap's anchor allowed within one gap's width (more: refused). Ordinary text
/// (shell one-liners, prose) has a handful; `curl ` repeated has 400 in 2,048 characters.
const CROWD_LIMIT: usize = 32;

/// A rule's first bounded gap, `[^c]{0,N}`, and the pattern before it.
pub(crate) struct Gap {
    /// The pattern before the gap (its anchor).
    pub(super) anchor: Regex,
    /// The one byte the gap does not cross (`\n` or `>`).
    pub(super) excluded: u8,
    /// The gap's bound, N (one byte a character after folding).
    pub(super) width: usize,
}

impl Gap {
    /// The first bounded gap of `pattern` and its anchor; `None` when there is none, or it is
    /// not of the form `[^c]{0,N}` with one excluded character (then only the check runs).
    pub fn of(pattern: &str) -> Option<Self> {
        Self::split(pattern).map(|(gap, _, _)| gap)
    }

    /// [`Gap::of`], with the text of `pattern` before the gap and after it.
    pub fn split(pattern: &str) -> Option<(Self, &str, &str)> {
        let at = pattern.find("[^")?;
        let rest = pattern.get(at + 2..)?;
        let close = rest.find("]{0,")?;
        let excluded = match rest.get(..close)? {
            r"\n" => b'\n',
            class if class.len() == 1 && class != "\\" => *class.as_bytes().first()?,
            _ => return None,
        };
        let bound = rest.get(close + 4..)?;
        let brace = bound.find('}')?;
        let width = bound.get(..brace)?.parse().ok()?;
        let head = pattern.get(..at)?;
        let anchor = RegexBuilder::new(head)
            .case_insensitive(true)
            .unicode(false)
            .build()
            .ok()?;
        let gap = Self {
            anchor,
            excluded,
            width,
        };
        Some((gap, head, bound.get(brace + 1..)?))
    }

    /// Whether more than [`CROWD_LIMIT`] anchors start within one gap's width of each other,
    /// with no excluded byte between them.
    pub fn crowded(&self, haystack: &[u8]) -> bool {
        let mut crowd = Crowd::new(self);
        self.anchor
            .find_iter(haystack)
            .any(|found| crowd.push(haystack, found.start()))
    }
}

/// The anchors' starts counted for [`Gap::crowded`], one at a time, in the order `find_iter`
/// reports them (the exact search in `bounded` counts the same starts in its own pass).
pub(crate) struct Crowd<'g> {
    gap: &'g Gap,
    window: VecDeque<usize>,
}

impl<'g> Crowd<'g> {
    pub fn new(gap: &'g Gap) -> Self {
        Self {
            gap,
            window: VecDeque::with_capacity(CROWD_LIMIT + 1),
        }
    }

    /// Counts an anchor starting at `start` (after every earlier one); `true` once more than
    /// [`CROWD_LIMIT`] start within one gap's width with no excluded byte between them.
    pub fn push(&mut self, haystack: &[u8], start: usize) -> bool {
        if let Some(&last) = self.window.back() {
            let between = haystack.get(last..start).unwrap_or_default();
            if memchr::memchr(self.gap.excluded, between).is_some() {
                self.window.clear();
            }
        }
        while self
            .window
            .front()
            .is_some_and(|&first| start.saturating_sub(first) > self.gap.width)
        {
            self.window.pop_front();
        }
        self.window.push_back(start);
        self.window.len() > CROWD_LIMIT
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::super::engine::{Pattern, RuleSet};
    use super::*;

    const CURL: &str = r"curl\s+[^\n]{0,2048}\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)";

    fn curl_rule() -> RuleSet {
        RuleSet::build(vec![Pattern {
            set: CURL.replace("]{0,2048}", "]*"),
            exact: Some(CURL.to_owned()),
        }])
        .unwrap()
    }

    #[test]
    fn the_first_bounded_gap_and_its_anchor_are_found() {
        let gap = Gap::of(CURL).unwrap();
        assert_eq!((gap.excluded, gap.width), (b'\n', 2048));
        assert!(gap.anchor.is_match(b"CURL \t"));
        let comment = Gap::of(r"<!--[^>]{0,512}(?:ignore|secret)[^>]{0,512}-->").unwrap();
        assert_eq!((comment.excluded, comment.width), (b'>', 512));
        assert!(Gap::of(r"rm\s+-rf\s+/").is_none());
        assert!(Gap::of(r"a[^xy]{0,9}b").is_none());
    }

    #[test]
    fn a_crowded_gap_is_refused_as_the_exact_check_refuses_it() {
        // bench-policy's row: the exact check gives up (fail closed); the guard refuses first.
        let text = format!("{}{} $API_KEY\n", "curl ".repeat(20_000), "x".repeat(2_100));
        assert!(Gap::of(CURL).unwrap().crowded(text.as_bytes()));
        assert_eq!(
            curl_rule().confirmations(0, text.as_bytes()),
            Some((true, true))
        );
        // As many starts on lines of their own, or spread wider than the gap, are no crowd.
        let lines = format!(
            "{}curl {} $API_KEY",
            "curl x\n".repeat(2_000),
            "x".repeat(2_100)
        );
        assert!(!Gap::of(CURL).unwrap().crowded(lines.as_bytes()));
        let spread = format!("curl {}", "x".repeat(100)).repeat(100);
        assert!(!Gap::of(CURL).unwrap().crowded(spread.as_bytes()));
    }

    #[test]
    fn the_guard_agrees_with_the_exact_check_below_the_limit_and_never_lets_more_through() {
        const PIECES: &[&str] = &["curl ", "CURL\t", "x", "xxxxxxxxxx", "\n", " $API_KEY", " "];
        let rules = curl_rule();
        let gap = Gap::of(CURL).unwrap();
        let mut rng = fastrand::Rng::with_seed(0x2545_f491_4f6c_dd1d);
        let mut next = move || rng.u64(..);
        let (mut crowded, mut clear) = (0, 0);
        for _ in 0..400 {
            let len = next() % 120 + 1;
            let mut text: String = (0..len)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            if next() % 2 == 0 {
                text.insert_str(text.len() / 2, &"y".repeat(2_100));
            }
            if next() % 3 == 0 {
                // About the limit: a crowd or not, depending on the pieces around it.
                let starts = usize::try_from(next() % 12).unwrap() + 26;
                text.insert_str(0, &"curl ".repeat(starts));
            }
            let (fast, slow) = rules.confirmations(0, text.as_bytes()).unwrap();
            if gap.crowded(text.as_bytes()) {
                crowded += 1;
                assert!(fast, "{text:?}");
            } else {
                clear += 1;
                assert_eq!(fast, slow, "{text:?}");
            }
            assert!(fast || !slow, "{text:?}");
        }
        assert!(crowded > 0 && clear > 0, "{crowded} crowded, {clear} clear");
    }
}
