//! The machine-wide lock on a platform identity: two daemons — even of two homes — never poll
//! one bot. The lock is an `flock` on `$XDG_RUNTIME_DIR/hermes/<platform>-<16 hex of
//! sha256(identity)>.lock` (else `/tmp/hermes-<uid>/`), released by the kernel when the holder
//! dies; the file names the holder (pid and home) for the other daemon's error message.

use std::{
    fs::File,
    os::unix::fs::DirBuilderExt,
    path::{Path, PathBuf},
};

use nix::fcntl::Flock;
use sha2::{Digest, Sha256};

use crate::lockfile::LockError;

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct IdentityLock {
    _file: Flock<File>,
    pub path: PathBuf,
}

/// Where the lock of `identity` on `platform` lives, under `runtime_dir` (`XDG_RUNTIME_DIR`) or
/// a per-user directory in `/tmp`.
pub fn lock_path(runtime_dir: Option<&str>, platform: &str, identity: &str) -> PathBuf {
    let digest = Sha256::digest(identity.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let dir = match runtime_dir.filter(|d| !d.is_empty() && Path::new(d).is_absolute()) {
        Some(dir) => Path::new(dir).join("hermes"),
        None => PathBuf::from(format!("/tmp/hermes-{}", nix::unistd::getuid())),
    };
    dir.join(format!("{platform}-{hex}.lock"))
}

/// Take the lock at `path` for this process (serving `home`), or say who holds it. Blocking
/// file I/O: call off the async runtime.
pub fn acquire(path: &Path, home: &Path) -> Result<IdentityLock, String> {
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let note = format!("pid {} home {}", std::process::id(), home.display());
    match crate::lockfile::try_lock(path, &note) {
        Ok(file) => Ok(IdentityLock {
            _file: file,
            path: path.to_path_buf(),
        }),
        Err(LockError::Held(holder)) => {
            let holder = if holder.is_empty() {
                "another process".to_string()
            } else {
                format!("another hermesd ({holder})")
            };
            Err(format!(
                "{holder} is already connected with this bot token; one bot can be polled by one daemon (lock {})",
                path.display()
            ))
        }
        Err(LockError::Io(verb, e)) => {
            Err(format!("cannot {verb} the lock {}: {e}", path.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = dir.path().to_str().unwrap();
        let path = lock_path(Some(runtime), "telegram", "123:secret");
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with("telegram-") && name.len() == "telegram-".len() + 16 + 5);
        assert!(!name.contains("secret"));
        let first = acquire(&path, Path::new("/home/a")).unwrap();
        let refused = acquire(&path, Path::new("/home/b")).unwrap_err();
        assert!(refused.contains("/home/a"), "{refused}");
        drop(first);
        acquire(&path, Path::new("/home/b")).unwrap();
    }

    #[test]
    fn without_a_runtime_dir_the_lock_is_per_user_in_tmp() {
        let path = lock_path(None, "telegram", "t");
        assert!(path.starts_with(format!("/tmp/hermes-{}", nix::unistd::getuid())));
    }
}
