//! Static security scanner for skills hermesd did not write itself: the behaviour of Hermes'
//! `tools/skills_guard.py` (regex families for exfiltration, injection, destructive commands,
//! persistence, network, obfuscation, supply chain, embedded secrets, invisible Unicode and
//! structural checks), with the verdict rule and a one-line quarantine reason.
//!
//! Everything here is synchronous and CPU/file bound: the daemon calls it through
//! `spawn_blocking`.

mod checks;
mod dir;
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
mod shell;
mod text;
mod unicode;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_benign;
#[cfg(test)]
mod tests_dir;
#[cfg(test)]
mod tests_exfil;
#[cfg(test)]
mod tests_families;
#[cfg(test)]
mod tests_injection;

use serde::Serialize;

pub use dir::scan_skill_dir;
pub use engine::{precompile, scan_text};

/// Version of the pattern set; stored next to cached verdicts so a scanner update rescans.
pub const SCANNER_VERSION: &str = "hermesd-skills-guard-1";

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

    /// One-line quarantine reason, e.g. `scripts/setup.sh:3: pipes a download into a shell
    /// (curl … | sh)`, naming the first most severe blocking finding; `None` when nothing is
    /// high or critical.
    pub fn blocking(&self) -> Option<String> {
        let mut blocking = self.findings.iter().filter(|f| f.severity.is_blocking());
        let mut worst = blocking.next()?;
        let mut others = 0usize;
        for finding in blocking {
            others += 1;
            if finding.severity > worst.severity {
                worst = finding;
            }
        }
        let location = if worst.line == 0 {
            worst.file.clone()
        } else {
            format!("{}:{}", worst.file, worst.line)
        };
        let mut reason = format!("{location}: {}", worst.description);
        if others > 0 {
            reason.push_str(&format!(" (+{others} more)"));
        }
        Some(reason)
    }
}
