//! Finding skills under the roots and keeping every path inside its skill directory or root.

use std::ffi::OsString;
use std::fs::{self, FileType};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::ManageRoots;
use super::validate::{EXCLUDED_DIRS, SUPPORT_DIRS};

/// How deep below a root discovery looks (guards against pathological trees).
const MAX_DEPTH: usize = 32;

/// A skill found on disk.
#[derive(Debug, Clone)]
pub(super) struct FoundSkill {
    /// The skill directory (may be a symlink; not canonicalised).
    pub dir: PathBuf,
    /// The root it was found under.
    pub root: PathBuf,
}

/// Finds the first skill directory named `name` (containing SKILL.md) across the roots.
///
/// Walks each root depth-first in name order without following symlinked directories, except
/// that a symlink which itself is a skill directory counts as a match. Directories in
/// `EXCLUDED_DIRS` and the supporting-file folders of a skill are skipped.
pub(super) fn find_skill(roots: &ManageRoots, name: &str) -> Option<FoundSkill> {
    roots.all().find_map(|root| {
        search_dir(root, name, 0).map(|dir| FoundSkill {
            dir,
            root: root.to_path_buf(),
        })
    })
}

fn search_dir(dir: &Path, name: &str, depth: usize) -> Option<PathBuf> {
    if depth > MAX_DEPTH {
        return None;
    }
    let mut entries: Vec<(OsString, FileType)> = fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            Some((entry.file_name(), entry.file_type().ok()?))
        })
        .collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let dir_is_skill = has_skill_md(dir);
    for (entry_name, file_type) in entries {
        let Some(entry_str) = entry_name.to_str() else {
            continue;
        };
        if EXCLUDED_DIRS.contains(&entry_str) || (dir_is_skill && SUPPORT_DIRS.contains(&entry_str))
        {
            continue;
        }
        let path = dir.join(&entry_name);
        if file_type.is_dir() {
            if entry_str == name && has_skill_md(&path) {
                return Some(path);
            }
            if let Some(found) = search_dir(&path, name, depth + 1) {
                return Some(found);
            }
        } else if file_type.is_symlink()
            && entry_str == name
            && path.is_dir()
            && has_skill_md(&path)
        {
            return Some(path);
        }
    }
    None
}

fn has_skill_md(dir: &Path) -> bool {
    dir.join("SKILL.md").is_file()
}

/// Resolves `base/rel` for writing, refusing any path that leaves `base` via symlinks.
///
/// Returns the path to operate on: the deepest existing ancestor canonicalised, with the
/// not-yet-existing components appended (so a symlinked file inside `base` is written through).
pub(super) fn resolve_inside(base: &Path, rel: &str) -> Result<PathBuf, String> {
    let base_real = fs::canonicalize(base)
        .map_err(|e| format!("Cannot resolve directory '{}': {e}", base.display()))?;
    let target = base.join(rel);
    let mut existing = target.as_path();
    loop {
        match fs::symlink_metadata(existing) {
            Ok(_) => break,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                existing = existing.parent().ok_or_else(|| {
                    format!(
                        "Cannot resolve '{}': no existing ancestor.",
                        target.display()
                    )
                })?;
            }
            Err(e) => return Err(format!("Cannot inspect '{}': {e}", existing.display())),
        }
    }
    let existing_real = fs::canonicalize(existing).map_err(|e| {
        format!(
            "Refusing '{rel}': '{}' cannot be resolved (dangling symlink?): {e}",
            existing.display()
        )
    })?;
    if !existing_real.starts_with(&base_real) {
        return Err(format!(
            "Refusing '{rel}': the path escapes '{}' (it resolves to '{}').",
            base.display(),
            existing_real.display()
        ));
    }
    let missing = target.strip_prefix(existing).unwrap_or(Path::new(""));
    Ok(if missing.as_os_str().is_empty() {
        existing_real
    } else {
        existing_real.join(missing)
    })
}

/// Refuses a recursive delete of a symlinked dir, a root itself, or anything not inside a root.
pub(super) fn check_delete_target(dir: &Path, roots: &ManageRoots) -> Result<(), String> {
    let meta = fs::symlink_metadata(dir).map_err(|e| {
        format!(
            "Refusing to delete '{}': cannot inspect it: {e}",
            dir.display()
        )
    })?;
    if meta.file_type().is_symlink() {
        return Err(format!(
            "Refusing to delete '{}': the skill directory is a symlink. Remove the link target \
             manually if intended.",
            dir.display()
        ));
    }
    let resolved = fs::canonicalize(dir).map_err(|e| {
        format!(
            "Refusing to delete '{}': could not resolve path ({e}).",
            dir.display()
        )
    })?;
    for root in roots.all() {
        let Ok(root_real) = fs::canonicalize(root) else {
            continue;
        };
        if resolved == root_real {
            return Err(format!(
                "Refusing to delete '{}': it resolves to the skills root itself, which would \
                 remove every installed skill.",
                dir.display()
            ));
        }
        if resolved.starts_with(&root_real) {
            return Ok(());
        }
    }
    Err(format!(
        "Refusing to delete '{}': the path does not resolve inside any known skills root.",
        dir.display()
    ))
}

/// Supporting files present in a skill (relative paths, sorted), for "not found" hints.
pub(super) fn list_support_files(skill_dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for sub in SUPPORT_DIRS {
        collect_files(skill_dir, Path::new(sub), &mut found, 0);
    }
    found.sort_unstable();
    found
}

fn collect_files(skill_dir: &Path, rel: &Path, out: &mut Vec<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(entries) = fs::read_dir(skill_dir.join(rel)) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let child = rel.join(entry.file_name());
        if file_type.is_dir() {
            collect_files(skill_dir, &child, out, depth + 1);
        } else if file_type.is_file() {
            out.push(child.to_string_lossy().into_owned());
        }
    }
}
