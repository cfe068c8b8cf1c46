//! Helpers of the threat scanner's tests: findings as Hermes' ids.

use super::*;

/// The ids of `findings`, as Hermes names them.
pub(super) fn ids(findings: &[Finding]) -> Vec<String> {
    findings.iter().map(Finding::to_string).collect()
}

pub(super) fn scan_ids(text: &str, scope: ThreatScope) -> Vec<String> {
    ids(&scan_for_threats(text, scope))
}

pub(super) fn context_ids(text: &str) -> Vec<String> {
    ids(&scan_context_text(text))
}
