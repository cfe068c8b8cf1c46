//! Scans one text with the skill rules: every logical line, folded to NFKC and its look-alike
//! letters to the ASCII they look like (`fold`), goes once through the scanner's engine (one
//! `RegexSet` of all rules); only the rules the set reports are run on their own, for their
//! post-filters. Invisible characters and HTML comments are separate passes over the raw text.

use std::sync::LazyLock;

use super::super::engine::{Pattern, RuleSet};
use super::super::fold::{Lookalikes, nfkc};
use super::redact::redact;
use super::rules::{self, Rule, STRUCTURAL};
use super::text::{logical_lines, shorten};
use super::{Finding, Severity, markup, unicode};

struct Compiled {
    rules: Vec<&'static Rule>,
    set: RuleSet,
}

fn build() -> Result<Compiled, String> {
    let rules: Vec<&'static Rule> = rules::all().collect();
    let set = RuleSet::build(rules.iter().map(|r| Pattern::plain(r.pattern)).collect())?;
    Ok(Compiled { rules, set })
}

static COMPILED: LazyLock<Result<Compiled, String>> = LazyLock::new(build);

/// Compiles all rules now instead of on the first scan (call once at daemon start-up);
/// `Err` says what failed (a bug: scans then report every skill as unsafe).
pub fn precompile() -> Result<(), String> {
    COMPILED.as_ref().map(|_| ()).map_err(Clone::clone)
}

/// Whether every rule's own regex compiles too (for the tests).
#[cfg(test)]
pub(super) fn every_rule_compiles() -> bool {
    COMPILED
        .as_ref()
        .is_ok_and(|compiled| compiled.set.all_compile())
}

fn finding(rule: &Rule, file: &str, line: usize, text: &str) -> Finding {
    Finding {
        pattern_id: rule.id,
        severity: rule.severity,
        category: rule.category,
        file: file.to_owned(),
        line,
        matched: shorten(&redact(text.trim())),
        description: rule.description,
    }
}

/// Scans one file's text; `file` is the relative path reported in findings. Findings are in
/// line order (rule order within a line). A rule fires at most once per line.
pub fn scan_text(file: &str, text: &str) -> Vec<Finding> {
    let compiled = match &*COMPILED {
        Ok(compiled) => compiled,
        Err(_) => {
            return vec![Finding {
                pattern_id: "scanner_error",
                severity: Severity::Critical,
                category: STRUCTURAL,
                file: file.to_owned(),
                line: 0,
                matched: String::new(),
                description: "the scanner's rules failed to compile; treating as unsafe",
            }];
        }
    };
    let mut findings = Vec::new();
    let mut lookalikes = Lookalikes::new();
    for line in logical_lines(text) {
        let nfkc = nfkc(&line.text);
        let normalised = lookalikes.fold(&nfkc);
        let bytes = normalised.as_bytes();
        let hits = compiled.set.candidates(bytes);
        if !hits.matched_any() {
            continue;
        }
        for index in hits.iter() {
            let rule = compiled.rules[index];
            let fires = match (rule.check, compiled.set.regex(index)) {
                (None, _) => true,
                // Fail closed: a rule whose regex did not compile fires.
                (Some(_), None) => true,
                (Some(check), Some(regex)) => regex
                    .find_iter(bytes)
                    .any(|m| check(&normalised, m.range())),
            };
            if fires {
                findings.push(finding(rule, file, line.number, &normalised));
            }
        }
    }
    unicode::scan(file, text, &mut findings);
    markup::scan(file, text, &mut findings);
    findings.sort_by_key(|f| f.line);
    findings
}
