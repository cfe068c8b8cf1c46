//! Images the model sees. Messages keep images as `MEDIA:<path>` lines (an MCP tool's image,
//! saved in the session's cache); for a model that takes images, each request carries the newest
//! of them as image parts, read from disk for the turn and never stored in the database. Only
//! files under the daemon's result cache (`cache/tool-results/`) are read, whatever a line
//! names — a tool's text cannot make the daemon send another file to the provider — and only
//! real PNG, JPEG, GIF or WebP files within the providers' size limit.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Mutex,
};

use base64::Engine as _;

use crate::llm::{ChatMessage, Image, Role};

/// Images one request carries at most (the newest); older ones stay paths in the text.
pub const MAX_IMAGES_PER_REQUEST: usize = 4;
/// The largest image file sent (Anthropic's limit for one image is 5 MB).
pub const MAX_IMAGE_BYTES: u64 = crate::llm::image_prep::MAX_IMAGE_BYTES as u64;

/// The images of one turn's requests, read once each (bounded by what the requests carry).
pub struct TurnMedia {
    /// The directory files must be under (resolved when images are attached: it may be made
    /// during the turn).
    root: PathBuf,
    loaded: Mutex<HashMap<PathBuf, Option<Image>>>,
}

impl TurnMedia {
    /// Images for a turn whose cache root is `root` (`tools::spill_root`).
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            loaded: Mutex::new(HashMap::new()),
        }
    }

    /// Give the newest [`MAX_IMAGES_PER_REQUEST`] images named in user messages and tool
    /// results of `messages` to those messages. Blocking file reads: call off the runtime, or
    /// accept a few small reads.
    pub fn attach(&self, messages: &mut [ChatMessage]) {
        let Ok(root) = self.root.canonicalize() else {
            return;
        };
        let root = root.as_path();
        let mut budget = MAX_IMAGES_PER_REQUEST;
        for message in messages.iter_mut().rev() {
            if budget == 0 {
                break;
            }
            if !matches!(message.role(), Role::User | Role::Tool) {
                continue;
            }
            let paths = media_paths(&message.content);
            let mut images = Vec::new();
            for path in paths.into_iter().rev().take(budget) {
                if let Some(image) = self.load(root, &path) {
                    images.push(image);
                }
            }
            images.reverse();
            budget -= images.len();
            message.images = images;
        }
    }

    fn load(&self, root: &Path, path: &Path) -> Option<Image> {
        let key = path.to_path_buf();
        if let Ok(loaded) = self.loaded.lock()
            && let Some(image) = loaded.get(&key)
        {
            return image.clone();
        }
        let image = read_image(root, path);
        if let Err(e) = &image {
            tracing::debug!(path = %path.display(), error = %e, "image not sent to the model");
        }
        let image = image.ok();
        if let Ok(mut loaded) = self.loaded.lock() {
            loaded.insert(key, image.clone());
        }
        image
    }
}

/// The paths `MEDIA:` names in `text`, in order: each runs to the next space, quote or
/// backslash (a tool result is often JSON, where a line break is written `\n`).
fn media_paths(text: &str) -> Vec<PathBuf> {
    text.match_indices("MEDIA:")
        .map(|(at, tag)| {
            let rest = &text[at + tag.len()..];
            let end = rest
                .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\\' | '\''))
                .unwrap_or(rest.len());
            PathBuf::from(&rest[..end])
        })
        .filter(|path| path.is_absolute())
        .collect()
}

/// The image at `path` when it is a regular file under `root` (after resolving links), small
/// enough, and one of the types providers take, judged by its first bytes.
pub(super) fn read_image(root: &Path, path: &Path) -> Result<Image, String> {
    let real = path
        .canonicalize()
        .map_err(|e| format!("cannot resolve: {e}"))?;
    if !real.starts_with(root) {
        return Err(format!("not under {}", root.display()));
    }
    let meta = std::fs::metadata(&real).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(format!(
            "{} bytes, over the {MAX_IMAGE_BYTES}-byte limit",
            meta.len()
        ));
    }
    let bytes = std::fs::read(&real).map_err(|e| e.to_string())?;
    let media_type =
        crate::llm::image_prep::sniff(&bytes).ok_or("not a PNG, JPEG, GIF or WebP image")?;
    Ok(Image {
        media_type: media_type.to_string(),
        base64: base64::engine::general_purpose::STANDARD
            .encode(&bytes)
            .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n0000";

    fn tool(text: &str) -> ChatMessage {
        ChatMessage {
            role: Some(Role::Tool),
            content: text.into(),
            ..ChatMessage::default()
        }
    }

    #[test]
    fn images_under_the_cache_reach_the_newest_messages_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("cache");
        std::fs::create_dir_all(&root).unwrap();
        let mut names = Vec::new();
        for i in 0..6 {
            let path = root.join(format!("image_{i}.png"));
            std::fs::write(&path, PNG).unwrap();
            names.push(path.display().to_string());
        }
        let mut messages: Vec<ChatMessage> = names
            .iter()
            .map(|n| tool(&format!("{{\"result\": \"MEDIA:{n}\"}}")))
            .collect();
        messages.push(ChatMessage::assistant(format!("MEDIA:{}", names[0])));
        TurnMedia::new(&root).attach(&mut messages);
        let carried: Vec<usize> = messages.iter().map(|m| m.images.len()).collect();
        assert_eq!(
            carried,
            [0, 0, 1, 1, 1, 1, 0],
            "the newest four; not the assistant's"
        );
        assert_eq!(messages[5].images[0].media_type, "image/png");
    }

    #[test]
    fn paths_are_found_in_plain_text_and_in_json() {
        let json = r#"{"result": "Here:\nMEDIA:/c/a.png\nMore", "x": "MEDIA:/c/b.png"}"#;
        assert_eq!(
            media_paths(json),
            [PathBuf::from("/c/a.png"), PathBuf::from("/c/b.png")]
        );
        assert_eq!(
            media_paths("MEDIA:/c/d.png and MEDIA:relative.png"),
            [PathBuf::from("/c/d.png")]
        );
    }

    #[test]
    fn files_outside_the_cache_links_out_of_it_and_non_images_are_not_sent() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("cache");
        std::fs::create_dir_all(&root).unwrap();
        let outside = dir.path().join("secret.png");
        std::fs::write(&outside, PNG).unwrap();
        let link = root.join("link.png");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let text = root.join("notes.png");
        std::fs::write(&text, "not an image").unwrap();
        let mut messages = vec![
            tool(&format!("MEDIA:{}", outside.display())),
            tool(&format!("MEDIA:{}", link.display())),
            tool(&format!("MEDIA:{}", text.display())),
            tool(&format!("MEDIA:{}/../secret.png", root.display())),
        ];
        TurnMedia::new(&root).attach(&mut messages);
        assert!(messages.iter().all(|m| m.images.is_empty()));
    }
}
