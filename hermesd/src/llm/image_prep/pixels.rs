//! The pixel work behind [`super::prepare`]: decode (the image crate), scale down
//! (fast_image_resize), turn upright by the EXIF orientation (the re-encoded file carries no
//! EXIF), and encode (jpeg-encoder, or PNG when the image has transparency).

use std::io::Cursor;

use fast_image_resize::{self as fir, PixelType, ResizeAlg, ResizeOptions, Resizer, images::Image};
use image::{
    DynamicImage, ExtendedColorType, ImageDecoder, ImageEncoder, ImageFormat, ImageReader, Limits,
    metadata::Orientation,
};

use super::ImageError;

/// The most memory one image's pixels may take while it is prepared (a 64-megapixel photo at
/// 8 bits per channel, with alpha).
const MAX_DECODED_BYTES: u64 = 256 << 20;

/// Quality of a re-encoded JPEG.
const JPEG_QUALITY: u8 = 85;

/// Three bytes a pixel, or four with transparency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    Rgb,
    Rgba,
}

impl Layout {
    fn pixel_type(self) -> PixelType {
        match self {
            Layout::Rgb => PixelType::U8x3,
            Layout::Rgba => PixelType::U8x4,
        }
    }
}

/// A decoded image: `data` holds `width * height` pixels in `layout`, row after row.
pub(super) struct Pixels {
    pub width: u32,
    pub height: u32,
    pub layout: Layout,
    data: Vec<u8>,
    /// How the camera says the image must be turned to be upright.
    orientation: Orientation,
}

/// Decode `bytes` (already sniffed as `format`), unless its pixels and their 8-bit copy would
/// take more than [`MAX_DECODED_BYTES`]: the one size rule of image preparation.
pub(super) fn decode(bytes: &[u8], format: ImageFormat) -> Result<Pixels, ImageError> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    // The decoded pixels, with room for the decoder's own buffers.
    limits.max_alloc = Some(MAX_DECODED_BYTES + (64 << 20));
    reader.limits(limits);
    let failed = |e: image::ImageError| ImageError::Decode(e.to_string());
    let mut decoder = reader.into_decoder().map_err(failed)?;
    // The decoded image and its 8-bit copy must fit the budget: a small file of one colour can
    // claim 64 megapixels at 16 bits per channel.
    let (width, height) = decoder.dimensions();
    let pixels = u64::from(width) * u64::from(height);
    let color = decoder.color_type();
    let copy = match color {
        image::ColorType::Rgb8 | image::ColorType::Rgba8 => 0,
        other if other.has_alpha() => 4,
        _ => 3,
    };
    if pixels * (u64::from(color.bytes_per_pixel()) + copy) > MAX_DECODED_BYTES {
        return Err(ImageError::TooManyPixels { width, height });
    }
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let image = DynamicImage::from_decoder(decoder).map_err(failed)?;
    let (width, height) = (image.width(), image.height());
    let (layout, data) = if image.color().has_alpha() {
        (Layout::Rgba, image.into_rgba8().into_raw())
    } else {
        (Layout::Rgb, image.into_rgb8().into_raw())
    };
    Ok(Pixels {
        width,
        height,
        layout,
        data,
        orientation,
    })
}

impl Pixels {
    /// Scaled down so its longer side is `long_side` (an area average: every source pixel counts,
    /// so fine text and noise do not alias); unchanged when it already fits.
    pub fn fit(self, long_side: u32) -> Result<Pixels, ImageError> {
        let longest = self.width.max(self.height);
        if longest <= long_side {
            return Ok(self);
        }
        let scaled = |side: u32| {
            let exact = u64::from(side) * u64::from(long_side) / u64::from(longest);
            u32::try_from(exact).unwrap_or(long_side).max(1)
        };
        let (width, height) = (scaled(self.width), scaled(self.height));
        let failed = |e: String| ImageError::Encode(format!("cannot scale the image: {e}"));
        let pixel_type = self.layout.pixel_type();
        let source = fir::images::ImageRef::new(self.width, self.height, &self.data, pixel_type)
            .map_err(|e| failed(e.to_string()))?;
        let mut target = Image::new(width, height, pixel_type);
        let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(fir::FilterType::Box));
        Resizer::new()
            .resize(&source, &mut target, &options)
            .map_err(|e| failed(e.to_string()))?;
        Ok(Pixels {
            width,
            height,
            layout: self.layout,
            data: target.into_vec(),
            orientation: self.orientation,
        })
    }

    /// Turned and flipped as its EXIF orientation says.
    pub fn upright(self) -> Result<Pixels, ImageError> {
        if self.orientation == Orientation::NoTransforms {
            return Ok(self);
        }
        let Pixels {
            width,
            height,
            layout,
            data,
            orientation,
        } = self;
        let malformed = || ImageError::Encode("the pixel buffer does not match its size".into());
        let mut image = match layout {
            Layout::Rgba => DynamicImage::ImageRgba8(
                image::RgbaImage::from_raw(width, height, data).ok_or_else(malformed)?,
            ),
            Layout::Rgb => DynamicImage::ImageRgb8(
                image::RgbImage::from_raw(width, height, data).ok_or_else(malformed)?,
            ),
        };
        image.apply_orientation(orientation);
        Ok(Pixels {
            width: image.width(),
            height: image.height(),
            layout,
            data: image.into_bytes(),
            orientation: Orientation::NoTransforms,
        })
    }

    /// Encoded as JPEG, or as PNG when it has transparency (JPEG has none): the bytes and their
    /// media type.
    pub fn encode(&self) -> Result<(Vec<u8>, &'static str), ImageError> {
        let failed = |e: String| ImageError::Encode(e);
        if self.layout == Layout::Rgba {
            let mut out = Vec::new();
            image::codecs::png::PngEncoder::new(&mut out)
                .write_image(
                    &self.data,
                    self.width,
                    self.height,
                    ExtendedColorType::Rgba8,
                )
                .map_err(|e| failed(e.to_string()))?;
            return Ok((out, "image/png"));
        }
        let side = |value: u32| {
            u16::try_from(value).map_err(|_| failed(format!("a side of {value} pixels")))
        };
        let mut out = Vec::new();
        jpeg_encoder::Encoder::new(&mut out, JPEG_QUALITY)
            .encode(
                &self.data,
                side(self.width)?,
                side(self.height)?,
                jpeg_encoder::ColorType::Rgb,
            )
            .map_err(|e| failed(e.to_string()))?;
        Ok((out, "image/jpeg"))
    }
}
