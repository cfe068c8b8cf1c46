//! In-memory view of the files a V4A patch touches: operations are planned against it (each
//! seeing the effect of the earlier ones), and only when all succeed is it committed to disk.

use std::fs::{self, Permissions};
use std::path::{Path, PathBuf};

use super::fsio;

/// Planned final state of one path.
enum Entry {
    /// New contents, with the permissions to give the file (else the existing file's).
    Written {
        bytes: Vec<u8>,
        permissions: Option<Permissions>,
    },
    /// The file is to be removed.
    Removed,
}

/// Pending changes over the real file system.
#[derive(Default)]
pub(super) struct Workspace {
    entries: Vec<(PathBuf, Entry)>,
}

impl Workspace {
    fn entry(&self, path: &Path) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|(known, _)| known == path)
            .map(|(_, entry)| entry)
    }

    fn set(&mut self, path: &Path, entry: Entry) {
        match self.entries.iter_mut().find(|(known, _)| known == path) {
            Some(slot) => slot.1 = entry,
            None => self.entries.push((path.to_path_buf(), entry)),
        }
    }

    /// Current contents of `path` (planned or on disk); `Ok(None)` if it does not exist.
    pub(super) fn read(&self, path: &Path) -> Result<Option<Vec<u8>>, String> {
        match self.entry(path) {
            Some(Entry::Written { bytes, .. }) => Ok(Some(bytes.clone())),
            Some(Entry::Removed) => Ok(None),
            None if path.is_dir() => Err(format!("{} is a directory", path.display())),
            None => fsio::read_optional(path),
        }
    }

    /// Whether `path` exists in the planned state.
    pub(super) fn exists(&self, path: &Path) -> bool {
        match self.entry(path) {
            Some(Entry::Written { .. }) => true,
            Some(Entry::Removed) => false,
            None => fs::symlink_metadata(path).is_ok(),
        }
    }

    /// Permissions `path` will have, if known.
    pub(super) fn permissions(&self, path: &Path) -> Option<Permissions> {
        match self.entry(path) {
            Some(Entry::Written {
                permissions: Some(permissions),
                ..
            }) => Some(permissions.clone()),
            _ => fs::metadata(path).ok().map(|meta| meta.permissions()),
        }
    }

    /// Plans writing `bytes` to `path`.
    pub(super) fn write(&mut self, path: &Path, bytes: Vec<u8>, permissions: Option<Permissions>) {
        self.set(path, Entry::Written { bytes, permissions });
    }

    /// Plans removing `path`.
    pub(super) fn remove(&mut self, path: &Path) {
        self.set(path, Entry::Removed);
    }

    /// Writes everything: all new contents are first staged in temp files (a failure there
    /// leaves every file untouched), then renamed into place, then removals happen.
    /// Returns `Err((message, nothing_changed))`.
    pub(super) fn commit(self) -> Result<(), (String, bool)> {
        let mut staged = Vec::new();
        let mut removals = Vec::new();
        for (path, entry) in self.entries {
            match entry {
                Entry::Written { bytes, permissions } => {
                    let write =
                        fsio::stage_write(&path, &bytes, permissions).map_err(|err| (err, true))?;
                    staged.push(write);
                }
                Entry::Removed => removals.push(path),
            }
        }
        let mut errors = Vec::new();
        for write in staged {
            if let Err(err) = write.commit() {
                errors.push(err);
            }
        }
        for path in removals {
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => errors.push(format!("cannot delete {}: {err}", path.display())),
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err((errors.join("; "), false))
        }
    }
}
