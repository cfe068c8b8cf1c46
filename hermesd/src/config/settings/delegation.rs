//! `delegation.*`: the budget of each child agent `delegate_task` starts and how many run at
//! once (Hermes' keys and defaults).

use super::read::Reader;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelegationSection {
    /// `delegation.max_iterations`: model calls per child (its own budget, not the parent's).
    pub max_iterations: u32,
    /// `delegation.max_concurrent_children`: children of one delegation running at once; the
    /// rest wait their turn.
    pub max_concurrent_children: usize,
    /// `delegation.max_tasks`: tasks one call may hand out (hermesd's bound on the queue).
    pub max_tasks: usize,
}

impl Default for DelegationSection {
    fn default() -> Self {
        Self {
            max_iterations: 50,
            max_concurrent_children: 3,
            max_tasks: 20,
        }
    }
}

impl DelegationSection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        Self {
            max_iterations: r.whole(
                "delegation.max_iterations",
                d.max_iterations.into(),
                1,
                10_000,
            ) as u32,
            max_concurrent_children: r.whole(
                "delegation.max_concurrent_children",
                d.max_concurrent_children as u64,
                1,
                32,
            ) as usize,
            max_tasks: r.whole("delegation.max_tasks", d.max_tasks as u64, 1, 100) as usize,
        }
    }
}
