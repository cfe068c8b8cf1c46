//! Hermes' built-in memory: two bounded, `§`-delimited files (MEMORY.md for the agent's notes,
//! USER.md for the user profile) under `HERMES_HOME/memories`, the `memory` tool that edits
//! them, threat scanning of what enters them, and the frozen per-session system-prompt snapshot.
//!
//! Everything here is synchronous file work; the daemon calls it through `spawn_blocking`.

pub mod batch;
pub mod entries;
pub mod error;
mod fs;
pub mod provider;
pub mod scan;
mod set;
pub mod settings;
pub mod snapshot;
pub mod store;
pub mod tool;

#[cfg(test)]
mod tests;

pub use batch::BatchOp;
pub use error::MemoryError;
pub use provider::{BuiltinMemory, MemoryProvider};
pub use settings::MemorySettings;
pub use snapshot::{Snapshot, render_block};
pub use store::{Limits, MemoryStore, Outcome, Target};
pub use tool::{handle_memory_call, memory_schema};
