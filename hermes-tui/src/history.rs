//! What was typed, kept across runs in `$HERMES_HOME/tui_history` (one JSON string per line, the
//! newest last, at most [`HISTORY_LIMIT`] entries; written 0600 on exit).

use std::{
    io::{self, Write},
    path::Path,
};

use crate::app::input::HISTORY_LIMIT;

/// The entries in the file; none when it is missing or unreadable (a broken line is skipped).
pub fn load(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut entries: Vec<String> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<String>(line).ok())
        .collect();
    let excess = entries.len().saturating_sub(HISTORY_LIMIT);
    entries.drain(..excess);
    entries
}

/// Replace the file with `entries` (the newest [`HISTORY_LIMIT`]), through a temporary file.
pub fn save(path: &Path, entries: &[String]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let skip = entries.len().saturating_sub(HISTORY_LIMIT);
    let tmp = path.with_extension("tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    for entry in &entries[skip..] {
        let line = serde_json::to_string(entry).map_err(io::Error::other)?;
        writeln!(file, "{line}")?;
    }
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_with_newlines_survive_a_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tui_history");
        save(&path, &["one".into(), "two\nlines".into()]).unwrap();
        assert_eq!(load(&path), ["one", "two\nlines"]);
    }
}
