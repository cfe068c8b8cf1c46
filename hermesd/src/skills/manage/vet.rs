//! The security scan of what `skill_manage` is about to write: the threat scanner's skill scope,
//! the same rules a skill found on disk is quarantined by, run on the new text of the file
//! before it is written — whoever calls (the agent, or the background review, which reads
//! untrusted tool output). A blocking finding refuses the write and names itself.

use super::{Failure, Step};
use crate::policy::threat::skill::{ScanReport, scan_text};

/// Refuses `content`, to be written as `file` of skill `name`, when the scan blocks it.
pub(super) fn vet(name: &str, file: &str, content: &str) -> Step<()> {
    let report = ScanReport::from_findings(scan_text(file, content));
    let Some((worst, others)) = report.worst_blocking() else {
        return Ok(());
    };
    let more = match others {
        0 => String::new(),
        n => format!(" (+{n} more)"),
    };
    tracing::warn!(
        skill = name,
        file,
        finding = worst.pattern_id,
        "skill write blocked by the security scan"
    );
    Err(Failure::new(format!(
        "Security scan blocked this skill: {}: {} [{}]{more}. Skills are loaded into prompts, so \
         they must not carry injection, exfiltration or other dangerous instructions; nothing \
         was written. Remove the flagged text and try again.",
        worst.location(),
        worst.description,
        worst.pattern_id,
    )))
}
