//! The frozen system-prompt view of memory: Hermes' block layout (rule, header with usage,
//! rule, entries) and `Snapshot`, a value taken once per session that later writes never change.

use super::entries::{ENTRY_DELIMITER, long_usage};
use super::scan::sanitize_for_snapshot;
use super::store::{MemoryStore, Target};

/// The horizontal rule above and below a block header: 46 × U+2550.
const RULE: &str = "══════════════════════════════════════════════";

/// The fixed part of a block header, per target.
pub fn block_title(target: Target) -> &'static str {
    match target {
        Target::Memory => "MEMORY (your personal notes)",
        Target::User => "USER PROFILE (who the user is)",
    }
}

/// Renders `entries` as Hermes' system-prompt block; no entries give an empty string.
pub fn render_block<S: AsRef<str>>(target: Target, entries: &[S], limit: usize) -> String {
    if entries.is_empty() {
        return String::new();
    }
    let content_len: usize = entries.iter().map(|e| e.as_ref().len()).sum::<usize>()
        + ENTRY_DELIMITER.len() * (entries.len() - 1);
    let mut content = String::with_capacity(content_len);
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            content.push_str(ENTRY_DELIMITER);
        }
        content.push_str(entry.as_ref());
    }
    let usage = long_usage(content.chars().count(), limit);
    format!(
        "{RULE}\n{} [{usage}]\n{RULE}\n{content}",
        block_title(target)
    )
}

/// Memory as it enters the system prompt, captured once. Poisoned entries on disk appear as
/// `[BLOCKED: …]` placeholders here only; the files are left as they are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    memory: String,
    user: String,
}

impl Snapshot {
    /// Reads both files and renders their blocks (blocking). An unreadable file is logged and
    /// treated as empty so a session can still start.
    pub fn take(store: &MemoryStore) -> Snapshot {
        let block = |target: Target| {
            let entries = match store.read(target) {
                Ok(entries) => entries,
                Err(error) => {
                    tracing::warn!(%error, "memory file left out of the system prompt");
                    Vec::new()
                }
            };
            let shown = sanitize_for_snapshot(&entries, target.file_name());
            render_block(target, &shown, store.limits().for_target(target))
        };
        Snapshot {
            memory: block(Target::Memory),
            user: block(Target::User),
        }
    }

    /// The rendered block of one target (empty when it had no entries).
    pub fn block(&self, target: Target) -> &str {
        match target {
            Target::Memory => &self.memory,
            Target::User => &self.user,
        }
    }

    /// The memory block, then the user block, joined by a blank line; empty when both are.
    pub fn system_prompt_block(&self) -> String {
        match (self.memory.is_empty(), self.user.is_empty()) {
            (true, true) => String::new(),
            (false, true) => self.memory.clone(),
            (true, false) => self.user.clone(),
            (false, false) => format!("{}\n\n{}", self.memory, self.user),
        }
    }
}
