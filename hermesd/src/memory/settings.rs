//! The memory settings in force (`memory.*`, read by `config`): which stores are on and their
//! limits.

use std::path::Path;

use crate::config::settings::MemorySection;

use super::{
    snapshot::Snapshot,
    store::{Limits, MemoryStore, Target},
};

/// Memory settings, read when a turn or an RPC starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemorySettings {
    /// `memory.memory_enabled`: MEMORY.md is used.
    pub memory_enabled: bool,
    /// `memory.user_profile_enabled`: USER.md is used.
    pub user_enabled: bool,
    /// `memory.memory_char_limit` / `memory.user_char_limit`.
    pub limits: Limits,
}

impl MemorySettings {
    pub fn new(section: &MemorySection) -> Self {
        Self {
            memory_enabled: section.memory_enabled,
            user_enabled: section.user_profile_enabled,
            limits: Limits {
                memory_chars: section.memory_char_limit,
                user_chars: section.user_char_limit,
            },
        }
    }

    /// Either store is on (the `memory` tool is offered).
    pub fn any_enabled(&self) -> bool {
        self.memory_enabled || self.user_enabled
    }

    pub fn enabled(&self, target: Target) -> bool {
        match target {
            Target::Memory => self.memory_enabled,
            Target::User => self.user_enabled,
        }
    }

    /// The frozen memory block for a new session's system prompt: the enabled stores as they
    /// are now (blocking: reads the files). Empty when both are off or empty.
    pub fn snapshot_block(&self, hermes_home: &Path) -> String {
        if !self.any_enabled() {
            return String::new();
        }
        let snapshot = Snapshot::take(&self.store(hermes_home));
        let blocks: Vec<&str> = Target::ALL
            .iter()
            .filter(|t| self.enabled(**t))
            .map(|t| snapshot.block(*t))
            .filter(|b| !b.is_empty())
            .collect();
        blocks.join("\n\n")
    }

    /// The store of `HERMES_HOME`.
    pub fn store(&self, hermes_home: &Path) -> MemoryStore {
        MemoryStore::new(hermes_home.join("memories"), self.limits)
    }
}

impl Default for MemorySettings {
    fn default() -> Self {
        Self::new(&MemorySection::default())
    }
}
