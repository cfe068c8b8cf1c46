//! What the gateway keeps, bounded: delivered outbox rows and finished inbound messages go after
//! [`KEEP_ROWS`] (Telegram re-delivers an update for at most a day, so de-duplication needs far
//! less), routes to deleted conversations go, stale pairing requests go, and files users sent
//! are deleted [`KEEP_FILES`] after they arrived. Runs hourly, and once soon after start.

use std::{path::Path, sync::Arc, time::Duration};

use super::Gateway;
use crate::store;

pub const KEEP_ROWS: Duration = Duration::from_secs(7 * 86_400);
pub const KEEP_FILES: Duration = Duration::from_secs(30 * 86_400);
const EVERY: Duration = Duration::from_secs(3600);

pub async fn sweep(gateway: Arc<Gateway>) {
    let mut first = true;
    loop {
        let wait = if first {
            Duration::from_secs(60)
        } else {
            EVERY
        };
        first = false;
        tokio::select! {
            () = gateway.shutdown.cancelled() => return,
            () = tokio::time::sleep(wait) => {}
        }
        prune_once(&gateway).await;
    }
}

/// One pass; returns (rows, files) removed.
pub async fn prune_once(gateway: &Gateway) -> (usize, usize) {
    let before = store::now_ms() - KEEP_ROWS.as_millis() as i64;
    let rows = gateway
        .runner
        .store
        .write(move |tx| {
            let mut removed = store::prune_gateway(tx, before)?;
            let stale = store::now_ms()
                - super::pairing::CODE_TTL_MS.max(super::pairing::REQUEST_INTERVAL_MS);
            for keys in crate::config::settings::CHAT_PLATFORMS {
                removed += store::prune_pairing_requests(tx, keys.name, stale)?;
            }
            Ok(removed)
        })
        .await
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "gateway: cannot prune its tables");
            0
        });
    let files_dir = gateway.home.join("cache").join("gateway");
    let files = tokio::task::spawn_blocking(move || prune_files(&files_dir, KEEP_FILES))
        .await
        .unwrap_or(0);
    if rows + files > 0 {
        tracing::info!(rows, files, "gateway: old records and files removed");
    }
    (rows, files)
}

/// Delete files under `dir` (one level of chat directories) older than `keep`.
fn prune_files(dir: &Path, keep: Duration) -> usize {
    let Ok(chats) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for chat in chats.flatten() {
        let Ok(kind) = chat.file_type() else { continue };
        if !kind.is_dir() {
            continue;
        }
        let Ok(files) = std::fs::read_dir(chat.path()) else {
            continue;
        };
        for file in files.flatten() {
            let old = file
                .metadata()
                .ok()
                .filter(|m| m.is_file())
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > keep);
            if old && std::fs::remove_file(file.path()).is_ok() {
                removed += 1;
            }
        }
        let _ = std::fs::remove_dir(chat.path());
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_files_go_and_empty_chat_dirs_with_them() {
        let dir = tempfile::tempdir().unwrap();
        let chat = dir.path().join("42");
        std::fs::create_dir(&chat).unwrap();
        std::fs::write(chat.join("1-photo.jpg"), b"x").unwrap();
        let file = std::fs::File::options()
            .write(true)
            .open(chat.join("1-photo.jpg"))
            .unwrap();
        file.set_modified(std::time::SystemTime::now() - Duration::from_secs(7200))
            .unwrap();
        assert_eq!(prune_files(dir.path(), Duration::from_secs(3 * 3600)), 0);
        assert!(chat.exists());
        assert_eq!(prune_files(dir.path(), Duration::from_secs(3600)), 1);
        assert!(!chat.exists(), "the emptied chat directory goes");
    }
}
