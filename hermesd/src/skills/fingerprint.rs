//! A cheap change detector for one skill directory: the relative path, size and modification
//! time of every file it holds (stat only, no content). When it differs from the recorded one,
//! the content digest is computed and compared — the way git's index avoids rehashing.

use std::{fmt::Write, path::Path};

use super::loader::collect_files;

/// The stat fingerprint of `dir` (files as the digest sees them, SKILL.md included).
pub fn stat_fingerprint(dir: &Path) -> String {
    let mut files = Vec::new();
    collect_files(dir, "", &mut files);
    files.push(("SKILL.md".to_string(), dir.join("SKILL.md")));
    let mut out = String::with_capacity(files.len() * 40);
    for (relative, path) in files {
        let (size, modified) = match std::fs::metadata(&path) {
            Ok(meta) => (
                meta.len(),
                meta.modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos()),
            ),
            Err(_) => (u64::MAX, 0),
        };
        let _ = write!(out, "{relative}:{size}:{modified};");
    }
    out
}

/// The fingerprints of many directories, in order, spread over a few threads (stat calls wait on
/// the file system, not the CPU).
pub fn stat_fingerprints(dirs: &[&Path]) -> Vec<String> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().clamp(2, 4));
    let chunk = dirs.len().div_ceil(threads).max(1);
    let sequential = |part: &[&Path]| part.iter().map(|d| stat_fingerprint(d)).collect::<Vec<_>>();
    std::thread::scope(|scope| {
        let parts: Vec<_> = dirs
            .chunks(chunk)
            .map(|part| (part, scope.spawn(move || sequential(part))))
            .collect();
        parts
            .into_iter()
            .flat_map(|(part, handle)| handle.join().unwrap_or_else(|_| sequential(part)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn changes_with_any_file_and_not_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("SKILL.md"), "---\nname: a\n---\nbody\n").unwrap();
        std::fs::create_dir(dir.path().join("scripts")).unwrap();
        std::fs::write(dir.path().join("scripts/run.sh"), "echo 1\n").unwrap();
        let before = stat_fingerprint(dir.path());
        assert_eq!(before, stat_fingerprint(dir.path()));
        std::fs::write(dir.path().join("scripts/run.sh"), "echo 12\n").unwrap();
        assert_ne!(before, stat_fingerprint(dir.path()));
        let many = stat_fingerprints(&[dir.path(), Path::new("/nonexistent"), dir.path()]);
        assert_eq!(many.len(), 3);
        assert_eq!(many[0], many[2]);
        assert_eq!(many[0], stat_fingerprint(dir.path()));
    }
}
