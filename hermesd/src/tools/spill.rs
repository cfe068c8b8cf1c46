//! Results too large for the model: the whole text goes to a file under the spill directory and
//! the model gets a preview with the path, so it can page through it with `read_file`.

use std::{io::Write, os::unix::fs::OpenOptionsExt, path::Path};

/// Characters of the result kept inline as a preview.
const PREVIEW_CHARS: usize = 2_000;

/// Where the spilled results of session `session_id` go: one directory per session, removed
/// with the session and aged out by maintenance. An id that is not a plain file name (an
/// imported one could hold `../`) is named by its digest instead, so it stays inside.
pub fn spill_dir(hermes_home: &Path, session_id: &str) -> std::path::PathBuf {
    spill_root(hermes_home).join(spill_dir_name(session_id))
}

/// The name of session `session_id`'s directory under [`spill_root`] (see [`spill_dir`]).
pub fn spill_dir_name(session_id: &str) -> String {
    let plain = !session_id.is_empty()
        && session_id != "."
        && session_id != ".."
        && !session_id.contains(['/', '\0']);
    if plain {
        session_id.to_string()
    } else {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(session_id.as_bytes());
        let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
        format!("_{hex}")
    }
}

/// The directory holding every session's spilled results.
pub fn spill_root(hermes_home: &Path) -> std::path::PathBuf {
    hermes_home.join("cache").join("tool-results")
}

/// `content` when it fits in `max_chars`, else a preview naming the file that holds it all.
pub fn spill_if_large(content: String, max_chars: usize, dir: &Path, call_id: &str) -> String {
    if content.len() <= max_chars || content.chars().count() <= max_chars {
        return content;
    }
    let file_name = format!("{}.txt", safe_stem(call_id));
    let path = dir.join(file_name);
    let preview_end = content
        .char_indices()
        .nth(PREVIEW_CHARS)
        .map_or(content.len(), |(i, _)| i);
    let preview = &content[..preview_end];
    let total = content.chars().count();
    match write_private(dir, &path, &content) {
        Ok(()) => format!(
            "<persisted-output>\nThis tool result was too large ({total} characters, {}).\n\
             Full output saved to: {}\nUse the read_file tool with offset and limit to read it.\n\n\
             Preview (first {} chars):\n{preview}\n...\n</persisted-output>",
            human_size(content.len()),
            path.display(),
            preview.chars().count(),
        ),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot spill a large tool result");
            let keep_end = content
                .char_indices()
                .nth(max_chars)
                .map_or(content.len(), |(i, _)| i);
            format!(
                "{}\n\n[Truncated: the result was {total} characters and could not be saved: {e}]",
                &content[..keep_end]
            )
        }
    }
}

pub(super) fn write_private(dir: &Path, path: &Path, content: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(content.as_bytes())
}

pub(super) fn safe_stem(call_id: &str) -> String {
    let stem: String = call_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(120)
        .collect();
    if stem.is_empty() || stem.starts_with('.') {
        format!("result_{stem}")
    } else {
        stem
    }
}

fn human_size(bytes: usize) -> String {
    let kib = bytes as f64 / 1024.0;
    if kib >= 1024.0 {
        format!("{:.1} MB", kib / 1024.0)
    } else {
        format!("{kib:.1} KB")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn small_results_stay_inline_and_large_ones_are_saved_whole() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            spill_if_large("short".into(), 10, dir.path(), "c1"),
            "short"
        );
        let big = "é".repeat(5_000);
        let shown = spill_if_large(big.clone(), 1_000, dir.path(), "call/../1");
        assert!(shown.contains("5000 characters"), "{shown}");
        let saved = dir.path().join("call_.._1.txt");
        assert!(shown.contains(&saved.display().to_string()));
        assert_eq!(std::fs::read_to_string(saved).unwrap(), big);
    }
}
