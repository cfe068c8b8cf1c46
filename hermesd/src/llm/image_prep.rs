//! Images made fit for a provider: the type judged by the file's first bytes (PNG, JPEG, GIF,
//! WebP — what OpenAI and Anthropic take), a file already within the limits passed through
//! untouched, and a larger one decoded, scaled down to [`MAX_LONG_SIDE`] and re-encoded (JPEG,
//! or PNG when it has transparency). Anything else is refused with the reason. The codec runs
//! only here, on the caller's (blocking) thread, and holds nothing once it returns.

use std::{
    io::Cursor,
    path::{Path, PathBuf},
};

use image::{DynamicImage, ImageFormat, ImageReader, Limits};

/// The largest image file sent to a provider (Anthropic's limit for one image is 5 MB).
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;
/// The longest side sent: Anthropic scales anything longer down to this itself, and OpenAI's
/// high detail works on at most 2048 px, so more pixels only cost upload time.
pub const MAX_LONG_SIDE: u32 = 1568;
/// The largest file taken in at all (Hermes' download cap for `vision_analyze`).
pub const MAX_SOURCE_BYTES: usize = 50 * 1024 * 1024;
/// The most pixels decoded (a 64-megapixel photo); a larger one is refused, so a small file
/// that claims huge dimensions cannot take the daemon's memory.
const MAX_PIXELS: u64 = 64_000_000;
/// Quality of a re-encoded JPEG.
const JPEG_QUALITY: u8 = 85;

/// An image ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: &'static str,
    pub bytes: Vec<u8>,
    /// Whether it was decoded and re-encoded (else these are the original bytes).
    pub resized: bool,
}

impl Prepared {
    /// The file extension for its type (`png`, `jpg`, `gif`, `webp`).
    pub fn extension(&self) -> &'static str {
        extension(self.media_type)
    }
}

/// Why an image cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("not an image: only PNG, JPEG, GIF and WebP files are taken")]
    NotAnImage,
    #[error("the image is {bytes} bytes, over the {limit}-byte limit")]
    TooLarge { bytes: usize, limit: usize },
    #[error("the image is {width}x{height} pixels, more than can be decoded ({MAX_PIXELS} pixels)")]
    TooManyPixels { width: u32, height: u32 },
    #[error("the image cannot be decoded: {0}")]
    Decode(String),
    #[error("the image cannot be re-encoded: {0}")]
    Encode(String),
}

/// The media type of an image by its magic bytes.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// The extension of `media_type`'s files.
pub fn extension(media_type: &str) -> &'static str {
    match media_type {
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => "jpg",
    }
}

fn format_of(media_type: &str) -> ImageFormat {
    match media_type {
        "image/png" => ImageFormat::Png,
        "image/gif" => ImageFormat::Gif,
        "image/webp" => ImageFormat::WebP,
        _ => ImageFormat::Jpeg,
    }
}

/// `bytes` made fit to send: unchanged when within [`MAX_IMAGE_BYTES`] and [`MAX_LONG_SIDE`],
/// else scaled down and re-encoded. CPU-bound: call it off the async runtime.
pub fn prepare(bytes: Vec<u8>) -> Result<Prepared, ImageError> {
    let media_type = sniff(&bytes).ok_or(ImageError::NotAnImage)?;
    if bytes.len() > MAX_SOURCE_BYTES {
        return Err(ImageError::TooLarge {
            bytes: bytes.len(),
            limit: MAX_SOURCE_BYTES,
        });
    }
    let format = format_of(media_type);
    let (width, height) = ImageReader::with_format(Cursor::new(&bytes), format)
        .into_dimensions()
        .map_err(|e| ImageError::Decode(e.to_string()))?;
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(ImageError::TooManyPixels { width, height });
    }
    if bytes.len() <= MAX_IMAGE_BYTES && width.max(height) <= MAX_LONG_SIDE {
        return Ok(Prepared {
            media_type,
            bytes,
            resized: false,
        });
    }
    let image = decode(&bytes, format)?;
    drop(bytes);
    let image = if width.max(height) > MAX_LONG_SIDE {
        // An integer area average: fast, and as good as a filter when shrinking this much.
        image.thumbnail(MAX_LONG_SIDE, MAX_LONG_SIDE)
    } else {
        image
    };
    let (bytes, media_type) = encode(&image)?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(ImageError::TooLarge {
            bytes: bytes.len(),
            limit: MAX_IMAGE_BYTES,
        });
    }
    Ok(Prepared {
        media_type,
        bytes,
        resized: true,
    })
}

fn decode(bytes: &[u8], format: ImageFormat) -> Result<DynamicImage, ImageError> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    // RGBA at 16 bits per channel of the largest image allowed, with room for the decoder.
    limits.max_alloc = Some(MAX_PIXELS * 8 + (64 << 20));
    reader.limits(limits);
    reader
        .decode()
        .map_err(|e| ImageError::Decode(e.to_string()))
}

/// JPEG when the image is opaque, else PNG (JPEG has no transparency).
fn encode(image: &DynamicImage) -> Result<(Vec<u8>, &'static str), ImageError> {
    let mut out = Cursor::new(Vec::new());
    if image.color().has_alpha() {
        image
            .write_to(&mut out, ImageFormat::Png)
            .map_err(|e| ImageError::Encode(e.to_string()))?;
        return Ok((out.into_inner(), "image/png"));
    }
    let rgb = image.to_rgb8();
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY);
    rgb.write_with_encoder(encoder)
        .map_err(|e| ImageError::Encode(e.to_string()))?;
    Ok((out.into_inner(), "image/jpeg"))
}

/// Write `image` into `dir` as `<digest>.<ext>` (0600) unless the same image is already there.
pub fn save(dir: &Path, image: &Prepared) -> Result<PathBuf, String> {
    use sha2::Digest;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let digest = sha2::Sha256::digest(&image.bytes);
    let hex: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    let path = dir.join(format!("{hex}.{}", image.extension()));
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        return Ok(path);
    }
    let partial = dir.join(format!(".{hex}.{}.part", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&partial)
        .and_then(|mut file| std::io::Write::write_all(&mut file, &image.bytes))
        .and_then(|()| std::fs::rename(&partial, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(format!("cannot write {}: {e}", path.display()));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x * y) % 239) as u8])
        });
        let mut out = Cursor::new(Vec::new());
        image.write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn a_small_image_passes_through_untouched() {
        let bytes = png(40, 30);
        let prepared = prepare(bytes.clone()).unwrap();
        assert_eq!(prepared.media_type, "image/png");
        assert_eq!(prepared.bytes, bytes);
        assert!(!prepared.resized);
    }

    #[test]
    fn a_large_image_is_scaled_to_the_long_side_and_re_encoded() {
        let prepared = prepare(png(3000, 1000)).unwrap();
        assert!(prepared.resized);
        assert_eq!(prepared.media_type, "image/jpeg");
        let scaled = image::load_from_memory(&prepared.bytes).unwrap();
        assert_eq!(scaled.width(), MAX_LONG_SIDE);
        assert!(
            (scaled.height() as i64 - 523).abs() <= 1,
            "{}",
            scaled.height()
        );
    }

    #[test]
    fn non_images_and_lying_files_are_refused() {
        assert_eq!(
            prepare(b"just some text".to_vec()),
            Err(ImageError::NotAnImage)
        );
        let mut truncated = png(100, 100);
        truncated.truncate(20);
        assert!(matches!(prepare(truncated), Err(ImageError::Decode(_))));
        let mut huge = vec![0u8; MAX_SOURCE_BYTES + 1];
        huge[..8].copy_from_slice(b"\x89PNG\r\n\x1a\n");
        assert!(matches!(prepare(huge), Err(ImageError::TooLarge { .. })));
    }
}
