//! Atomic file writes, file removal and directory-tree deletion for skills.

use std::fs::{self, File, Permissions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Mode given to newly created files (existing files keep theirs).
const NEW_FILE_MODE: u32 = 0o644;

/// Writes `data` to `path` atomically: temp file in the same directory, fsync, rename.
///
/// Creates missing parent directories. On any failure the old file is left untouched.
pub(super) fn atomic_write(path: &Path, data: &[u8]) -> Result<(), String> {
    let fail = |verb: &str, e: &dyn std::fmt::Display| {
        format!("Failed to write '{}' ({verb}): {e}", path.display())
    };
    let parent = path
        .parent()
        .ok_or_else(|| fail("no parent directory", &"path has no parent"))?;
    fs::create_dir_all(parent).map_err(|e| fail("creating directories", &e))?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{file_name}.tmp."))
        .tempfile_in(parent)
        .map_err(|e| fail("creating temp file", &e))?;
    temp.write_all(data)
        .map_err(|e| fail("writing temp file", &e))?;
    let mode = fs::metadata(path).map_or(NEW_FILE_MODE, |m| m.permissions().mode() & 0o7777);
    temp.as_file()
        .set_permissions(Permissions::from_mode(mode))
        .map_err(|e| fail("setting permissions", &e))?;
    temp.as_file().sync_all().map_err(|e| fail("syncing", &e))?;
    temp.persist(path)
        .map_err(|e| fail("renaming into place", &e.error))?;
    // Make the rename itself durable; a failure here does not undo the write.
    if let Ok(dir) = File::open(parent) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Removes one file, then its parent directory if that became empty and is not `keep`.
pub(super) fn remove_file_and_prune(path: &Path, keep: &Path) -> Result<(), String> {
    fs::remove_file(path).map_err(|e| format!("Failed to remove '{}': {e}", path.display()))?;
    prune_if_empty(path.parent(), keep);
    Ok(())
}

/// Deletes a skill directory tree, then its category directory if now empty (never `root`).
pub(super) fn delete_tree(dir: &Path, root: &Path) -> Result<(), String> {
    fs::remove_dir_all(dir).map_err(|e| format!("Failed to delete '{}': {e}", dir.display()))?;
    prune_if_empty(dir.parent(), root);
    Ok(())
}

fn prune_if_empty(dir: Option<&Path>, keep: &Path) {
    if let Some(dir) = dir
        && dir != keep
        && fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
    {
        // Best effort: a concurrent writer may have refilled it.
        let _ = fs::remove_dir(dir);
    }
}
