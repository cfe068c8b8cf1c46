//! Scans one text: every logical line goes once through a `RegexSet` of all rules; only the
//! rules the set reports are run individually (for their checks). Invisible characters and
//! HTML comments are separate passes.

use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use super::redact::redact;
use super::rules::{self, Rule, STRUCTURAL};
use super::text::{logical_lines, shorten};
use super::{Finding, Severity, markup, unicode};

/// NFA/DFA budget for the combined set (the default 10 MiB is too small for ~140 rules).
const SET_SIZE_LIMIT: usize = 64 * 1024 * 1024;

struct Compiled {
    rules: Vec<&'static Rule>,
    set: RegexSet,
    regexes: Vec<Regex>,
}

fn build() -> Result<Compiled, String> {
    let rules: Vec<&'static Rule> = rules::all().collect();
    let set = RegexSetBuilder::new(rules.iter().map(|r| r.pattern))
        .case_insensitive(true)
        .unicode(false)
        .size_limit(SET_SIZE_LIMIT)
        .dfa_size_limit(SET_SIZE_LIMIT)
        .build()
        .map_err(|e| format!("compile rule set: {e}"))?;
    let regexes = rules
        .iter()
        .map(|r| {
            RegexBuilder::new(r.pattern)
                .case_insensitive(true)
                .unicode(false)
                .build()
                .map_err(|e| format!("compile rule {}: {e}", r.id))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Compiled {
        rules,
        set,
        regexes,
    })
}

static COMPILED: LazyLock<Result<Compiled, String>> = LazyLock::new(build);

/// Compiles all rules now instead of on the first scan (call once at daemon start-up);
/// `Err` names the rule that failed (a bug: scans then report every skill as unsafe).
pub fn precompile() -> Result<(), String> {
    COMPILED.as_ref().map(|_| ()).map_err(Clone::clone)
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
    for line in logical_lines(text) {
        let bytes = line.text.as_bytes();
        let hits = compiled.set.matches(bytes);
        if !hits.matched_any() {
            continue;
        }
        for index in hits.iter() {
            let rule = compiled.rules[index];
            let fires = match rule.check {
                None => true,
                Some(check) => compiled.regexes[index]
                    .find_iter(bytes)
                    .any(|m| check(&line.text, m.range())),
            };
            if fires {
                findings.push(finding(rule, file, line.number, &line.text));
            }
        }
    }
    unicode::scan(file, text, &mut findings);
    markup::scan(file, text, &mut findings);
    findings.sort_by_key(|f| f.line);
    findings
}
