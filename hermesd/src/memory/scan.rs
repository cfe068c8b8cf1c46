//! Threat scanning of memory with the policy layer's scanner ([`ThreatScope::Memory`]: Hermes'
//! strict patterns and invisible characters), before an entry is stored and when an entry from
//! disk enters the system prompt. Every entry is scanned whole, whatever it begins with: a file
//! someone else wrote may hold an entry that only looks like one of the placeholders below.

use std::borrow::Cow;

use crate::policy::{ThreatScanner, ThreatScope, threat};

const SCANNER: ThreatScanner = ThreatScanner::new(ThreatScope::Memory);

/// Hermes' `Blocked: …` message for the first finding, or `None` when the content is clean.
pub fn first_threat_message(content: &str) -> Option<String> {
    SCANNER.first_threat_message(content)
}

/// Entries as they may enter the system prompt: a poisoned entry is replaced by a
/// `[BLOCKED: …]` placeholder naming `file_name` and the findings; clean entries are borrowed.
pub fn sanitize_for_snapshot<'a>(entries: &'a [String], file_name: &str) -> Vec<Cow<'a, str>> {
    entries
        .iter()
        .map(|entry| {
            let findings = SCANNER.scan(entry);
            if findings.is_empty() {
                return Cow::Borrowed(entry.as_str());
            }
            let ids = threat::joined(&findings);
            tracing::warn!(file = file_name, findings = %ids, "memory entry blocked from system prompt");
            Cow::Owned(format!(
                "[BLOCKED: {file_name} entry contained threat pattern(s): {ids}. Removed from system \
                 prompt; use memory(action=remove) to delete the original.]"
            ))
        })
        .collect()
}
