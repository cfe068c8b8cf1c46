//! Tests of the bounded search: which rules get it, and its verdicts against the exact regex
//! (the whole pattern, bounded gap and all, on the regex crate) on random and adversarial text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use regex::bytes::{Regex, RegexBuilder};

use super::super::gap::Gap;
use super::super::patterns::bounded_patterns;
use super::*;

fn exact(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .size_limit(32 * 1024 * 1024)
        .build()
        .unwrap()
}

/// The search's verdict, `None` when it refused without an answer (a crowd).
fn verdict(rule: &Bounded, text: &[u8]) -> Option<bool> {
    match rule.search(text) {
        Outcome::Match => Some(true),
        Outcome::Clear => Some(false),
        Outcome::Crowded => None,
        Outcome::GaveUp => panic!("gave up on {:?}", String::from_utf8_lossy(text)),
    }
}

/// Asserts the search's verdict on `text` is the exact regex's, or a refusal the crowd guard
/// makes too (never one the guard does not make); returns whether it was a crowd.
fn agrees(pattern: &str, rule: &Bounded, regex: &Regex, text: &[u8]) -> bool {
    let crowded = Gap::of(pattern).unwrap().crowded(text);
    let shown = String::from_utf8_lossy(text);
    match verdict(rule, text) {
        Some(found) => {
            assert_eq!(found, regex.is_match(text), "{pattern} on {shown:?}");
            assert!(
                found || !crowded,
                "{pattern}: a crowd let through on {shown:?}"
            );
            false
        }
        None => {
            assert!(crowded, "{pattern}: refused without a crowd on {shown:?}");
            true
        }
    }
}

#[test]
fn every_rule_with_one_top_level_gap_gets_the_search() {
    let patterns = bounded_patterns();
    assert!(patterns.len() >= 9, "{patterns:?}");
    for pattern in &patterns {
        let gaps = pattern.matches("]{0,").count();
        assert_eq!(Bounded::of(pattern).is_some(), gaps == 1, "{pattern}");
    }
    assert!(Bounded::of(r"a|b[^\n]{0,4}c").is_none());
    assert!(Bounded::of(r"(a[^\n]{0,4}c)").is_none());
    assert!(Bounded::of(r"a[^\n]{0,4}?c").is_none());
    assert!(Bounded::of(r"(?i)a[^\n]{0,4}c").is_none());
    assert!(Bounded::of(r"a[^\n]{0,4}(c|d)").is_some());
}

#[test]
fn pieces_are_whole_only_at_the_top_level() {
    for whole in [
        r"curl\s+",
        r"(a|b)\s+",
        r#"["'()|]"#,
        r"[]|]x",
        r"[^]|]",
        r"\(\|",
        r"[a[|]]",
    ] {
        assert!(is_whole(whole), "{whole}");
    }
    for broken in [
        r"a|b",
        r"(a",
        r"a)",
        r"(?i)a",
        r"(?P<n>a)",
        r"[a",
        r"x(?s:.)|y",
    ] {
        assert!(!is_whole(broken), "{broken}");
    }
}

/// Pieces of text for every rule: anchors, tails, near misses, separators, case variants.
const PIECES: &[&str] = &[
    "curl ",
    "CURL\t",
    "curl",
    "wget ",
    "cat ",
    "cat\n",
    "send ",
    "post ",
    " to ",
    " at ",
    "https://",
    "http:/",
    "$API_KEY",
    "${TOKEN}",
    "$",
    "{",
    "KEY",
    "_",
    "key",
    ".env",
    "credentials",
    ".pgpass",
    "update ",
    "add to ",
    "add  to\t",
    "write ",
    "AGENTS.md",
    ".hermes/config.yaml",
    ".hermes/SOUL.md",
    "<div style='",
    "< div  style = \"",
    "<",
    "div",
    "display: none",
    "display :none",
    ">",
    "\n",
    " ",
    "  ",
    "\t",
    "x",
    "word ",
    "ab",
    "abcde",
    "f",
    "a",
    "aa",
    "a f",
    "\r",
    "\x0b",
];

/// The pieces in which `pattern`'s anchor or its tail (the parts around the gap) match.
fn pieces_for(pattern: &str) -> Vec<&'static str> {
    let (_, head, tail) = Gap::split(pattern).unwrap();
    let (head, tail) = (exact(head), exact(tail));
    let relevant =
        |piece: &&str| head.is_match(piece.as_bytes()) || tail.is_match(piece.as_bytes());
    PIECES.iter().copied().filter(relevant).collect()
}

/// Random text: pieces (half of them from `relevant`), now and then a filler about one of
/// `widths` long.
fn random_text(next: &mut impl FnMut() -> u64, relevant: &[&str], widths: &[usize]) -> Vec<u8> {
    let len = next() % 40 + 1;
    let mut text = Vec::new();
    for _ in 0..len {
        if next().is_multiple_of(12) {
            let width = widths[(next() % widths.len() as u64) as usize];
            let around = usize::try_from(next() % 7).unwrap();
            let filler = if next().is_multiple_of(2) { b'y' } else { b' ' };
            text.extend(std::iter::repeat_n(
                filler,
                (width + around).saturating_sub(3),
            ));
        } else if next().is_multiple_of(2) {
            text.extend_from_slice(relevant[(next() % relevant.len() as u64) as usize].as_bytes());
        } else {
            text.extend_from_slice(PIECES[(next() % PIECES.len() as u64) as usize].as_bytes());
        }
    }
    text
}

/// Rules of every shape, with small gaps so random text meets the bound often, and Hermes'
/// own rules.
/// Each with the number of random texts to try (fewer for Hermes' wide gaps: the exact regex is
/// slow on them in a debug build).
fn rules_under_test() -> Vec<(String, usize, usize)> {
    let small = [
        (r"curl\s+[^\n]{0,8}\$\{?\w*(KEY|TOKEN|SECRET)", 8),
        (r"cat\s+[^\n]{0,6}(\.env|credentials|\.pgpass)", 6),
        (
            r#"<\s*div\s+style\s*=\s*["'][^>]{0,10}display\s*:\s*none"#,
            10,
        ),
        (r"(send|post)\s+[^\n]{0,12}\s+(to|at)\s+https?://", 12),
        (
            r"(update|write|add\s+to)\s+[^\n]{0,9}(?:AGENTS\.md|\.hermes/SOUL\.md)",
            9,
        ),
        // Several ends for one start (`ab` and `abcde`), and overlapping starts (`aa`).
        (r"(ab|abcde)[^\n]{0,2}f", 2),
        (r"a+[^x]{0,3}a\s*f", 3),
        (r"\s+[^ ]{0,4}\w*key", 4),
    ];
    let mut rules: Vec<(String, usize, usize)> =
        small.iter().map(|&(p, w)| (p.to_owned(), w, 300)).collect();
    for pattern in bounded_patterns() {
        if let Some(gap) = Gap::of(&pattern).filter(|_| Bounded::of(&pattern).is_some()) {
            rules.push((pattern, gap.width, 30));
        }
    }
    rules
}

#[test]
fn the_search_agrees_with_the_exact_regex_on_random_text() {
    let mut rng = fastrand::Rng::with_seed(0x51_7cc1_b727_220a);
    let mut next = move || rng.u64(..);
    for (pattern, width, texts) in rules_under_test() {
        let (rule, regex) = (Bounded::of(&pattern).unwrap(), exact(&pattern));
        let relevant = pieces_for(&pattern);
        let (mut matched, mut clear) = (0, 0);
        for _ in 0..texts {
            let text = random_text(&mut next, &relevant, &[width, 1, 40]);
            agrees(&pattern, &rule, &regex, &text);
            if regex.is_match(&text) {
                matched += 1;
            } else {
                clear += 1;
            }
        }
        // Hermes' own rules get few texts; their shapes are the small rules above.
        assert!(
            texts < 300 || matched > 0 && clear > 0,
            "{pattern}: {matched} matched, {clear} clear"
        );
    }
}

#[test]
fn the_search_agrees_with_the_exact_regex_on_adversarial_text() {
    let curl = r"curl\s+[^\n]{0,2048}\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)";
    let (rule, regex) = (Bounded::of(curl).unwrap(), exact(curl));
    let group = |n: usize, filler: usize| format!("{}{}", "curl ".repeat(n), "x".repeat(filler));
    let mut crowds = 0;
    for (n, filler) in [
        (31, 2_100),
        (32, 2_100),
        (33, 2_100),
        (31, 1_900),
        (5, 2_043),
    ] {
        for tail in [
            " $API_KEY",
            "\n$API_KEY",
            "$API_KEY",
            " ${TOKEN}x",
            " $NOPE",
        ] {
            for groups in [1, 3] {
                let text = format!("{}{tail}\n", group(n, filler).repeat(groups));
                crowds += usize::from(agrees(curl, &rule, &regex, text.as_bytes()));
            }
        }
    }
    assert!(crowds > 0);
    // The exact bound, on either side, after a run of white space the anchor may take or leave.
    for spaces in [1, 2, 300, 3_000] {
        for filler in [2_040, 2_047, 2_048, 2_049] {
            for nl in ["", "\n"] {
                let text = format!("curl{}{nl}{}$KEY", " ".repeat(spaces), "y".repeat(filler));
                agrees(curl, &rule, &regex, text.as_bytes());
            }
        }
    }
    // Many anchors whose secrets are on the next line, and one that is not.
    let lines = format!("{}curl x $TOKEN", "curl x\n$TOKEN ".repeat(500));
    assert_eq!(verdict(&rule, lines.as_bytes()), Some(true));
    assert_eq!(
        verdict(&rule, lines.replace("curl x $", "curl x\n$").as_bytes()),
        Some(false)
    );
}

#[test]
fn a_search_past_its_budget_gives_up_and_counts_as_matching() {
    let curl = r"curl\s+[^\n]{0,2048}\$\{?\w*(KEY|TOKEN)";
    let rule = Bounded::of(curl).unwrap();
    let text = format!("{}$NOTHING\n", "curl x ".repeat(30)).repeat(50);
    assert_eq!(rule.search(text.as_bytes()), Outcome::Clear);
    assert_eq!(rule.search_within(text.as_bytes(), 1_000), Outcome::GaveUp);
    assert!(Outcome::GaveUp.counts_as_match() && Outcome::Crowded.counts_as_match());
    assert!(Outcome::Match.counts_as_match() && !Outcome::Clear.counts_as_match());
    // The same text with a secret in reach, and a budget that lasts to it.
    let found = format!("curl x $TOKEN\n{text}");
    assert_eq!(rule.search_within(found.as_bytes(), 1_000), Outcome::Match);
}
