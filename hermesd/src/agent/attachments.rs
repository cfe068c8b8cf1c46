//! Images the user attaches to a message (`hermesctl send --image`, `/image` in chat, a
//! Telegram photo): each is read and checked before anything is stored (type by its first
//! bytes, size, pixels; a large one scaled down), then written once into the session's cache
//! directory (`cache/tool-results/<session>/images/`, named by its digest, removed with the
//! session) and named in the stored message by a `MEDIA:` line. The database holds only that
//! path; a request to a model that takes images carries the file as an image part
//! ([`super::media`]), and a text-only model reads the path and can hand it to `vision_analyze`.

use std::path::{Path, PathBuf};

use super::TurnError;
use crate::llm::image_prep::{self, Prepared};

/// Images one message may carry.
pub const MAX_ATTACHED_IMAGES: usize = 8;

/// Read and check the images at `paths` (absolute paths the user named). Any one that is
/// missing, not an image or too large fails the whole message, naming the file.
pub async fn load(paths: Vec<String>) -> Result<Vec<Prepared>, TurnError> {
    if paths.len() > MAX_ATTACHED_IMAGES {
        return Err(TurnError::Image(format!(
            "{} images attached; a message takes at most {MAX_ATTACHED_IMAGES}",
            paths.len()
        )));
    }
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    tokio::task::spawn_blocking(move || paths.iter().map(|p| load_one(Path::new(p))).collect())
        .await
        .map_err(|e| TurnError::Task(format!("the image task failed: {e}")))?
}

fn load_one(path: &Path) -> Result<Prepared, TurnError> {
    let fail = |why: String| TurnError::Image(format!("image {}: {why}", path.display()));
    if !path.is_absolute() {
        return Err(fail("the path must be absolute".into()));
    }
    let meta = std::fs::metadata(path).map_err(|e| fail(e.to_string()))?;
    if !meta.is_file() {
        return Err(fail("not a regular file".into()));
    }
    if meta.len() > image_prep::MAX_SOURCE_BYTES as u64 {
        return Err(fail(format!(
            "{} bytes, over the {}-byte limit",
            meta.len(),
            image_prep::MAX_SOURCE_BYTES
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    image_prep::prepare(bytes).map_err(|e| fail(e.to_string()))
}

/// Keep `images` in session `session_id`'s cache directory under `hermes_home` and return
/// `text` with a `MEDIA:` line naming each.
pub async fn attach(
    hermes_home: &Path,
    session_id: &str,
    text: &str,
    images: Vec<Prepared>,
) -> Result<String, TurnError> {
    if images.is_empty() {
        return Ok(text.to_string());
    }
    let dir = images_dir(hermes_home, session_id);
    let paths = tokio::task::spawn_blocking(move || {
        images
            .iter()
            .map(|image| image_prep::save(&dir, image))
            .collect::<Result<Vec<PathBuf>, String>>()
    })
    .await
    .map_err(|e| TurnError::Task(format!("the image task failed: {e}")))?
    .map_err(TurnError::Image)?;
    Ok(marked(text, &paths))
}

/// The start of the line naming an attached image in the stored message.
pub const ATTACHED_IMAGE: &str = "[Attached image] MEDIA:";

/// Where session `session_id`'s attached images are kept.
pub fn images_dir(hermes_home: &Path, session_id: &str) -> PathBuf {
    crate::tools::spill_dir(hermes_home, session_id).join("images")
}

/// `text` with one line per image naming its path.
fn marked(text: &str, paths: &[PathBuf]) -> String {
    let mut out = text.trim_end().to_string();
    for path in paths {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("{ATTACHED_IMAGE}{}", path.display()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png() -> Vec<u8> {
        let image = image::RgbImage::from_pixel(8, 8, image::Rgb([200, 10, 10]));
        let mut out = std::io::Cursor::new(Vec::new());
        image.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[tokio::test]
    async fn an_image_is_stored_once_and_named_by_path() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("shot.png");
        std::fs::write(&file, png()).unwrap();
        let path = file.display().to_string();
        let images = load(vec![path.clone(), path]).await.unwrap();
        let text = attach(home.path(), "s1", "look", images).await.unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[1], lines[2], "the same image is one file");
        let stored = lines[1].strip_prefix("[Attached image] MEDIA:").unwrap();
        assert!(stored.starts_with(&images_dir(home.path(), "s1").display().to_string()));
        assert_eq!(std::fs::read(stored).unwrap(), png());
        assert_eq!(
            std::fs::read_dir(images_dir(home.path(), "s1"))
                .unwrap()
                .count(),
            1
        );
    }

    #[tokio::test]
    async fn missing_relative_and_non_image_files_are_refused_by_name() {
        let home = tempfile::tempdir().unwrap();
        let text = home.path().join("notes.png");
        std::fs::write(&text, "hello").unwrap();
        for (path, why) in [
            (
                home.path().join("nope.png").display().to_string(),
                "No such file",
            ),
            ("relative.png".to_string(), "absolute"),
            (text.display().to_string(), "not an image"),
            (home.path().display().to_string(), "not a regular file"),
        ] {
            let e = load(vec![path.clone()]).await.unwrap_err().to_string();
            assert!(e.contains(&path) && e.contains(why), "{e}");
        }
    }
}
