//! Where speech is written: `$HERMES_HOME/cache/audio/` (Hermes' directory), 0700, bounded. Before
//! each new file the directory is pruned: files older than [`KEEP`] go, then the oldest until at
//! most [`MAX_FILES`] remain, so spoken replies cannot fill the disk.

use std::{
    path::{Path, PathBuf},
    time::{Duration, SystemTime},
};

/// How long a spoken file is kept.
pub const KEEP: Duration = Duration::from_secs(7 * 86_400);
/// Files kept at most (the newest).
pub const MAX_FILES: usize = 200;

/// The audio cache of `home`.
pub fn dir(home: &Path) -> PathBuf {
    home.join("cache").join("audio")
}

/// Create the cache (0700) and prune it; returns its path. Blocking: call off the runtime.
pub fn prepare(home: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = dir(home);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    prune(&dir, SystemTime::now(), KEEP, MAX_FILES);
    Ok(dir)
}

/// Remove files of `dir` older than `keep`, then the oldest beyond `max`; returns how many went.
pub fn prune(dir: &Path, now: SystemTime, keep: Duration, max: usize) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut files: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
            Some((meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), e.path()))
        })
        .collect();
    files.sort();
    let old = files
        .iter()
        .take_while(|(at, _)| now.duration_since(*at).is_ok_and(|age| age > keep))
        .count();
    let over = files.len().saturating_sub(max);
    let mut removed = 0;
    for (_, path) in files.iter().take(old.max(over)) {
        if std::fs::remove_file(path).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_files_and_the_overflow_go() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..5 {
            std::fs::write(dir.path().join(format!("{n}.ogg")), b"x").unwrap();
        }
        assert_eq!(prune(dir.path(), SystemTime::now(), KEEP, 3), 2);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
        let later = SystemTime::now() + KEEP + Duration::from_secs(60);
        assert_eq!(prune(dir.path(), later, KEEP, 3), 3);
    }
}
