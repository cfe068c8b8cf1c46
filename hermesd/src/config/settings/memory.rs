//! `memory.*` (Hermes' keys): which memory stores are on and how many characters each may hold.
//! (`memory.nudge_interval` belongs to the review: [`super::ReviewSection`].)

use super::read::Reader;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemorySection {
    /// `memory.memory_enabled`: MEMORY.md (the agent's notes) is used.
    pub memory_enabled: bool,
    /// `memory.user_profile_enabled`: USER.md (the user profile) is used.
    pub user_profile_enabled: bool,
    /// `memory.memory_char_limit`: 100 to 1,000,000.
    pub memory_char_limit: usize,
    /// `memory.user_char_limit`: 100 to 1,000,000.
    pub user_char_limit: usize,
}

impl Default for MemorySection {
    fn default() -> Self {
        Self {
            memory_enabled: true,
            user_profile_enabled: true,
            memory_char_limit: 2200,
            user_char_limit: 1375,
        }
    }
}

impl MemorySection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        let limit = |r: &mut Reader<'_>, key: &str, default: usize| {
            r.whole(key, default as u64, 100, 1_000_000) as usize
        };
        Self {
            memory_enabled: r.flag("memory.memory_enabled", d.memory_enabled),
            user_profile_enabled: r.flag("memory.user_profile_enabled", d.user_profile_enabled),
            memory_char_limit: limit(r, "memory.memory_char_limit", d.memory_char_limit),
            user_char_limit: limit(r, "memory.user_char_limit", d.user_char_limit),
        }
    }
}
