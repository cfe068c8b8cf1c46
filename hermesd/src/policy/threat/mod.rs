//! The threat scanner: the one prompt-injection scan of untrusted text before it is embedded in
//! a prompt — Hermes' threat patterns (`tools/threat_patterns.py`) and invisible characters,
//! the context-file check of `agent/prompt_builder.py`, and the skills guard's rule tables
//! (`skill`). One engine for all of it: NFKC and ASCII folding (`fold`), invisible and bidi
//! characters (`invisible`), and one compiled rule set per scope (`patterns`, `skill`), built
//! once on first use, reading a text once whatever the number of rules.
//!
//! There is no length limit of its own: a caller scans exactly what it embeds, all of it (a
//! context file after its head-and-tail cut, a whole memory entry, a whole cron prompt). The
//! time is linear in the text; see `tests/src/bin/bench-policy.rs` for the figures.

mod bounded;
mod engine;
mod fold;
mod gap;
mod invisible;
mod patterns;
pub mod skill;

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_lookalike;
#[cfg(test)]
mod tests_text;

use std::fmt;

pub use invisible::INVISIBLE_CHARS;
pub use patterns::{Label, threat_pattern_ids};

/// Where the scanned text is embedded, which decides the rules applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThreatScope {
    /// Context files (AGENTS.md, .hermes.md, .cursorrules, …), SOUL.md, and tool output
    /// re-embedded in a prompt: Hermes' "context" patterns.
    Context,
    /// Memory entries, written or read into the system prompt: Hermes' "strict" patterns.
    Memory,
    /// Skill files: the skills guard's rule tables (`skill`); findings here are its blocking
    /// ones (high or critical).
    Skill,
    /// Prompts the agent schedules: the strict patterns and Hermes' cron-prompt extras.
    Cron,
    /// Hermes' "strict" patterns, for any other text the agent writes for later prompts.
    Strict,
}

/// One reason a text was judged unsafe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finding {
    /// An invisible or bidirectional-control character.
    Invisible(char),
    /// A rule matched; the value is its id (Hermes' pattern id, e.g. `prompt_injection`).
    Pattern(&'static str),
}

impl fmt::Display for Finding {
    /// Hermes' finding id: `invisible_unicode_U+200B` or the pattern id.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Invisible(c) => write!(f, "invisible_unicode_U+{:04X}", u32::from(*c)),
            Finding::Pattern(id) => f.write_str(id),
        }
    }
}

/// The ids of `findings`, joined by `", "` (for notices and logs).
pub fn joined(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(Finding::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Finding id of a scan whose rules failed to compile (fail closed; never expected).
pub const SCANNER_UNAVAILABLE: &str = "threat_scanner_unavailable";

/// The scanner of one scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreatScanner {
    scope: ThreatScope,
}

impl ThreatScanner {
    /// The scanner for `scope` (its rules are compiled once, on the first scan).
    pub const fn new(scope: ThreatScope) -> Self {
        Self { scope }
    }

    /// Every finding in `text`, all of it: first each invisible character present (in code-point
    /// order), then each matching rule in table order. Empty means clean.
    pub fn scan(&self, text: &str) -> Vec<Finding> {
        if text.is_empty() {
            return Vec::new();
        }
        let Some(scope) = patterns::rules_for(self.scope) else {
            return skill::blocking_findings(text);
        };
        let mut findings: Vec<Finding> = invisible::hermes_invisible_in(text)
            .into_iter()
            .map(Finding::Invisible)
            .collect();
        match &scope.rules {
            Ok(rules) => {
                let folded = fold::for_patterns(text);
                findings.extend(
                    rules
                        .matching(&folded)
                        .into_iter()
                        .map(|index| Finding::Pattern(scope.ids[index])),
                );
            }
            Err(_) => findings.push(Finding::Pattern(SCANNER_UNAVAILABLE)),
        }
        findings
    }

    /// Hermes' one-line refusal for the first finding (memory writes, cron prompts), if any.
    pub fn first_threat_message(&self, text: &str) -> Option<String> {
        let first = *self.scan(text).first()?;
        Some(match first {
            Finding::Invisible(c) => format!(
                "Blocked: content contains invisible unicode character U+{:04X} (possible \
                 injection).",
                u32::from(c)
            ),
            Finding::Pattern(id) => format!(
                "Blocked: content matches threat pattern '{id}'. Content is injected into the \
                 system prompt and must not contain injection or exfiltration payloads."
            ),
        })
    }
}

/// Findings of `text` in `scope` (see [`ThreatScanner::scan`]).
pub fn scan_for_threats(text: &str, scope: ThreatScope) -> Vec<Finding> {
    ThreatScanner::new(scope).scan(text)
}

/// Hermes' refusal for the first finding of `text` in `scope`, if any.
pub fn first_threat_message(text: &str, scope: ThreatScope) -> Option<String> {
    ThreatScanner::new(scope).first_threat_message(text)
}

/// Findings for a context file (AGENTS.md, SOUL.md, .cursorrules, …) as it is embedded: a
/// single leading BOM is an editor artefact and ignored; then a [`ThreatScope::Context`] scan.
pub fn scan_context_text(text: &str) -> Vec<Finding> {
    scan_for_threats(
        text.strip_prefix('\u{feff}').unwrap_or(text),
        ThreatScope::Context,
    )
}

/// The placeholder that replaces a blocked context file in the prompt (Hermes' wording).
pub fn blocked_notice(file_name: &str, findings: &[Finding]) -> String {
    format!(
        "[BLOCKED: {file_name} contained potential prompt injection ({}). Content not loaded.]",
        joined(findings)
    )
}
