//! A skill's supporting files: listing them by kind, and reading one safely (relative paths
//! only, confined to the skill directory even through symlinks, binary files described, size
//! capped).

use crate::policy::paths::PathPolicy;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use super::loader::collect_files;

/// Largest number of bytes of one file returned by `skill_view`; longer files are cut.
pub const MAX_VIEW_BYTES: u64 = 128 * 1024;

/// The supporting-file directories Hermes lists, in its order.
const LINKED_DIRS: [&str; 4] = ["references", "templates", "assets", "scripts"];

/// Regular, non-hidden files of the skill (SKILL.md excluded), grouped under `references`,
/// `templates`, `assets` and `scripts`; with `include_other`, files elsewhere go under `other`.
/// Empty groups are omitted. Paths are relative with `/` separators, sorted.
pub(super) fn grouped_files(dir: &Path, include_other: bool) -> Map<String, Value> {
    let mut files = Vec::new();
    collect_files(dir, "", &mut files);
    let mut groups: Map<String, Value> = Map::new();
    for (rel, _) in files {
        let top = rel.split('/').next().unwrap_or_default();
        let group = if rel.contains('/') && LINKED_DIRS.contains(&top) {
            top
        } else if include_other {
            "other"
        } else {
            continue;
        };
        if let Value::Array(list) = groups
            .entry(group)
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            list.push(Value::String(rel));
        }
    }
    groups
}

/// Why a supporting file could not be returned.
#[derive(Debug)]
pub(super) enum FileError {
    /// The path has a `..` component.
    Traversal,
    /// The path is absolute (or has a drive prefix).
    Absolute,
    /// The path resolves (through symlinks) outside the skill directory.
    Escapes,
    /// The path policy does not let the agent read it (a credential file inside a skill).
    Denied(String),
    /// Nothing exists at the path.
    NotFound,
    /// The path is a directory or another non-file.
    NotAFile,
    /// Reading failed.
    Io(io::Error),
}

/// A supporting file's content as returned to the model.
#[derive(Debug)]
pub(super) enum FileContent {
    /// UTF-8 text, cut to [`MAX_VIEW_BYTES`] when `truncated`; `size` is the full size in bytes.
    Text {
        text: String,
        truncated: bool,
        size: u64,
    },
    /// Not text: only its size is reported.
    Binary { size: u64 },
}

/// Reads `rel` inside `skill_dir` under the rules in the module doc.
pub(super) fn read_skill_file(
    skill_dir: &Path,
    rel: &str,
    paths: &PathPolicy,
) -> Result<(PathBuf, FileContent), FileError> {
    for component in Path::new(rel).components() {
        match component {
            Component::ParentDir => return Err(FileError::Traversal),
            Component::RootDir | Component::Prefix(_) => return Err(FileError::Absolute),
            Component::CurDir | Component::Normal(_) => {}
        }
    }
    if rel.split(['/', '\\']).any(|part| part == "..") {
        return Err(FileError::Traversal);
    }
    let not_found = |err: io::Error| match err.kind() {
        io::ErrorKind::NotFound => FileError::NotFound,
        _ => FileError::Io(err),
    };
    let base = fs::canonicalize(skill_dir).map_err(FileError::Io)?;
    let target = fs::canonicalize(skill_dir.join(rel)).map_err(not_found)?;
    if !target.starts_with(&base) {
        return Err(FileError::Escapes);
    }
    paths.check_read(&target).map_err(FileError::Denied)?;
    let file = File::open(&target).map_err(not_found)?;
    let meta = file.metadata().map_err(FileError::Io)?;
    if !meta.is_file() {
        return Err(FileError::NotAFile);
    }
    let content = read_capped(file, meta.len()).map_err(FileError::Io)?;
    Ok((target, content))
}

/// Reads at most [`MAX_VIEW_BYTES`] of `file` and classifies it as text or binary.
pub(super) fn read_capped(file: File, size: u64) -> io::Result<FileContent> {
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(MAX_VIEW_BYTES)).unwrap_or(0));
    file.take(MAX_VIEW_BYTES + 1).read_to_end(&mut bytes)?;
    let truncated = bytes.len() as u64 > MAX_VIEW_BYTES;
    if truncated {
        bytes.truncate(usize::try_from(MAX_VIEW_BYTES).unwrap_or(usize::MAX));
    }
    let size = size.max(bytes.len() as u64);
    if bytes.contains(&0) {
        return Ok(FileContent::Binary { size });
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(FileContent::Text {
            text,
            truncated,
            size,
        }),
        // A cut in the middle of a multi-byte character is not a sign of binary content.
        Err(err) if truncated && err.utf8_error().error_len().is_none() => {
            let valid = err.utf8_error().valid_up_to();
            let mut bytes = err.into_bytes();
            bytes.truncate(valid);
            let text = String::from_utf8(bytes).unwrap_or_default();
            Ok(FileContent::Text {
                text,
                truncated,
                size,
            })
        }
        Err(_) => Ok(FileContent::Binary { size }),
    }
}
