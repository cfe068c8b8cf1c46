//! The learning loop's nudges: how often a background review of what to remember
//! (`memory.nudge_interval`) or to save as a skill (`skills.creation_nudge_interval`) runs, and
//! the model calls a review may make (`agent.review_max_turns`).

use super::read::Reader;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReviewSection {
    /// `memory.nudge_interval`: user turns between memory reviews (0: never; at most 10,000).
    pub memory_interval: u32,
    /// `skills.creation_nudge_interval`: tool iterations between skill reviews (0: never; at
    /// most 10,000).
    pub skill_interval: u32,
    /// `agent.review_max_turns`: model calls a review may make (1 to 10,000).
    pub budget: u32,
}

impl Default for ReviewSection {
    fn default() -> Self {
        Self {
            memory_interval: 10,
            skill_interval: 10,
            budget: 8,
        }
    }
}

impl ReviewSection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        let mut count =
            |key: &str, default: u32, min: u64| r.whole(key, default.into(), min, 10_000) as u32;
        Self {
            memory_interval: count("memory.nudge_interval", d.memory_interval, 0),
            skill_interval: count("skills.creation_nudge_interval", d.skill_interval, 0),
            budget: count("agent.review_max_turns", d.budget, 1),
        }
    }
}
