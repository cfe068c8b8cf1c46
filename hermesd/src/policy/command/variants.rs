//! The texts the rule tables are matched against: the normalised command with quoted `grep -P`
//! patterns blanked, the scripts of `bash -c` / `rg --pre` style options, the command with a
//! newline inserted at every real command start (so `(reboot)` anchors), and the command with
//! each command word de-obfuscated (`r''m` → `rm`), all lower-cased — computed once per
//! command for both rule tables.

use super::CompiledRules;
use super::command_words::{CommandWord, command_word_spans_at, segment_command_words};
use super::exec_flags::{execution_flag_findings, execution_flag_findings_in};
use super::grep::grep_safe_variant;
use super::shell::{command_starts, mark_command_starts, mark_command_starts_at};
use super::words::deobfuscate_word;

/// The texts each rule table is matched against, in Python's order (first is the
/// `grep`-safe normalised command), given the command words of `normalized`.
///
/// Also whether the command's `grep` quoting is malformed, and the first inline-code finding
/// of the command itself (both computed on the way).
fn detection_variants(
    normalized: &str,
    words: &[CommandWord<'_>],
) -> (Vec<String>, bool, Option<&'static str>) {
    let (grep_safe, malformed) = grep_safe_variant(normalized, words);
    let mut variants = vec![grep_safe];
    // Few variants: a linear search is cheaper than hashing them.
    let add = |variant: String, variants: &mut Vec<String>| {
        if variants.contains(&variant) {
            false
        } else {
            variants.push(variant);
            true
        }
    };
    let own = execution_flag_findings_in(words);
    let first_flag = own.first().map(|f| f.description);
    let mut pending = vec![own];
    while let Some(findings) = pending.pop() {
        for finding in findings {
            let Some(payload) = finding.payload.filter(|p| !p.is_empty()) else {
                continue;
            };
            if !add(payload.clone(), &mut variants) {
                continue;
            }
            let marked = mark_command_starts(&payload);
            if marked != payload {
                add(marked, &mut variants);
            }
            // The payload's own findings: the normalised command itself is never walked again
            // (a payload equal to it is a variant already).
            if payload != normalized {
                pending.push(execution_flag_findings(&payload));
            }
        }
    }
    // The command starts of the normalised command, shared by the marked variant (when the
    // grep-safe text is the command itself) and the de-obfuscated command words.
    let starts = command_starts(normalized);
    let marked = if variants[0] == normalized {
        mark_command_starts_at(normalized, &starts)
    } else {
        mark_command_starts(&variants[0])
    };
    if marked != variants[0] {
        add(marked, &mut variants);
    }
    for (start, end) in command_word_spans_at(normalized, &starts) {
        let word = &normalized[start..end];
        let deobfuscated = deobfuscate_word(word);
        if deobfuscated.is_empty() || *deobfuscated == *word {
            continue;
        }
        let variant = [&normalized[..start], &deobfuscated, &normalized[end..]].concat();
        add(variant, &mut variants);
    }
    (variants, malformed, first_flag)
}

/// A normalised command with its detection variants, lower-cased, computed once for both rule
/// tables, and its command words.
pub(in crate::policy) struct Prepared<'a> {
    pub(super) words: Vec<CommandWord<'a>>,
    variants: Vec<String>,
    pub(super) malformed: bool,
    pub(super) first_flag: Option<&'static str>,
}

impl<'a> Prepared<'a> {
    pub(in crate::policy) fn new(normalized: &'a str) -> Self {
        let words = segment_command_words(normalized);
        let (mut variants, malformed, first_flag) = detection_variants(normalized, &words);
        for variant in &mut variants {
            if variant.is_ascii() {
                variant.make_ascii_lowercase();
            } else {
                *variant = variant.to_lowercase();
            }
        }
        Self {
            words,
            variants,
            malformed,
            first_flag,
        }
    }

    pub(super) fn first_match(&self, rules: &CompiledRules) -> Option<&'static str> {
        self.variants.iter().find_map(|v| rules.first_match(v))
    }
}
