//! `MemoryStore`: the two bounded entry lists (MEMORY.md, USER.md) under `HERMES_HOME/memories`
//! and Hermes' add / replace / remove semantics. Every mutation re-reads the file under an
//! exclusive lock and writes atomically. All functions block; call them via `spawn_blocking`.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::entries::{DELIMITER_CHARS, joined_chars, long_usage, previews, py_strip};
use super::error::MemoryError;
use super::fs::{lock_exclusive, lock_path, read_entries, write_entries_atomic};
use super::scan::first_threat_message;

/// Which of the two memory files an operation addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// The agent's own notes: `MEMORY.md`, tool name `"memory"`.
    Memory,
    /// The user profile: `USER.md`, tool name `"user"`.
    User,
}

impl Target {
    /// Both targets, in system-prompt order.
    pub const ALL: [Target; 2] = [Target::Memory, Target::User];

    /// The name used in tool arguments and results (`"memory"` / `"user"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Memory => "memory",
            Target::User => "user",
        }
    }

    /// The file name inside the memories directory.
    pub fn file_name(self) -> &'static str {
        match self {
            Target::Memory => "MEMORY.md",
            Target::User => "USER.md",
        }
    }

    /// Parses a tool-argument name; `None` for anything but `"memory"` / `"user"`.
    pub fn parse(name: &str) -> Option<Target> {
        match name {
            "memory" => Some(Target::Memory),
            "user" => Some(Target::User),
            _ => None,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Character limits of the joined entries, per target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Limit for MEMORY.md (Hermes default 2,200).
    pub memory_chars: usize,
    /// Limit for USER.md (Hermes default 1,375).
    pub user_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        let section = crate::config::settings::MemorySection::default();
        Limits {
            memory_chars: section.memory_char_limit,
            user_chars: section.user_char_limit,
        }
    }
}

impl Limits {
    /// The limit that applies to `target`.
    pub fn for_target(self, target: Target) -> usize {
        match target {
            Target::Memory => self.memory_chars,
            Target::User => self.user_chars,
        }
    }
}

/// A successful mutation (or a no-op such as a duplicate add) and the live state after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The target written.
    pub target: Target,
    /// Hermes' message, e.g. "Entry added.".
    pub message: String,
    /// Entries stored after the operation.
    pub entry_count: usize,
    /// Characters of the joined entries after the operation.
    pub chars: usize,
    /// The target's limit.
    pub limit: usize,
}

impl Outcome {
    /// `"NN% — cur/limit chars"`.
    pub fn usage(&self) -> String {
        long_usage(self.chars, self.limit)
    }
}

/// What a locked edit decided: the message, and whether the file must be rewritten.
pub(super) struct Edit {
    pub(super) message: String,
    pub(super) write: bool,
}

/// File-backed, bounded memory for one Hermes home. Cheap to clone.
#[derive(Clone, Debug)]
pub struct MemoryStore {
    dir: PathBuf,
    limits: Limits,
}

impl MemoryStore {
    /// A store over `dir` (normally `HERMES_HOME/memories`); nothing is touched until used.
    pub fn new(dir: PathBuf, limits: Limits) -> Self {
        MemoryStore { dir, limits }
    }

    /// The memories directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The configured limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Path of `target`'s file.
    pub fn path_for(&self, target: Target) -> PathBuf {
        self.dir.join(target.file_name())
    }

    /// Current entries of `target` (no lock needed: writers replace the file atomically).
    pub fn read(&self, target: Target) -> io::Result<Vec<String>> {
        let path = self.path_for(target);
        read_entries(&path).map_err(|e| {
            io::Error::new(e.kind(), format!("failed to read {}: {e}", path.display()))
        })
    }

    /// Appends `content` (stripped). A duplicate is a success that writes nothing.
    pub fn add(&self, target: Target, content: &str) -> Result<Outcome, MemoryError> {
        let content = py_strip(content);
        if content.is_empty() {
            return Err(MemoryError::Invalid("Content cannot be empty."));
        }
        reject_threats(content)?;
        self.mutate(target, |entries, limit| {
            if entries.iter().any(|e| e == content) {
                return Ok(Edit {
                    message: "Entry already exists (no duplicate added).".into(),
                    write: false,
                });
            }
            let current = joined_chars(entries);
            let added_chars = content.chars().count();
            let new_total = if entries.is_empty() {
                added_chars
            } else {
                current + DELIMITER_CHARS + added_chars
            };
            if new_total > limit {
                return Err(MemoryError::AddOverLimit {
                    current,
                    limit,
                    added_chars,
                    entries: entries.clone(),
                });
            }
            entries.push(content.to_owned());
            Ok(Edit {
                message: "Entry added.".into(),
                write: true,
            })
        })
    }

    /// Replaces the one entry containing `old_text` with `new_content` (both stripped).
    pub fn replace(
        &self,
        target: Target,
        old_text: &str,
        new_content: &str,
    ) -> Result<Outcome, MemoryError> {
        let old_text = py_strip(old_text);
        let new_content = py_strip(new_content);
        if old_text.is_empty() {
            return Err(MemoryError::Invalid("old_text cannot be empty."));
        }
        if new_content.is_empty() {
            return Err(MemoryError::Invalid(
                "new_content cannot be empty. Use 'remove' to delete entries.",
            ));
        }
        reject_threats(new_content)?;
        self.mutate(target, |entries, limit| {
            let index = find_unique(entries, old_text, "replace")?;
            let current = joined_chars(entries);
            let new_total = current - entries[index].chars().count() + new_content.chars().count();
            if new_total > limit {
                return Err(MemoryError::ReplaceOverLimit {
                    new_total,
                    current,
                    limit,
                    entries: entries.clone(),
                });
            }
            entries[index] = new_content.to_owned();
            Ok(Edit {
                message: "Entry replaced.".into(),
                write: true,
            })
        })
    }

    /// Removes the one entry containing `old_text` (stripped).
    pub fn remove(&self, target: Target, old_text: &str) -> Result<Outcome, MemoryError> {
        let old_text = py_strip(old_text);
        if old_text.is_empty() {
            return Err(MemoryError::Invalid("old_text cannot be empty."));
        }
        self.mutate(target, |entries, _| {
            let index = find_unique(entries, old_text, "remove")?;
            entries.remove(index);
            Ok(Edit {
                message: "Entry removed.".into(),
                write: true,
            })
        })
    }

    /// Runs `edit` on freshly read entries while holding `target`'s lock, then writes the
    /// result atomically if the edit asks for it.
    pub(super) fn mutate(
        &self,
        target: Target,
        edit: impl FnOnce(&mut Vec<String>, usize) -> Result<Edit, MemoryError>,
    ) -> Result<Outcome, MemoryError> {
        fs::create_dir_all(&self.dir)
            .map_err(|e| MemoryError::io("create directory", &self.dir, e))?;
        let path = self.path_for(target);
        let _lock = lock_exclusive(&lock_path(&path))?;
        let mut entries = read_entries(&path).map_err(|e| MemoryError::io("read", &path, e))?;
        let limit = self.limits.for_target(target);
        let Edit { message, write } = edit(&mut entries, limit)?;
        if write {
            write_entries_atomic(&path, &entries)?;
        }
        Ok(Outcome {
            target,
            message,
            entry_count: entries.len(),
            chars: joined_chars(&entries),
            limit,
        })
    }
}

/// Maps a threat-scan hit to [`MemoryError::Blocked`].
fn reject_threats(content: &str) -> Result<(), MemoryError> {
    match first_threat_message(content) {
        Some(message) => Err(MemoryError::Blocked(message)),
        None => Ok(()),
    }
}

/// Index of the entry containing `old_text`: an error when none does or when several
/// *different* entries do; the first when all matches are identical.
fn find_unique(
    entries: &[String],
    old_text: &str,
    verb: &'static str,
) -> Result<usize, MemoryError> {
    let mut matching = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.contains(old_text));
    let Some((first_index, first)) = matching.next() else {
        return Err(MemoryError::NoMatch {
            old_text: old_text.to_owned(),
            verb,
            entries: entries.to_vec(),
        });
    };
    if matching.any(|(_, other)| other != first) {
        let all: Vec<&String> = entries.iter().filter(|e| e.contains(old_text)).collect();
        return Err(MemoryError::Ambiguous {
            old_text: old_text.to_owned(),
            previews: previews(&all),
        });
    }
    Ok(first_index)
}
