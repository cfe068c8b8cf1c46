//! The one matching engine of the threat scanner: a table of rules compiled once into a
//! `RegexSet`, so a text is read once whatever the number of rules, and each rule's own regex,
//! compiled on first use, for the few rules the set reports.
//!
//! A rule whose set pattern is a superset (Hermes' bounded gaps run unbounded, see `patterns`)
//! is confirmed by its exact pattern on a lazy DFA alone. A bounded gap can make that automaton
//! need a new state at every byte of a text built for it (`curl curl curl …` with a secret
//! name far away); then the search gives up after a few cache refills instead of falling back
//! to a slower engine, and the rule counts as matching: the time stays linear, and a text made
//! to defeat the check is refused, never let through. In front of that check, a guard (`gap`)
//! refuses a text whose gap is crowded by its anchors (dozens of `curl` within 2,048 characters
//! of one line) after one cheap pass, without building the automaton at all. A rule with one
//! bounded gap at the top level (all of Hermes' but two) skips that automaton: `bounded`
//! measures the gap from each anchor instead, exactly, with the same guard and a budget of its
//! own (fail closed).
//!
//! Everything is byte-oriented and ASCII (`\w`, `\s`, `\b` are ASCII, case folding is ASCII):
//! the lazy DFA then stays small and fast on any input. Callers fold non-ASCII text first (see
//! `fold`), so the ASCII classes still mean what Hermes' Unicode patterns mean.

use std::sync::OnceLock;

use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder, SetMatches};
use regex_automata::{Input, hybrid::dfa::DFA, nfa::thompson, util::syntax};

use super::bounded::{Bounded, Outcome};
use super::gap::Gap;

/// NFA/DFA budget of one compiled set (the default 10 MiB is too small for ~140 rules).
const SET_SIZE_LIMIT: usize = 64 * 1024 * 1024;
/// Budget of one rule's own regex (Hermes' bounded gaps, `[^\n]{0,2048}`, need a few MiB).
const RULE_SIZE_LIMIT: usize = 32 * 1024 * 1024;
/// State cache of one exact check's lazy DFA. Ordinary text needs a few hundred states; the
/// check gives up after [`CHECK_REFILLS`] refills, a fixed cost (a few milliseconds) whatever
/// the text's length.
const CHECK_CACHE: usize = 512 * 1024;
/// Cache refills an exact check may need before it gives up (and the rule counts as matching).
const CHECK_REFILLS: usize = 3;

/// One rule as the engine sees it: the pattern the set runs, and the pattern that decides.
pub(crate) struct Pattern {
    /// Run in the set: the rule itself, or a cheaper superset of it.
    pub set: String,
    /// When the set's pattern is only a superset: the exact pattern, run on the set's hits.
    pub exact: Option<String>,
}

impl Pattern {
    /// A rule the set runs as it is.
    pub fn plain(pattern: &str) -> Self {
        Self {
            set: pattern.to_owned(),
            exact: None,
        }
    }
}

/// A compiled rule table.
pub(crate) struct RuleSet {
    set: RegexSet,
    rules: Vec<LazyRule>,
}

/// A rule's own pattern, compiled when first needed: as a regex (for match positions) or, to
/// confirm a set hit, as a lazy DFA.
struct LazyRule {
    source: String,
    /// Whether `source` is stricter than the set's pattern (a set hit must be confirmed).
    confirm: bool,
    regex: OnceLock<Option<Regex>>,
    check: OnceLock<Option<DFA>>,
    /// The guard in front of `check` (see `gap`).
    gap: OnceLock<Option<Gap>>,
    /// For a rule with one bounded gap, the exact search that replaces `gap` and `check`.
    bounded: OnceLock<Option<Bounded>>,
}

impl LazyRule {
    fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| compile_rule(&self.source))
            .as_ref()
    }

    /// Whether the exact pattern matches somewhere in `haystack`; `true` when it failed to
    /// compile, its gap's anchors crowd (see `gap`) or the search gave up (fail closed).
    fn confirms(&self, haystack: &[u8]) -> bool {
        if let Some(bounded) = self.bounded.get_or_init(|| Bounded::of(&self.source)) {
            let outcome = bounded.search(haystack);
            match outcome {
                Outcome::Crowded => tracing::warn!(
                    "threat rule's bounded gap crowded by its anchors; counted as a match"
                ),
                Outcome::GaveUp => {
                    tracing::warn!("threat rule's bounded search gave up; counted as a match");
                }
                Outcome::Match | Outcome::Clear => {}
            }
            return outcome.counts_as_match();
        }
        let gap = self.gap.get_or_init(|| Gap::of(&self.source));
        if gap.as_ref().is_some_and(|gap| gap.crowded(haystack)) {
            tracing::warn!("threat rule's bounded gap crowded by its anchors; counted as a match");
            return true;
        }
        self.check_confirms(haystack)
    }

    /// The exact check alone, on the lazy DFA with its fixed budget.
    fn check_confirms(&self, haystack: &[u8]) -> bool {
        let check = self.check.get_or_init(|| compile_check(&self.source));
        let Some(dfa) = check else {
            return true;
        };
        let mut cache = dfa.create_cache();
        match dfa.try_search_fwd(&mut cache, &Input::new(haystack).earliest(true)) {
            Ok(found) => found.is_some(),
            Err(error) => {
                tracing::warn!(%error, "threat rule check gave up; counted as a match");
                true
            }
        }
    }
}

/// A lazy DFA of `pattern` over bytes, matched as the rules match (case-insensitive, no
/// Unicode classes, any byte), configured by `config`.
pub(super) fn byte_dfa(
    pattern: &str,
    config: regex_automata::hybrid::dfa::Config,
) -> Result<DFA, String> {
    DFA::builder()
        .configure(config)
        .syntax(
            syntax::Config::new()
                .case_insensitive(true)
                .unicode(false)
                .utf8(false),
        )
        .thompson(thompson::Config::new().utf8(false))
        .build(pattern)
        .map_err(|e| e.to_string())
}

fn compile_check(pattern: &str) -> Option<DFA> {
    let config = DFA::config()
        .cache_capacity(CHECK_CACHE)
        .minimum_cache_clear_count(Some(CHECK_REFILLS));
    byte_dfa(pattern, config)
        .inspect_err(|error| tracing::error!(%error, "threat rule check failed to compile"))
        .ok()
}

fn compile_rule(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .size_limit(RULE_SIZE_LIMIT)
        .build()
        .inspect_err(|error| tracing::error!(%error, "threat rule failed to compile"))
        .ok()
}

impl RuleSet {
    /// Compiles `patterns` (in order; indexes stay the table's). `Err` names what failed.
    pub fn build(patterns: Vec<Pattern>) -> Result<Self, String> {
        let set = RegexSetBuilder::new(patterns.iter().map(|p| p.set.as_str()))
            .case_insensitive(true)
            .unicode(false)
            .size_limit(SET_SIZE_LIMIT)
            .dfa_size_limit(SET_SIZE_LIMIT)
            .build()
            .map_err(|e| format!("compile rule set: {e}"))?;
        let rules = patterns
            .into_iter()
            .map(|p| LazyRule {
                confirm: p.exact.is_some(),
                source: p.exact.unwrap_or(p.set),
                regex: OnceLock::new(),
                check: OnceLock::new(),
                gap: OnceLock::new(),
                bounded: OnceLock::new(),
            })
            .collect();
        Ok(Self { set, rules })
    }

    /// Which rules' set patterns match somewhere in `haystack` (one pass).
    pub fn candidates(&self, haystack: &[u8]) -> SetMatches {
        self.set.matches(haystack)
    }

    /// The indexes of the rules that match `haystack`: the set's hits, each confirmed by the
    /// rule's exact pattern where the set ran a superset. A rule whose regex failed to compile
    /// counts as matching (fail closed).
    pub fn matching(&self, haystack: &[u8]) -> Vec<usize> {
        let hits = self.candidates(haystack);
        hits.iter()
            .filter(|&index| {
                let rule = &self.rules[index];
                !rule.confirm || rule.confirms(haystack)
            })
            .collect()
    }

    /// Rule `index`'s own regex (its exact pattern), for callers that need match positions;
    /// `None` when it failed to compile.
    pub fn regex(&self, index: usize) -> Option<&Regex> {
        self.rules.get(index)?.regex()
    }

    /// Whether every rule's own regex, and every check and its gap's guard, compiles (for the
    /// tests).
    #[cfg(test)]
    pub fn all_compile(&self) -> bool {
        self.rules.iter().all(|rule| {
            rule.regex().is_some()
                && (!rule.confirm
                    || (compile_check(&rule.source).is_some() && Gap::of(&rule.source).is_some()))
        })
    }

    /// Rule `index`'s confirmation with the guard and without it (exact check alone), for the
    /// tests comparing them.
    #[cfg(test)]
    pub fn confirmations(&self, index: usize, haystack: &[u8]) -> Option<(bool, bool)> {
        let rule = self.rules.get(index)?;
        Some((rule.confirms(haystack), rule.check_confirms(haystack)))
    }
}

/// Compiles a helper regex over text (case-insensitive, Unicode); `None` only on a bug the
/// tests catch. The rules' post-filters, redaction and HTML-comment reading use it.
pub(crate) fn compile(pattern: &str) -> Option<regex::Regex> {
    regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .ok()
}
