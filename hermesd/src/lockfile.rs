//! A file held with an exclusive `flock`: the one mechanism behind the pidfile (one daemon per
//! home) and the gateway's per-token lock (one poller per bot). The kernel drops the lock when
//! the holder dies, even on SIGKILL; the file holds a note naming the holder for whoever is
//! refused.

use std::{
    fs::{File, OpenOptions},
    io::{Read, Seek, Write},
    os::unix::fs::OpenOptionsExt,
    path::Path,
};

use nix::fcntl::{Flock, FlockArg};

/// Why a lock file could not be taken.
#[derive(Debug)]
pub enum LockError {
    /// Another process holds it; its note, trimmed.
    Held(String),
    /// The file could not be opened or written (`verb`).
    Io(&'static str, std::io::Error),
}

/// Take the lock on `path` (created 0600) without waiting, and replace its note with `note`.
pub fn try_lock(path: &Path, note: &str) -> Result<Flock<File>, LockError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(|e| LockError::Io("open", e))?;
    let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => lock,
        Err((mut file, _)) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            return Err(LockError::Held(holder.trim().to_string()));
        }
    };
    lock.set_len(0).map_err(|e| LockError::Io("truncate", e))?;
    lock.rewind().map_err(|e| LockError::Io("rewind", e))?;
    writeln!(lock, "{note}").map_err(|e| LockError::Io("write", e))?;
    Ok(lock)
}
