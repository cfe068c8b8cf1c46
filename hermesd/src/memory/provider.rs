//! The memory-provider interface and the built-in provider (MEMORY.md / USER.md).
//!
//! An external backend such as Honcho or Mem0 would later be another `MemoryProvider`: it
//! contributes its own system-prompt block (added after the built-in one), mirrors built-in
//! writes through `on_memory_write`, and, when needed, grows the trait with default no-op hooks
//! for prefetch, turn sync and its own tools. The daemon would hold the built-in provider plus at
//! most one external one, calling each in isolation so one failing backend never breaks a turn.

use super::snapshot::Snapshot;
use super::store::{MemoryStore, Target};

/// A source of long-term memory for the agent.
pub trait MemoryProvider: Send + Sync {
    /// Short stable name (`"builtin"`, `"honcho"`, …).
    fn name(&self) -> &str;

    /// Text added to the system prompt for this session (empty for none).
    fn system_prompt_block(&self) -> String;

    /// Called after the built-in memory tool changed a file (`action` is add/replace/remove).
    fn on_memory_write(&self, _action: &str, _target: Target, _content: &str) {}
}

/// The built-in provider: the file store plus the snapshot frozen when it was created.
#[derive(Clone, Debug)]
pub struct BuiltinMemory {
    store: MemoryStore,
    snapshot: Snapshot,
}

impl BuiltinMemory {
    /// Takes the session's snapshot from `store` (blocking: reads both files).
    pub fn new(store: MemoryStore) -> Self {
        let snapshot = Snapshot::take(&store);
        BuiltinMemory { store, snapshot }
    }

    /// The live store that the memory tool writes to.
    pub fn store(&self) -> &MemoryStore {
        &self.store
    }

    /// The frozen snapshot used for the system prompt.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }
}

impl MemoryProvider for BuiltinMemory {
    fn name(&self) -> &str {
        "builtin"
    }

    fn system_prompt_block(&self) -> String {
        self.snapshot.system_prompt_block()
    }
}
