//! Files users send: each attachment of a stored message fetched from the platform (at most
//! [`MAX_FILE_BYTES`]), saved under `$HERMES_HOME/cache/gateway/<chat>/` with a sanitised name
//! (0600, never overwriting, never through a linked directory), and named to the agent by its
//! path in the message text. A voice message or audio file is transcribed (`voice.rs`): the
//! transcript becomes the text of the turn, as in Hermes. A photo, or a document that is a PNG,
//! JPEG, GIF or WebP image by its first bytes, is also attached to the message as an image
//! (`agent::attachments`).

use std::path::Path;

use super::{Gateway, Link, adapter::Attachment, chats::ATTACHMENT_MARK};
use crate::store::InboundRow;

/// Largest attachment fetched (the Bot API's own download limit).
pub const MAX_FILE_BYTES: u64 = 20 << 20;

/// A message with its attachments fetched.
#[derive(Debug, Default)]
pub struct Fetched {
    /// The text of the turn.
    pub text: String,
    /// The images among the attachments, checked and ready to attach to the message.
    pub images: Vec<crate::llm::image_prep::Prepared>,
    /// The transcripts of its voice messages and audio files, for the echo.
    pub transcripts: Vec<String>,
    /// Why a voice message or audio file could not be transcribed, for the user.
    pub problems: Vec<String>,
    /// Whether it held a voice message (spoken replies follow `/voice on`).
    pub voice: bool,
}

/// The message's text with each attachment fetched, saved under the home's cache for this chat
/// (name sanitised, size capped) and named by its path; voice and audio transcribed, images
/// prepared.
pub async fn with_files(gateway: &Gateway, link: &Link, row: &InboundRow) -> Fetched {
    let mut fetched = Fetched::default();
    if !row.text.contains(ATTACHMENT_MARK) {
        fetched.text = row.text.clone();
        return fetched;
    }
    let mut text = String::new();
    for line in row.text.lines() {
        let Some(spec) = line.strip_prefix(ATTACHMENT_MARK) else {
            text.push_str(line);
            text.push('\n');
            continue;
        };
        let mut parts = spec.splitn(3, ':');
        let (kind, file_id, name) = (
            parts.next().unwrap_or("file"),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        let kind: &'static str = match kind {
            "photo" => "photo",
            "voice" => "voice",
            "audio" => "audio",
            _ => "document",
        };
        let attachment = Attachment {
            kind,
            file_id: file_id.to_string(),
            file_name: name.to_string(),
            size: 0,
        };
        fetched.voice |= kind == "voice";
        let note = match link.adapter.fetch_file(&attachment, MAX_FILE_BYTES).await {
            Ok(bytes) => {
                let image = (kind != "voice" && kind != "audio")
                    .then(|| crate::llm::image_prep::sniff(&bytes))
                    .flatten()
                    .map(|_| bytes.clone());
                match save_file(gateway, row, &attachment, bytes).await {
                    Ok(path) if matches!(kind, "voice" | "audio") => {
                        super::voice::heard(gateway, kind, &path, &mut fetched).await
                    }
                    Ok(path) => {
                        let mut note = format!("[The user sent a {kind}, saved at {path}]");
                        // Shown to the model as an image too when it is one it can take; else
                        // the saved file is all there is.
                        if let Some(bytes) = image {
                            match prepare_image(bytes).await {
                                Ok(prepared) => fetched.images.push(prepared),
                                Err(e) => note.push_str(&format!(" (not shown as an image: {e})")),
                            }
                        }
                        note
                    }
                    Err(e) => format!("[The user sent a {kind}; it could not be saved: {e}]"),
                }
            }
            Err(e) => format!("[The user sent a {kind}; it could not be fetched: {e}]"),
        };
        text.push_str(&note);
        text.push('\n');
    }
    fetched.text = text.trim().to_string();
    fetched
}

async fn prepare_image(bytes: Vec<u8>) -> Result<crate::llm::image_prep::Prepared, String> {
    tokio::task::spawn_blocking(move || crate::llm::image_prep::prepare(bytes))
        .await
        .map_err(|e| format!("the image task failed: {e}"))?
        .map_err(|e| e.to_string())
}

/// `name` safe as one file name: no path separators, no leading dots, at most 100 characters.
pub fn sanitize_file_name(name: &str, fallback: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    let cleaned = cleaned.trim_start_matches('.').to_string();
    if cleaned.is_empty() {
        fallback.to_string()
    } else {
        cleaned
    }
}

async fn save_file(
    gateway: &Gateway,
    row: &InboundRow,
    attachment: &Attachment,
    bytes: Vec<u8>,
) -> Result<String, String> {
    let fallback = match attachment.kind {
        "photo" => "photo.jpg",
        "voice" => "voice.ogg",
        "audio" => "audio.mp3",
        _ => "file.bin",
    };
    let name = format!(
        "{}-{}",
        row.update_id,
        sanitize_file_name(&attachment.file_name, fallback)
    );
    let dir = gateway
        .home
        .join("cache")
        .join("gateway")
        .join(sanitize_file_name(&row.chat_id, "chat"));
    tokio::task::spawn_blocking(move || {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // A directory swapped for a link (by a tool, say) is not followed.
        for part in [
            dir.parent().and_then(Path::parent),
            dir.parent(),
            Some(dir.as_path()),
        ]
        .into_iter()
        .flatten()
        {
            let real = std::fs::symlink_metadata(part)
                .map_err(|e| format!("cannot inspect {}: {e}", part.display()))?;
            if !real.is_dir() {
                return Err(format!("{} is not a plain directory", part.display()));
            }
        }
        let path = dir.join(name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        std::io::Write::write_all(&mut file, &bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path.display().to_string())
    })
    .await
    .map_err(|e| format!("the save task failed: {e}"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_sanitised() {
        assert_eq!(
            sanitize_file_name("../../etc/passwd", "x"),
            "_.._etc_passwd"
        );
        assert_eq!(sanitize_file_name(".bashrc", "x"), "bashrc");
        assert_eq!(sanitize_file_name("", "photo.jpg"), "photo.jpg");
        assert_eq!(sanitize_file_name(&"a".repeat(300), "x").len(), 100);
    }
}
