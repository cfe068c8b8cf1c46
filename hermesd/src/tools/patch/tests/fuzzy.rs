//! Tests of the fuzzy strategy chain, its uniqueness rule, guards and hints.

use super::super::fuzzy::{PatchError, fuzzy_replace};
use super::super::{seqmatch, strategies};

fn strategy_of(content: &str, old: &str, new: &str) -> (&'static str, String) {
    let done = fuzzy_replace(content, old, new, false).unwrap();
    assert_eq!(done.count, 1);
    (done.strategy, done.content)
}

#[test]
fn exact_match_replaces_the_substring() {
    let (strategy, content) = strategy_of("let a = 1;\nlet b = 2;\n", "b = 2", "b = 3");
    assert_eq!(strategy, "exact");
    assert_eq!(content, "let a = 1;\nlet b = 3;\n");
}

#[test]
fn line_trimmed_match_reindents_the_replacement() {
    let file = "class A:\n    def m(self):\n        pass\n";
    let (strategy, content) =
        strategy_of(file, "def m(self):\n    pass", "def m(self):\n    return 1");
    assert_eq!(strategy, "line_trimmed");
    assert_eq!(content, "class A:\n    def m(self):\n        return 1\n");
}

#[test]
fn whitespace_normalized_collapses_inner_runs() {
    let (strategy, content) = strategy_of("x  =   1\nz = 0\n", "x = 1", "y = 2");
    assert_eq!(strategy, "whitespace_normalized");
    assert_eq!(content, "y = 2\nz = 0\n");
}

#[test]
fn indentation_flexible_and_trimmed_boundary_find_their_blocks() {
    // In the chain both are shadowed by line_trimmed, so they are checked directly.
    let content = "a\n    b  \n  c\n";
    let flexible = strategies::CHAIN[3];
    assert_eq!(flexible.0, "indentation_flexible");
    assert_eq!((flexible.1)(content, "b  \nc"), vec![(2, 13)]);
    assert!((flexible.1)(content, "b\nc").is_empty());
    let boundary = strategies::CHAIN[5];
    assert_eq!(boundary.0, "trimmed_boundary");
    assert_eq!(
        (boundary.1)("x\n  a \nmid\n b\n", "a\nmid\nb"),
        vec![(2, 13)]
    );
    assert!((boundary.1)("x\n  a \n mid\n b\n", "a\nmid\nb").is_empty());
}

#[test]
fn escape_normalized_reads_literal_newlines() {
    let (strategy, content) = strategy_of("first\nsecond\n", "first\\nsecond", "only");
    assert_eq!(strategy, "escape_normalized");
    assert_eq!(content, "only\n");
}

#[test]
fn unicode_normalized_keeps_the_files_typography() {
    let (strategy, content) =
        strategy_of("say “hi” — ok\n", "say \"hi\" -- ok", "say \"bye\" -- ok");
    assert_eq!(strategy, "unicode_normalized");
    assert_eq!(content, "say “bye” — ok\n");
}

#[test]
fn block_anchor_accepts_a_similar_middle() {
    let file = "def f():\n    x = compute(1, 2)\n    return x\n";
    let old = "def f():\n    x = compute(1, 3)\n    return x";
    let (strategy, content) = strategy_of(file, old, "def f():\n    return 4");
    assert_eq!(strategy, "block_anchor");
    assert_eq!(content, "def f():\n    return 4\n");
}

#[test]
fn context_aware_needs_half_the_lines_similar() {
    let file = "alpha = 1\nbeta = 2\ngamma = 3\n";
    let (strategy, content) = strategy_of(file, "alpha = 1\nbeta = 2\ndelta = 9", "Z");
    assert_eq!(strategy, "context_aware");
    assert_eq!(content, "Z\n");
    let far = fuzzy_replace(file, "omega = 7\nsigma = 8\ndelta = 9", "Z", false);
    assert_eq!(far.unwrap_err(), PatchError::NotFound);
}

#[test]
fn the_first_strategy_with_a_match_wins() {
    let file = "a\nb\n  a\n  b\n";
    // line_trimmed alone would see two blocks; exact sees one and comes first.
    assert_eq!(strategies::line_trimmed(file, "a\nb").len(), 2);
    let (strategy, content) = strategy_of(file, "a\nb", "X");
    assert_eq!(strategy, "exact");
    assert_eq!(content, "X\n  a\n  b\n");
}

#[test]
fn strategies_are_tried_in_hermes_order() {
    let names: Vec<&str> = strategies::CHAIN.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            "exact",
            "line_trimmed",
            "whitespace_normalized",
            "indentation_flexible",
            "escape_normalized",
            "trimmed_boundary",
            "unicode_normalized",
            "block_anchor",
            "context_aware"
        ]
    );
}

#[test]
fn ambiguous_match_without_replace_all_is_an_error() {
    let err = fuzzy_replace("x = 1\nx = 1\n", "x = 1", "y", false).unwrap_err();
    assert_eq!(err, PatchError::Ambiguous(2));
    assert_eq!(
        err.to_string(),
        "Found 2 matches for old_string. Provide more context to make it unique, or use replace_all=True."
    );
}

#[test]
fn replace_all_replaces_every_match() {
    let done = fuzzy_replace("x = 1\ny\nx = 1\n", "x = 1", "z", true).unwrap();
    assert_eq!((done.count, done.content.as_str()), (2, "z\ny\nz\n"));
    let overlapping = fuzzy_replace("aaaa", "aa", "b", true).unwrap();
    assert_eq!((overlapping.count, overlapping.content.as_str()), (2, "bb"));
}

#[test]
fn empty_and_identical_strings_are_rejected() {
    assert_eq!(
        fuzzy_replace("a", "", "b", false).unwrap_err().to_string(),
        "old_string cannot be empty"
    );
    assert_eq!(
        fuzzy_replace("a", "a", "a", false).unwrap_err().to_string(),
        "old_string and new_string are identical"
    );
}

#[test]
fn escape_drift_in_a_fuzzy_match_is_refused() {
    let file = "a = 1\nsay('hi')\nb = 2";
    let err = fuzzy_replace(
        file,
        "a = 1\nsay(\\'hi\\')\nb = 2",
        "a = 1\nsay(\\'bye\\')\nb = 2",
        false,
    )
    .unwrap_err();
    assert_eq!(err, PatchError::EscapeDrift('\''));
    assert!(err.to_string().contains("literal sequence \"\\\\'\" but"));
}

#[test]
fn literal_tab_escapes_become_tabs_when_the_file_uses_tabs() {
    let done = fuzzy_replace("x\tsep\n", "x\\tsep", "y\\tsep", false).unwrap();
    assert_eq!(done.strategy, "escape_normalized");
    assert_eq!(done.content, "y\tsep\n");
}

#[test]
fn not_found_error_suggests_close_sections() {
    let file = "def foo():\n    return 1\n";
    let err = fuzzy_replace(file, "def bar(x):", "z", false).unwrap_err();
    assert_eq!(err, PatchError::NotFound);
    let text = err.describe("def bar(x):", file);
    assert!(text.starts_with("Could not find a match for old_string in the file"));
    assert!(
        text.contains(
            "\n\nDid you mean one of these sections?\n   1| def foo():\n   2|     return 1"
        )
    );
    let ambiguous = PatchError::Ambiguous(2).describe("x", "x x");
    assert!(!ambiguous.contains("Did you mean"));
}

#[test]
fn ratio_matches_difflib() {
    // Values from Python's difflib.SequenceMatcher(None, a, b).ratio().
    assert!((seqmatch::ratio("abcd", "bcde") - 0.75).abs() < 1e-12);
    assert!((seqmatch::ratio("", "") - 1.0).abs() < 1e-12);
    assert!((seqmatch::ratio("say('hi')", "say(\\'hi\\')") - 0.9).abs() < 1e-12);
    // Long b: autojunk drops the popular `a` from the index; the match grows over it anyway.
    let a = "a".repeat(300);
    let b = format!("{}b", "a".repeat(299));
    assert!((seqmatch::ratio(&a, &b) - 598.0 / 600.0).abs() < 1e-12);
}
