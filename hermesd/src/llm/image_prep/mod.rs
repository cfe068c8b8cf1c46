//! Images made fit for a provider: the type judged by the file's first bytes (PNG, JPEG, GIF,
//! WebP — what OpenAI and Anthropic take), a file already within the limits passed through
//! untouched, and a larger one decoded, scaled down to [`MAX_LONG_SIDE`], turned upright and
//! re-encoded (JPEG, or PNG when it has transparency; the pixel work is in `pixels`). Anything
//! else is refused with the reason. The codecs run only here, on the caller's (blocking)
//! thread, and hold nothing once it returns.

use std::{
    io::Cursor,
    path::{Path, PathBuf},
};

use image::{ImageFormat, ImageReader};

mod pixels;

/// The largest image file sent to a provider (Anthropic's limit for one image is 5 MB).
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;
/// The longest side sent: Anthropic scales anything longer down to this itself, and OpenAI's
/// high detail works on at most 2048 px, so more pixels only cost upload time.
pub const MAX_LONG_SIDE: u32 = 1568;
/// The largest file taken in at all (Hermes' download cap for `vision_analyze`).
pub const MAX_SOURCE_BYTES: usize = 50 * 1024 * 1024;
/// Held while an image is decoded, scaled and encoded.
static DECODING: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    #[error(
        "the image is {width}x{height} pixels, more than one image may take in memory when decoded (256 MiB)"
    )]
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
    if bytes.len() <= MAX_IMAGE_BYTES && width.max(height) <= MAX_LONG_SIDE {
        return Ok(Prepared {
            media_type,
            bytes,
            resized: false,
        });
    }
    // One image is decoded at a time, so its memory is the most preparing images ever takes.
    let _one_at_a_time = DECODING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let pixels = pixels::decode(&bytes, format)?;
    drop(bytes);
    let (bytes, media_type) = pixels.fit(MAX_LONG_SIDE)?.upright()?.encode()?;
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

/// Write `image` into `dir` as `<digest>.<ext>` (0600) unless the same image is already there.
pub fn save(dir: &Path, image: &Prepared) -> Result<PathBuf, String> {
    use sha2::Digest;
    use std::os::unix::fs::DirBuilderExt;
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
    write_private(&path, &image.bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// Write `bytes` to `path` (0600) through a temporary file of its own in the same directory,
/// renamed into place: a reader never sees half a file, two writers never share one, and a link
/// standing at `path` is replaced, never followed.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::Builder::new()
        .prefix(".")
        .suffix(".part")
        .tempfile_in(dir)?;
    std::io::Write::write_all(&mut file, bytes)?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
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

    /// A `width`x`height` JPEG of one colour; with `exif_orientation`, an EXIF block saying so.
    fn jpeg(width: u16, height: u16, rgb: [u8; 3], exif_orientation: Option<u16>) -> Vec<u8> {
        let pixels: Vec<u8> = (0..usize::from(width) * usize::from(height))
            .flat_map(|_| rgb)
            .collect();
        let mut out = Vec::new();
        let mut encoder = jpeg_encoder::Encoder::new(&mut out, 95);
        if let Some(orientation) = exif_orientation {
            // "Exif\0\0", a big-endian TIFF header, one IFD with one SHORT entry: 0x0112.
            let mut exif = b"Exif\0\0MM\0\x2a\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01".to_vec();
            exif.extend_from_slice(&orientation.to_be_bytes());
            exif.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
            encoder.add_app_segment(1, &exif).unwrap();
        }
        encoder
            .encode(&pixels, width, height, jpeg_encoder::ColorType::Rgb)
            .unwrap();
        out
    }

    #[test]
    fn a_large_photo_keeps_its_colours_and_is_turned_upright() {
        let prepared = prepare(jpeg(3000, 1000, [200, 30, 60], None)).unwrap();
        assert_eq!(prepared.media_type, "image/jpeg");
        let scaled = image::load_from_memory(&prepared.bytes).unwrap().to_rgb8();
        assert_eq!(scaled.dimensions(), (MAX_LONG_SIDE, 522));
        let image::Rgb([r, g, b]) = *scaled.get_pixel(700, 300);
        let near = |got: u8, want: u8| got.abs_diff(want) <= 4;
        assert!(near(r, 200) && near(g, 30) && near(b, 60), "{r},{g},{b}");
        // EXIF 6: the camera was held upright, the sensor's rows are the picture's columns.
        let turned = prepare(jpeg(3000, 1000, [10, 120, 240], Some(6))).unwrap();
        let upright = image::load_from_memory(&turned.bytes).unwrap();
        assert_eq!((upright.width(), upright.height()), (522, MAX_LONG_SIDE));
    }

    #[test]
    fn a_large_transparent_image_stays_png_with_its_alpha() {
        let image = image::RgbaImage::from_fn(2000, 2000, |x, _| {
            image::Rgba([255, 0, 0, if x < 1000 { 0 } else { 255 }])
        });
        let mut out = Cursor::new(Vec::new());
        image.write_to(&mut out, ImageFormat::Png).unwrap();
        let prepared = prepare(out.into_inner()).unwrap();
        assert_eq!(prepared.media_type, "image/png");
        let scaled = image::load_from_memory(&prepared.bytes).unwrap().to_rgba8();
        assert_eq!(scaled.dimensions(), (MAX_LONG_SIDE, MAX_LONG_SIDE));
        assert_eq!(scaled.get_pixel(100, 100).0[3], 0);
        assert_eq!(*scaled.get_pixel(1500, 100), image::Rgba([255, 0, 0, 255]));
    }

    #[test]
    fn a_large_grey_jpeg_is_re_encoded() {
        let grey = image::GrayImage::from_fn(2400, 1600, |x, _| image::Luma([(x % 256) as u8]));
        let mut out = Cursor::new(Vec::new());
        grey.write_to(&mut out, ImageFormat::Jpeg).unwrap();
        let prepared = prepare(out.into_inner()).unwrap();
        assert_eq!(prepared.media_type, "image/jpeg");
        let scaled = image::load_from_memory(&prepared.bytes).unwrap();
        assert_eq!((scaled.width(), scaled.height()), (MAX_LONG_SIDE, 1045));
    }

    /// A PNG that is only a header: `width`x`height` RGBA at 16 bits per channel, and no pixels.
    fn deep_png_header(width: u32, height: u32) -> Vec<u8> {
        fn crc32(bytes: &[u8]) -> u32 {
            let mut crc = 0xFFFF_FFFFu32;
            for &byte in bytes {
                crc ^= u32::from(byte);
                for _ in 0..8 {
                    crc = if crc & 1 == 1 {
                        (crc >> 1) ^ 0xEDB8_8320
                    } else {
                        crc >> 1
                    };
                }
            }
            !crc
        }
        let mut header = width.to_be_bytes().to_vec();
        header.extend_from_slice(&height.to_be_bytes());
        header.extend_from_slice(&[16, 6, 0, 0, 0]);
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        // The header, then an empty data chunk: enough for a decoder to say what it would make.
        for (kind, data) in [(&b"IHDR"[..], &header[..]), (b"IDAT", &[]), (b"IEND", &[])] {
            let mut chunk = kind.to_vec();
            chunk.extend_from_slice(data);
            png.extend_from_slice(&(data.len() as u32).to_be_bytes());
            png.extend_from_slice(&chunk);
            png.extend_from_slice(&crc32(&chunk).to_be_bytes());
        }
        png
    }

    #[test]
    fn a_deep_image_over_the_memory_budget_is_refused_before_decoding() {
        // 22.5 megapixels, but 8 bytes a pixel and the 8-bit copy are over the 256 MiB one image
        // may take: refused from the header, a 100-byte file.
        assert_eq!(
            prepare(deep_png_header(5000, 4500)),
            Err(ImageError::TooManyPixels {
                width: 5000,
                height: 4500
            })
        );
    }
}
