//! `approvals.*` and `command_allowlist`: whether dangerous commands are asked about, how long an
//! answer is waited for, what unattended cron runs do, and the patterns approved for ever.

use std::{fmt, time::Duration};

use serde_yaml::Value;

use super::read::{Reader, Verdict, names};

/// `approvals.mode` (Hermes' words; `false` means `off`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Ask an attached interactive client.
    Manual,
    /// The same as `manual` in hermesd.
    #[default]
    Smart,
    /// Run dangerous commands without asking (like `--yolo`).
    Off,
}

const MODES: [(&str, ApprovalMode); 3] = [
    ("manual", ApprovalMode::Manual),
    ("smart", ApprovalMode::Smart),
    ("off", ApprovalMode::Off),
];

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = MODES
            .iter()
            .find(|(_, m)| m == self)
            .map_or("", |(w, _)| *w);
        f.write_str(word)
    }
}

/// `approvals.cron_mode`: what a cron run, which nobody can answer, does with a dangerous command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CronMode {
    /// Refuse it (the run's answer says so).
    #[default]
    Deny,
    /// Run it.
    Approve,
}

impl fmt::Display for CronMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Deny => "deny",
            Self::Approve => "approve",
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalsSection {
    pub mode: ApprovalMode,
    /// `approvals.timeout`: whole seconds to wait for an answer before denying (at least 1).
    pub timeout: Duration,
    pub cron_mode: CronMode,
    /// `command_allowlist`: danger pattern keys (or globs of whole commands) approved for ever
    /// in config.
    pub command_allowlist: Vec<String>,
    /// `approvals.deny`: globs of commands refused whatever else is approved (Hermes' key).
    pub deny: Vec<String>,
}

impl Default for ApprovalsSection {
    fn default() -> Self {
        Self {
            mode: ApprovalMode::default(),
            timeout: Duration::from_secs(60),
            cron_mode: CronMode::default(),
            command_allowlist: Vec::new(),
            deny: Vec::new(),
        }
    }
}

impl ApprovalsSection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        Self {
            mode: r.value("approvals.mode", d.mode, &d.mode, |value| match value {
                Value::Bool(false) => Verdict::Use(ApprovalMode::Off),
                Value::String(s) => MODES
                    .iter()
                    .find(|(w, _)| w.eq_ignore_ascii_case(s.trim()))
                    .map_or_else(
                        || Verdict::Bad(format!("is not one of {}", names(&MODES))),
                        |(_, m)| Verdict::Use(*m),
                    ),
                _ => Verdict::Bad(format!("is not one of {}", names(&MODES))),
            }),
            timeout: Duration::from_secs(r.whole(
                "approvals.timeout",
                d.timeout.as_secs(),
                1,
                u64::MAX,
            )),
            cron_mode: r.word(
                "approvals.cron_mode",
                d.cron_mode,
                &[("deny", CronMode::Deny), ("approve", CronMode::Approve)],
            ),
            command_allowlist: r.list("command_allowlist", &[]),
            deny: r.list("approvals.deny", &[]),
        }
    }

    /// `approvals.mode` is `off`.
    pub fn off(&self) -> bool {
        self.mode == ApprovalMode::Off
    }
}
