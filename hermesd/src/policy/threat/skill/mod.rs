//! The skill scope of the threat scanner: the behaviour of Hermes' `tools/skills_guard.py`
//! (regex families for exfiltration, injection, destructive commands, persistence, network,
//! obfuscation, supply chain, embedded secrets, invisible Unicode and HTML comments), as rule
//! tables run line by line on the scanner's one engine, with Hermes' verdict rule and a one-line
//! reason naming the worst finding. Every skill is held to it, whatever its origin: found on
//! disk, installed, or written by the agent's own `skill_manage` (the background review's too).
//! The directory walk and the structural checks (sizes, binaries, symlinks) are `skills::scan`'s.
//!
//! Everything here is synchronous and CPU bound: the daemon calls it through `spawn_blocking`.

mod checks;
mod engine;
mod exfil_checks;
mod markup;
mod redact;
mod rules;
mod rules_code;
mod rules_exfil;
mod rules_injection;
mod rules_network;
mod rules_supply;
mod rules_system;
mod secret_names;
mod shell;
mod text;
mod unicode;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_benign;
#[cfg(test)]
mod tests_exfil;
#[cfg(test)]
mod tests_families;
#[cfg(test)]
mod tests_injection;

use serde::Serialize;

pub use engine::{precompile, scan_text};
pub use rules::{STRUCTURAL, TRAVERSAL};

/// The blocking findings of `text` as threat findings: each rule id once, in line order.
pub(super) fn blocking_findings(text: &str) -> Vec<super::Finding> {
    let mut findings = Vec::new();
    for finding in scan_text("text", text) {
        let id = super::Finding::Pattern(finding.pattern_id);
        if finding.severity.is_blocking() && !findings.contains(&id) {
            findings.push(id);
        }
    }
    findings
}

/// How bad a finding is. `High` and `Critical` block (quarantine) a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informational.
    Low,
    /// Worth a look; never blocks on its own.
    Medium,
    /// Blocks the skill (Hermes' "caution").
    High,
    /// Blocks the skill (Hermes' "dangerous").
    Critical,
}

impl Severity {
    /// Lower-case name as used by Hermes (`"critical"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    /// Whether a finding of this severity quarantines the skill.
    pub fn is_blocking(self) -> bool {
        self >= Severity::High
    }
}

/// One pattern hit, in Hermes' `Finding` shape (`match` is the serialized name of `matched`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable rule id, e.g. `curl_pipe_shell` (Hermes' ids where Hermes has the rule).
    pub pattern_id: &'static str,
    /// Severity of this rule.
    pub severity: Severity,
    /// Family: exfiltration, injection, destructive, persistence, network, obfuscation,
    /// execution, traversal, mining, supply_chain, privilege_escalation,
    /// credential_exposure, structural.
    pub category: &'static str,
    /// Path relative to the skill directory (`/`-separated).
    pub file: String,
    /// 1-based line; 0 for findings about the file or directory as a whole.
    pub line: usize,
    /// The offending line (trimmed, at most 120 characters, secrets masked).
    #[serde(rename = "match")]
    pub matched: String,
    /// What the rule detects, in a few words.
    pub description: &'static str,
}

/// Hermes' overall verdict: any critical finding is dangerous, any high one is caution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No high or critical finding.
    Safe,
    /// At least one high finding, no critical one.
    Caution,
    /// At least one critical finding.
    Dangerous,
}

impl Verdict {
    /// Hermes' `_determine_verdict`.
    pub fn from_findings(findings: &[Finding]) -> Verdict {
        match findings.iter().map(|f| f.severity).max() {
            Some(Severity::Critical) => Verdict::Dangerous,
            Some(Severity::High) => Verdict::Caution,
            _ => Verdict::Safe,
        }
    }

    /// Lower-case name as used by Hermes.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Caution => "caution",
            Verdict::Dangerous => "dangerous",
        }
    }
}

/// Result of scanning one skill directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScanReport {
    /// Findings in file order, then line order.
    pub findings: Vec<Finding>,
    /// Verdict derived from `findings`.
    pub verdict: Verdict,
}

impl ScanReport {
    /// Builds a report and its verdict from findings.
    pub fn from_findings(findings: Vec<Finding>) -> ScanReport {
        let verdict = Verdict::from_findings(&findings);
        ScanReport { findings, verdict }
    }

    /// The first most severe blocking finding, and how many other blocking ones there are;
    /// `None` when nothing is high or critical.
    pub fn worst_blocking(&self) -> Option<(&Finding, usize)> {
        let mut blocking = self.findings.iter().filter(|f| f.severity.is_blocking());
        let mut worst = blocking.next()?;
        let mut others = 0usize;
        for finding in blocking {
            others += 1;
            if finding.severity > worst.severity {
                worst = finding;
            }
        }
        Some((worst, others))
    }

    /// One-line quarantine reason, e.g. `scripts/setup.sh:3: pipes a download into a shell
    /// (curl … | sh)`, naming the first most severe blocking finding; `None` when nothing is
    /// high or critical.
    pub fn blocking(&self) -> Option<String> {
        let (worst, others) = self.worst_blocking()?;
        let mut reason = format!("{}: {}", worst.location(), worst.description);
        if others > 0 {
            reason.push_str(&format!(" (+{others} more)"));
        }
        Some(reason)
    }
}

impl Finding {
    /// `file:line`, or the file alone for findings about the file as a whole.
    pub fn location(&self) -> String {
        if self.line == 0 {
            self.file.clone()
        } else {
            format!("{}:{}", self.file, self.line)
        }
    }
}
