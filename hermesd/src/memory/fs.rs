//! File plumbing for the memory store: the exclusive `flock` on a sibling `.lock` file,
//! reading entries, and atomic replacement (temp file in the same directory, fsync, rename).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::entries::{ENTRY_DELIMITER, parse_entries};
use super::error::MemoryError;

/// `MEMORY.md` → `MEMORY.md.lock` (a separate file, so the data file can be renamed over).
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// How long a memory write waits for another writer's lock (Python Hermes, a stuck editor)
/// before it fails with a clear error instead of holding a blocking thread forever.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// Waits up to `within` for an exclusive `flock` on `lock_path`; dropping the guard releases
/// it. A lock still held by someone else after that is an error naming the file.
pub fn lock_exclusive_within(
    lock_path: &Path,
    within: Duration,
) -> Result<Flock<File>, MemoryError> {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(lock_path)
        .map_err(|e| MemoryError::io("open lock file", lock_path, e))?;
    let deadline = Instant::now() + within;
    let mut pause = Duration::from_millis(1);
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(guard) => return Ok(guard),
            Err((returned, Errno::EINTR)) => file = returned,
            Err((returned, Errno::EWOULDBLOCK)) if Instant::now() < deadline => {
                file = returned;
                // Polling: flock has no timed wait, and this runs on the blocking pool.
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err((_, Errno::EWOULDBLOCK)) => {
                let held = io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "another process has held it for over {} s",
                        within.as_secs()
                    ),
                );
                return Err(MemoryError::io("lock", lock_path, held));
            }
            Err((_, errno)) => {
                return Err(MemoryError::io("lock", lock_path, io::Error::from(errno)));
            }
        }
    }
}

/// [`lock_exclusive_within`] [`LOCK_TIMEOUT`].
pub fn lock_exclusive(lock_path: &Path) -> Result<Flock<File>, MemoryError> {
    lock_exclusive_within(lock_path, LOCK_TIMEOUT)
}

/// Entries stored at `path`; a missing file holds none.
pub fn read_entries(path: &Path) -> io::Result<Vec<String>> {
    match fs::read_to_string(path) {
        Ok(raw) => Ok(parse_entries(&raw)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Replaces `path` with `entries` joined by the delimiter, atomically: readers see the old or
/// the new file, never a partial one. A symlinked `path` keeps its link (the target is replaced).
pub fn write_entries_atomic(path: &Path, entries: &[String]) -> Result<(), MemoryError> {
    let target = resolve_symlink(path);
    let dir = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let write_error = |e: io::Error| MemoryError::io("write", &target, e);
    let mut temp = tempfile::Builder::new()
        .prefix(".mem_")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(write_error)?;
    temp.write_all(entries.join(ENTRY_DELIMITER).as_bytes())
        .map_err(write_error)?;
    temp.as_file().sync_all().map_err(write_error)?;
    temp.persist(&target).map_err(|e| write_error(e.error))?;
    // Make the rename itself durable; some file systems refuse fsync on directories.
    if let Err(error) = File::open(dir).and_then(|d| d.sync_all()) {
        tracing::debug!(dir = %dir.display(), %error, "memory directory fsync skipped");
    }
    Ok(())
}

/// The file a symlink points at, or `path` itself.
fn resolve_symlink(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
        }
        _ => path.to_owned(),
    }
}

#[cfg(test)]
mod lock_tests {
    use super::*;

    #[test]
    fn a_lock_held_elsewhere_fails_after_the_timeout_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("MEMORY.md.lock");
        let held = lock_exclusive(&path).unwrap();
        let began = Instant::now();
        let error = lock_exclusive_within(&path, Duration::from_millis(100))
            .unwrap_err()
            .to_string();
        assert!(began.elapsed() >= Duration::from_millis(100));
        assert!(error.contains("MEMORY.md.lock"), "{error}");
        assert!(error.contains("held it"), "{error}");
        drop(held);
        assert!(lock_exclusive_within(&path, Duration::from_millis(100)).is_ok());
    }
}
