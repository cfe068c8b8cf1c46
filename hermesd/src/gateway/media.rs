//! Files an answer hands to the chat, as Hermes' gateway does: a `MEDIA:<absolute path>` tag in
//! the answer is taken out of the text shown and the file is sent after it, through the
//! adapter's `send_file`. The path is the model's word, and the model reads untrusted text, so
//! a file goes only when the agent itself may read it (the path policy's `check_read`, the one
//! rule for every read, on the path with its links resolved) and it is a regular, non-empty file
//! outside the system's trees (`/etc`, `/proc`, `/sys`, `/dev`, `/run`, `/boot`), of at most
//! [`MAX_FILE_BYTES`]; at most [`MAX_FILES`] go per answer. A file that cannot go is named in a
//! note to the chat.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use super::{Gateway, Link, adapter::ChatRef, outbox};
use crate::policy::paths::PathPolicy;

/// Files sent for one answer; more are named in the note.
pub const MAX_FILES: usize = 10;
/// The largest file sent (platforms refuse larger ones with their own, smaller limits).
pub const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;
/// Trees nothing is sent from, whatever the path policy says of reading them.
const SYSTEM_TREES: &[&str] = &["/etc", "/proc", "/sys", "/dev", "/run", "/boot"];

const TAG: &str = "MEDIA:";

/// `text` without its `MEDIA:` tags, and the absolute paths they name, in order. A tag counts
/// at the start of the text or after white space, with an optional quote or backtick around
/// it; a quoted path runs to its closing quote, a bare one to the next white space or quote.
pub fn take_tags(text: &str) -> (String, Vec<PathBuf>) {
    if !text.contains(TAG) {
        return (text.to_string(), Vec::new());
    }
    let mut kept = String::with_capacity(text.len());
    let mut paths = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(TAG) {
        let before = &rest[..at];
        let opener = before.chars().next_back();
        let quoted = matches!(opener, Some('`' | '"' | '\''));
        let prefix_end = if quoted { at - 1 } else { at };
        let standalone = rest[..prefix_end]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace);
        let after = &rest[at + TAG.len()..];
        let path_text = after.trim_start_matches([' ', '\t']);
        // A quoted path runs to its closing quote (it may hold spaces); a bare one to a space.
        let end = match opener.filter(|_| quoted) {
            Some(quote) => path_text.find(quote),
            None => path_text.find(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'')),
        }
        .unwrap_or(path_text.len());
        let path = &path_text[..end];
        if !standalone || !path.starts_with('/') {
            kept.push_str(&rest[..at + TAG.len()]);
            rest = after;
            continue;
        }
        kept.push_str(&rest[..prefix_end]);
        paths.push(PathBuf::from(path));
        let consumed = after.len() - path_text.len() + end;
        rest = &after[consumed..];
        if quoted {
            rest = rest.strip_prefix(['`', '"', '\'']).unwrap_or(rest);
        }
    }
    kept.push_str(rest);
    let tidy = kept
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n");
    (tidy.trim().to_string(), paths)
}

/// Why `path` may not be sent; `Ok` with its real path when it may.
fn sendable(paths: &PathPolicy, path: &Path) -> Result<PathBuf, String> {
    let real = path
        .canonicalize()
        .map_err(|e| format!("cannot open it: {e}"))?;
    if SYSTEM_TREES.iter().any(|tree| real.starts_with(tree)) {
        return Err("it is a system file".into());
    }
    paths.check_read(path)?;
    paths.check_read(&real)?;
    let meta = std::fs::metadata(&real).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.len() == 0 {
        return Err("it is empty".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "it is {} bytes; at most {MAX_FILE_BYTES} are sent",
            meta.len()
        ));
    }
    Ok(real)
}

/// Send the files `paths` names to `chat`, then a note naming those that could not go.
pub async fn send(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    chat: &ChatRef,
    row_id: i64,
    paths: &[PathBuf],
) {
    let mut problems = Vec::new();
    for (index, path) in paths.iter().enumerate() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        if index >= MAX_FILES {
            problems.push(format!(
                "{name}: at most {MAX_FILES} files go with one answer"
            ));
            continue;
        }
        let checked = {
            let (path, policy) = (path.clone(), gateway.runner.tool_services.paths.clone());
            tokio::task::spawn_blocking(move || sendable(&policy, &path))
                .await
                .unwrap_or_else(|e| Err(format!("the check failed: {e}")))
        };
        let real = match checked {
            Ok(real) => real,
            Err(why) => {
                tracing::info!(path = %path.display(), %why, "gateway: a file named by the answer was not sent");
                problems.push(format!("{name}: {why}"));
                continue;
            }
        };
        let sent = outbox::retrying(gateway, link, false, || {
            link.adapter.send_file(chat, &real, false)
        })
        .await;
        match sent {
            Ok(_) => link.status.sent(),
            Err(e) => {
                link.status.note_error(&e.to_string());
                problems.push(format!("{name}: {e}"));
            }
        }
    }
    if !problems.is_empty() {
        let note = format!("⚠️ Not sent:\n{}", problems.join("\n"));
        outbox::send_now(gateway, link, chat, Some(row_id), &note).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_come_out_of_the_text_and_only_absolute_standalone_ones_count() {
        let (text, paths) = take_tags("Here it is:\nMEDIA:/w/chart.png\nand `MEDIA:/w/a b.pdf`");
        assert_eq!(text, "Here it is:\n\nand");
        assert_eq!(
            paths,
            [PathBuf::from("/w/chart.png"), PathBuf::from("/w/a b.pdf")]
        );
        let (text, paths) = take_tags("say MEDIA: /w/x.txt please");
        assert_eq!((text.as_str(), paths.len()), ("say  please", 1));
        let (text, paths) = take_tags("notMEDIA:/w/x and MEDIA:relative.png");
        assert_eq!(text, "notMEDIA:/w/x and MEDIA:relative.png");
        assert!(paths.is_empty());
        let (text, paths) = take_tags("\"MEDIA:/w/q.png\" done");
        assert_eq!((text.as_str(), paths.len()), ("done", 1));
    }
}
