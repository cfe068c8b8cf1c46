//! The locked pidfile `$HERMES_HOME/hermesd.pid`: holding its exclusive lock is what makes a
//! daemon the daemon of its home. The kernel drops the lock when the process dies, even on SIGKILL.

use std::{
    fs::File,
    path::{Path, PathBuf},
};

use nix::fcntl::Flock;

use crate::lockfile::LockError;

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum PidError {
    #[error(
        "another hermesd{} is already running for this home ({path} is locked); stop it with `hermesctl daemon stop`",
        .pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    AlreadyRunning { path: String, pid: Option<u32> },
    #[error("cannot {verb} pidfile {path}: {source}")]
    Io {
        verb: &'static str,
        path: String,
        source: std::io::Error,
    },
}

/// The held lock; dropping it releases the lock (the file stays, with the last pid in it).
#[derive(Debug)]
pub struct PidLock {
    _lock: Flock<File>,
    path: PathBuf,
}

impl PidLock {
    /// Take the lock without waiting and write our pid into the file.
    pub fn acquire(path: &Path) -> Result<Self, PidError> {
        match crate::lockfile::try_lock(path, &std::process::id().to_string()) {
            Ok(lock) => Ok(Self {
                _lock: lock,
                path: path.to_path_buf(),
            }),
            Err(LockError::Held(holder)) => Err(PidError::AlreadyRunning {
                path: path.display().to_string(),
                pid: holder.parse().ok(),
            }),
            Err(LockError::Io(verb, source)) => Err(PidError::Io {
                verb,
                path: path.display().to_string(),
                source,
            }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_is_refused_and_names_the_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hermesd.pid");
        let held = PidLock::acquire(&path).unwrap();
        let err = PidLock::acquire(&path).unwrap_err();
        assert!(
            matches!(err, PidError::AlreadyRunning { pid: Some(p), .. } if p == std::process::id())
        );
        drop(held);
        PidLock::acquire(&path).unwrap();
    }
}
