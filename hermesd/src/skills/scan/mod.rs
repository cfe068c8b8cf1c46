//! The security scan of a skill directory: the walk and Hermes' structural checks (`dir`), with
//! every text file read by the threat scanner's skill scope (`policy::threat::skill`, where the
//! rules, the findings and the verdict live).

mod dir;

#[cfg(test)]
mod tests_dir;

pub use crate::policy::threat::skill::{
    Finding, ScanReport, Severity, Verdict, precompile, scan_text,
};
pub use dir::scan_skill_dir;

/// Version of the pattern set; stored next to cached verdicts so a scanner update rescans.
pub const SCANNER_VERSION: &str = "hermesd-skills-guard-2";
