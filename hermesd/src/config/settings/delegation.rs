//! `delegation.*`: the limits of `delegate_task` — each child's budget, how many children run at
//! once, how deep orchestrators may nest, and an optional wall-clock limit per child (Hermes'
//! keys; `max_spawn_depth` defaults to 2 here so an `orchestrator` child may delegate one level
//! more, where Hermes 0.19's default of 1 turns every orchestrator into a leaf).

use std::time::Duration;

use super::read::Reader;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelegationSection {
    /// `delegation.max_iterations`: model calls one child may make (its own budget).
    pub max_iterations: u32,
    /// `delegation.max_concurrent_children`: children of one delegation running at once; the
    /// rest wait their turn.
    pub max_concurrent_children: usize,
    /// `delegation.max_spawn_depth`: the deepest a delegated agent may be (the user's agent is
    /// depth 0); a child at this depth cannot delegate.
    pub max_spawn_depth: u32,
    /// `delegation.orchestrator_enabled`: whether `role: orchestrator` keeps `delegate_task`.
    pub orchestrator_enabled: bool,
    /// `delegation.child_timeout_seconds`: a child running longer is stopped (none by default).
    pub child_timeout: Option<Duration>,
    /// `delegation.subagent_auto_approve`: a child's dangerous command runs without asking
    /// (default: the parent's clients are asked).
    pub subagent_auto_approve: bool,
}

/// The most tasks one `delegate_task` call may hand out (the rest of a batch waits in a queue).
pub const MAX_TASKS_PER_CALL: usize = 16;

impl Default for DelegationSection {
    fn default() -> Self {
        Self {
            max_iterations: 50,
            max_concurrent_children: 3,
            max_spawn_depth: 2,
            orchestrator_enabled: true,
            child_timeout: None,
            subagent_auto_approve: false,
        }
    }
}

impl DelegationSection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        let max_concurrent_children = r.whole(
            "delegation.max_concurrent_children",
            d.max_concurrent_children as u64,
            1,
            MAX_TASKS_PER_CALL as u64,
        ) as usize;
        let child_timeout = r
            .whole_opt("delegation.child_timeout_seconds", "no limit")
            .filter(|s| *s > 0)
            // Hermes' floor: a child gets at least 30 s.
            .map(|s| Duration::from_secs(s.max(30)));
        Self {
            max_iterations: r.whole(
                "delegation.max_iterations",
                d.max_iterations.into(),
                1,
                10_000,
            ) as u32,
            max_concurrent_children,
            max_spawn_depth: r.whole("delegation.max_spawn_depth", d.max_spawn_depth.into(), 1, 8)
                as u32,
            orchestrator_enabled: r.flag("delegation.orchestrator_enabled", d.orchestrator_enabled),
            child_timeout,
            subagent_auto_approve: r.flag("delegation.subagent_auto_approve", false),
        }
    }
}
