//! Images for a main model that does not see them (Hermes' `agent.image_input_mode: text`, and
//! `auto` with a text-only model, when `auxiliary.vision` names a model): each image the user
//! attached is described once by the auxiliary vision model, and every request carries the
//! description in place of the image's `[Attached image] MEDIA:` line, with the path for a closer
//! look through `vision_analyze`. The description is kept beside the image
//! (`<image>.description`, in the session's images directory, written as the images are), so
//! later turns and a restarted daemon send the same text; only the newest user message's images
//! are described, at most [`MAX_DESCRIBED_PER_TURN`]. Like `vision_analyze`, only files under the result cache are read.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

use tokio_util::sync::CancellationToken;

use super::{attachments::ATTACHED_IMAGE, media};
use crate::{
    llm::{ChatMessage, Role},
    policy::secrets::SecretMasker,
    tools::VisionHandle,
};

/// Images described in one turn at most; more keep only their path.
pub const MAX_DESCRIBED_PER_TURN: usize = 4;
/// The longest description kept, in bytes.
const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;
/// What the vision model is asked about an image the user sent.
const PROMPT: &str = "Describe this image thoroughly: every piece of text, code or data in it, \
    the objects and people, the layout and colours, and anything else worth noticing.";

/// The descriptions of one turn's requests, asked for once each.
pub struct TurnDescriptions {
    /// The directory images must be under (`tools::spill_root`).
    root: PathBuf,
    vision: Arc<dyn VisionHandle>,
    masker: Arc<SecretMasker>,
    /// Per image path: its description, or `None` when it has none.
    known: Mutex<HashMap<PathBuf, Option<String>>>,
}

impl TurnDescriptions {
    pub fn new(root: &Path, vision: Arc<dyn VisionHandle>, masker: Arc<SecretMasker>) -> Self {
        Self {
            root: root.to_path_buf(),
            vision,
            masker,
            known: Mutex::new(HashMap::new()),
        }
    }

    /// Replace each attached-image line of the user messages in `messages` by the image's
    /// description, asking the vision model for those of the newest user message that have none.
    pub async fn apply(&self, messages: &mut [ChatMessage], cancel: &CancellationToken) {
        let newest = messages
            .iter()
            .rposition(|m| matches!(m.role(), Role::User));
        let mut asked = 0;
        for (index, message) in messages.iter_mut().enumerate() {
            if !matches!(message.role(), Role::User) || !message.content.contains(ATTACHED_IMAGE) {
                continue;
            }
            let mut text = String::with_capacity(message.content.len());
            for line in message.content.split_inclusive('\n') {
                let Some(path) = line.trim_end().strip_prefix(ATTACHED_IMAGE) else {
                    text.push_str(line);
                    continue;
                };
                let may_ask = Some(index) == newest && asked < MAX_DESCRIBED_PER_TURN;
                let (description, did_ask) = self.describe(Path::new(path), may_ask, cancel).await;
                asked += usize::from(did_ask);
                text.push_str(&presented(path, description.as_deref()));
                if line.ends_with('\n') {
                    text.push('\n');
                }
            }
            message.content = text;
        }
    }

    /// The description of the image at `path`, and whether the vision model was asked for it.
    async fn describe(
        &self,
        path: &Path,
        may_ask: bool,
        cancel: &CancellationToken,
    ) -> (Option<String>, bool) {
        if let Ok(known) = self.known.lock()
            && let Some(description) = known.get(path)
        {
            return (description.clone(), false);
        }
        let root = self.root.clone();
        let image_path = path.to_path_buf();
        let kept = tokio::task::spawn_blocking(move || kept_description(&root, &image_path))
            .await
            .ok()
            .flatten();
        let (description, asked) = match kept {
            // Kept by an earlier turn: masked again, as the masker may know more secrets now.
            Some(kept) => (Some(self.masker.mask(&kept).into_owned()), false),
            None if may_ask => (self.ask(path, cancel).await, true),
            // Not asked for here: the same image may still be described for a newer message.
            None => return (None, false),
        };
        if let Ok(mut known) = self.known.lock() {
            known.insert(path.to_path_buf(), description.clone());
        }
        (description, asked)
    }

    async fn ask(&self, path: &Path, cancel: &CancellationToken) -> Option<String> {
        let root = self.root.clone();
        let image_path = path.to_path_buf();
        let image = tokio::task::spawn_blocking(move || {
            let root = root.canonicalize().map_err(|e| e.to_string())?;
            media::read_image(&root, &image_path)
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|read| read);
        let answer = match image {
            Ok(image) => self.vision.analyze(image, PROMPT, cancel).await,
            Err(e) => Err(e),
        };
        let description = match answer {
            Ok(Some(answer)) if !answer.trim().is_empty() => answer,
            Ok(_) => return None,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "an attached image was not described");
                return None;
            }
        };
        let description = self.clean(&description);
        let (root, image_path, kept) = (self.root.clone(), path.to_path_buf(), description.clone());
        let _ =
            tokio::task::spawn_blocking(move || keep_description(&root, &image_path, &kept)).await;
        Some(description)
    }

    /// A vision model's answer as the main model gets it: no terminal escapes, no secrets,
    /// bounded.
    fn clean(&self, answer: &str) -> String {
        let plain = crate::policy::ansi::strip_ansi(answer.trim());
        let mut text = self.masker.mask(&plain).into_owned();
        if text.len() > MAX_DESCRIPTION_BYTES {
            let mut end = MAX_DESCRIPTION_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str(" […]");
        }
        text
    }
}

/// The text a text-only model gets for the image at `path`.
fn presented(path: &str, description: Option<&str>) -> String {
    match description {
        Some(description) => format!(
            "[The user attached an image. The vision model describes it:\n{description}]\n\
             [For a closer look, call vision_analyze with image_url: {path}]"
        ),
        None => format!(
            "[The user attached an image that has no description; to see it, call \
             vision_analyze with image_url: {path}]"
        ),
    }
}

/// Where the description of the image at `real` (a resolved path under the cache) is kept:
/// beside it, when it is one of the session's attached images.
fn description_file(root: &Path, path: &Path) -> Option<PathBuf> {
    let root = root.canonicalize().ok()?;
    let real = path.canonicalize().ok()?;
    let in_images = real
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|name| name == "images");
    (real.starts_with(&root) && in_images && real.is_file())
        .then(|| PathBuf::from(format!("{}.description", real.display())))
}

fn kept_description(root: &Path, path: &Path) -> Option<String> {
    use std::io::Read;
    let file = description_file(root, path)?;
    if !std::fs::symlink_metadata(&file).ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(file)
        .ok()?
        .take((MAX_DESCRIPTION_BYTES + 8) as u64)
        .read_to_string(&mut text)
        .ok()?;
    (!text.trim().is_empty()).then_some(text)
}

fn keep_description(root: &Path, path: &Path, description: &str) {
    let Some(file) = description_file(root, path) else {
        return;
    };
    if let Err(e) = crate::llm::image_prep::write_private(&file, description.as_bytes()) {
        tracing::warn!(path = %file.display(), error = %e, "cannot keep an image description");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n0000";

    /// A vision model that names how many times it was asked, and leaks a terminal escape.
    #[derive(Default)]
    struct Counting(AtomicUsize);

    #[async_trait::async_trait]
    impl VisionHandle for Counting {
        async fn analyze(
            &self,
            _image: crate::llm::Image,
            _prompt: &str,
            _cancel: &CancellationToken,
        ) -> Result<Option<String>, String> {
            let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
            Ok(Some(format!("\x1b[31mpicture {n}\x1b[0m")))
        }

        fn download_timeout(&self) -> std::time::Duration {
            std::time::Duration::from_secs(1)
        }
    }

    #[tokio::test]
    async fn only_the_newest_messages_images_under_the_cache_are_described_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("cache");
        let images = root.join("s1/images");
        std::fs::create_dir_all(&images).unwrap();
        let path = |name: &str| {
            let path = images.join(name);
            std::fs::write(&path, PNG).unwrap();
            path.display().to_string()
        };
        let (old, a, b) = (path("old.png"), path("a.png"), path("b.png"));
        let outside = dir.path().join("secret.png");
        std::fs::write(&outside, PNG).unwrap();
        let line = |p: &str| format!("{ATTACHED_IMAGE}{p}");
        let mut messages = vec![
            ChatMessage::user(format!("first\n{}", line(&old))),
            ChatMessage::assistant(line(&a)),
            ChatMessage::user(format!(
                "look\n{}\n{}\n{}",
                line(&a),
                line(&b),
                line(&outside.display().to_string())
            )),
        ];
        let vision = Arc::new(Counting::default());
        let turn = TurnDescriptions::new(&root, vision.clone(), Arc::default());
        let cancel = CancellationToken::new();
        turn.apply(&mut messages, &cancel).await;
        assert_eq!(
            vision.0.load(Ordering::SeqCst),
            2,
            "a and b; not old, not outside"
        );
        assert!(messages[0].content.contains("has no description"));
        assert_eq!(
            messages[1].content,
            line(&a),
            "the assistant's text is left alone"
        );
        let newest = &messages[2].content;
        assert!(
            newest.starts_with("look\n[The user attached an image."),
            "{newest}"
        );
        assert!(newest.contains("describes it:\npicture 1]") && newest.contains("picture 2]"));
        assert!(!newest.contains('\x1b'), "{newest}");
        assert!(newest.contains(&format!(
            "no description; to see it, call vision_analyze with image_url: {}",
            outside.display()
        )));
        // Kept beside the image: a new turn reads it instead of asking.
        assert_eq!(
            std::fs::read_to_string(format!("{a}.description")).unwrap(),
            "picture 1"
        );
        assert!(!dir.path().join("secret.png.description").exists());
        let mut next = vec![ChatMessage::user(line(&a))];
        let turn = TurnDescriptions::new(&root, vision.clone(), Arc::default());
        turn.apply(&mut next, &cancel).await;
        assert_eq!(vision.0.load(Ordering::SeqCst), 2);
        assert!(next[0].content.contains("picture 1"));
    }

    #[tokio::test]
    async fn an_image_named_again_in_the_newest_message_is_described() {
        let dir = tempfile::tempdir().unwrap();
        let images = dir.path().join("s1/images");
        std::fs::create_dir_all(&images).unwrap();
        let image = images.join("same.png");
        std::fs::write(&image, PNG).unwrap();
        let line = format!("{ATTACHED_IMAGE}{}", image.display());
        let mut messages = vec![ChatMessage::user(line.clone()), ChatMessage::user(line)];
        let vision = Arc::new(Counting::default());
        let turn = TurnDescriptions::new(dir.path(), vision.clone(), Arc::default());
        turn.apply(&mut messages, &CancellationToken::new()).await;
        assert_eq!(vision.0.load(Ordering::SeqCst), 1);
        assert!(
            messages[1].content.contains("picture 1"),
            "{}",
            messages[1].content
        );
    }

    #[test]
    fn a_link_where_the_description_goes_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let images = dir.path().join("images");
        std::fs::create_dir_all(&images).unwrap();
        let image = images.join("a.png");
        std::fs::write(&image, PNG).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        std::os::unix::fs::symlink(&victim, images.join("a.png.description")).unwrap();
        keep_description(dir.path(), &image, "a description");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert_eq!(
            kept_description(dir.path(), &image).as_deref(),
            Some("a description")
        );
    }
}
