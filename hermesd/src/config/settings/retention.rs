//! `sessions.*` and `tool_results.*`: how long idle live sessions stay in memory, when old
//! conversations are pruned (Hermes' keys), and how long spilled tool results are kept.

use std::time::Duration;

use super::read::{Reader, Verdict, whole};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionsSection {
    /// `sessions.evict_after`: seconds a live session nobody uses stays loaded.
    pub evict_after: Duration,
    /// `sessions.auto_prune`: prune daily.
    pub auto_prune: bool,
    /// `sessions.retention_days`: age of the conversations a prune removes (1 or more).
    pub retention_days: u32,
    /// `sessions.vacuum_after_prune`: give freed pages back afterwards.
    pub vacuum_after_prune: bool,
}

impl Default for SessionsSection {
    fn default() -> Self {
        Self {
            evict_after: Duration::from_secs(600),
            auto_prune: false,
            retention_days: 90,
            vacuum_after_prune: true,
        }
    }
}

impl SessionsSection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        let days = d.retention_days;
        Self {
            evict_after: Duration::from_secs_f64(
                r.seconds("sessions.evict_after", d.evict_after.as_secs_f64()),
            ),
            auto_prune: r.flag("sessions.auto_prune", d.auto_prune),
            retention_days: r.value("sessions.retention_days", days, &days, |v| match whole(v) {
                Ok(0) => Verdict::Bad("is not 1 or more".into()),
                Ok(n) => Verdict::Use(n.min(u64::from(u32::MAX)) as u32),
                Err(why) => Verdict::Bad(why.into()),
            }),
            vacuum_after_prune: r.flag("sessions.vacuum_after_prune", d.vacuum_after_prune),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolResultsSection {
    /// `tool_results.keep_days` (hermesd's key): days a session's spilled results are kept after
    /// their last write; 0 means no age limit.
    pub keep_days: u32,
}

impl Default for ToolResultsSection {
    fn default() -> Self {
        Self { keep_days: 30 }
    }
}

impl ToolResultsSection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        Self {
            keep_days: r.whole(
                "tool_results.keep_days",
                d.keep_days.into(),
                0,
                u32::MAX.into(),
            ) as u32,
        }
    }
}
