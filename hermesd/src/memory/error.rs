//! `MemoryError`: every way a memory write can be refused or fail. The `Display` text is the
//! exact message Hermes returns to the model; the accessors expose the extra result fields.

use std::io;
use std::path::PathBuf;

use super::entries::{format_count, short_usage};

/// A refused or failed memory operation.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// Missing or empty argument (e.g. "Content cannot be empty.").
    #[error("{0}")]
    Invalid(&'static str),
    /// The content matched a threat pattern; the text starts with `Blocked:`
    /// (prefixed with `Operation N: ` inside a batch).
    #[error("{0}")]
    Blocked(String),
    /// Adding the entry would push the store over its character limit.
    #[error(
        "Memory at {}/{} chars. Adding this entry ({added_chars} chars) would exceed the limit. \
         Consolidate now: use 'replace' to merge overlapping entries into shorter ones or 'remove' \
         stale or less important entries (see current_entries below), then retry this add — all \
         in this turn.",
        format_count(*.current), format_count(*.limit)
    )]
    AddOverLimit {
        /// Characters used now.
        current: usize,
        /// The target's limit.
        limit: usize,
        /// Characters of the rejected entry.
        added_chars: usize,
        /// Entries currently stored.
        entries: Vec<String>,
    },
    /// The replacement would push the store over its character limit.
    #[error(
        "Replacement would put memory at {}/{} chars. Shorten the new content, or 'remove' other \
         stale or less important entries to make room (see current_entries below), then retry — \
         all in this turn.",
        format_count(*.new_total), format_count(*.limit)
    )]
    ReplaceOverLimit {
        /// Characters the store would hold after the replacement.
        new_total: usize,
        /// Characters used now.
        current: usize,
        /// The target's limit.
        limit: usize,
        /// Entries currently stored.
        entries: Vec<String>,
    },
    /// No entry contains `old_text`.
    #[error(
        "No entry matched '{old_text}'. Check current_entries below and retry with the exact text \
         of the entry you want to {verb}."
    )]
    NoMatch {
        /// The (stripped) substring searched for.
        old_text: String,
        /// `"replace"` or `"remove"`.
        verb: &'static str,
        /// Entries currently stored.
        entries: Vec<String>,
    },
    /// `old_text` occurs in several different entries.
    #[error("Multiple entries matched '{old_text}'. Be more specific.")]
    Ambiguous {
        /// The (stripped) substring searched for.
        old_text: String,
        /// 80-character previews of the matching entries.
        previews: Vec<String>,
    },
    /// A batch was rejected as a whole; nothing was written.
    #[error("{message}")]
    Batch {
        /// Hermes' message naming the failing operation or the final over-limit size.
        message: String,
        /// Characters used now.
        current: usize,
        /// The target's limit.
        limit: usize,
        /// Entries currently stored.
        entries: Vec<String>,
    },
    /// A file-system step failed.
    #[error("failed to {verb} {}: {source}", .path.display())]
    Io {
        /// What was being done ("read", "lock", "write", "create directory").
        verb: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl MemoryError {
    /// Builds an [`MemoryError::Io`] for `verb` on `path`.
    pub fn io(verb: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        MemoryError::Io {
            verb,
            path: path.into(),
            source,
        }
    }

    /// The stored entries Hermes shows with this error (`current_entries`), if any.
    pub fn current_entries(&self) -> Option<&[String]> {
        match self {
            MemoryError::AddOverLimit { entries, .. }
            | MemoryError::ReplaceOverLimit { entries, .. }
            | MemoryError::NoMatch { entries, .. }
            | MemoryError::Batch { entries, .. } => Some(entries),
            _ => None,
        }
    }

    /// The short usage (`"1,234/2,200"`) Hermes shows with this error, if any.
    pub fn usage(&self) -> Option<String> {
        match self {
            MemoryError::AddOverLimit { current, limit, .. }
            | MemoryError::ReplaceOverLimit { current, limit, .. }
            | MemoryError::Batch { current, limit, .. } => Some(short_usage(*current, *limit)),
            _ => None,
        }
    }

    /// Previews of the ambiguous matches (`matches`), if any.
    pub fn matches(&self) -> Option<&[String]> {
        match self {
            MemoryError::Ambiguous { previews, .. } => Some(previews),
            _ => None,
        }
    }
}
