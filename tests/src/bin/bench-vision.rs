//! Image preparation benchmark: a 4 MB phone photo (4032x3024 JPEG with sensor-like noise over
//! smooth gradients, made here) prepared for a request by `hermesd::llm::image_prep::prepare` —
//! decode, scale to the 1568 px long side, re-encode JPEG. Prints median and p90 time, the peak
//! memory allocated beyond the input, and what is still allocated once the result is dropped;
//! and, for comparison, the JPEG decode alone (the image crate's zune-jpeg), the floor of the
//! whole preparation on this machine.
//!
//! `cargo run --release -p hermes-tests --bin bench-vision [-- RUNS]` (RUNS: samples; default
//! 20; CI runs 1 as a smoke test, whose numbers mean nothing).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench binary fails by panicking

use std::{
    io::Cursor,
    time::{Duration, Instant},
};

use hermes_tests::{
    counting,
    report::{self, Row},
};
use hermesd::llm::image_prep;

const RUNS: usize = 20;
const WIDTH: u32 = 4032;
const HEIGHT: u32 = 3024;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

/// A photo-like JPEG: smooth light falling across the frame plus per-pixel noise, at camera
/// quality, which lands near 4 MB at 12 megapixels.
fn photo() -> Vec<u8> {
    let mut seed = 0x9e37_79b9_u32;
    let image = image::RgbImage::from_fn(WIDTH, HEIGHT, |x, y| {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let noise = (seed % 24) as i32 - 12;
        let base = |v: u32, span: u32| (v * 200 / span) as i32 + 20;
        let channel = |v: i32| (v + noise).clamp(0, 255) as u8;
        image::Rgb([
            channel(base(x, WIDTH)),
            channel(base(y, HEIGHT)),
            channel(base(x + y, WIDTH + HEIGHT) / 2 + 60),
        ])
    });
    let mut out = Cursor::new(Vec::new());
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 92);
    image.write_with_encoder(encoder).unwrap();
    out.into_inner()
}

fn mib(bytes: isize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("RUNS is a number"))
        .unwrap_or(RUNS)
        .max(1);
    let source = photo();
    let mut samples: Vec<Duration> = Vec::with_capacity(runs);
    let mut peak = 0;
    let mut after = 0;
    let mut out_bytes = 0;
    for _ in 0..runs {
        let input = source.clone();
        counting::start();
        let started = Instant::now();
        let prepared = image_prep::prepare(input).expect("the photo prepares");
        samples.push(started.elapsed());
        assert!(prepared.resized && prepared.media_type == "image/jpeg");
        out_bytes = prepared.bytes.len();
        drop(prepared);
        let (live, high) = counting::stop();
        peak = peak.max(high);
        // The input was allocated before counting and freed inside: add it back, so this is
        // what the preparation itself left behind.
        after = after.max(live + source.len() as isize);
    }
    let mut decodes: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            let decoded = image::load_from_memory_with_format(&source, image::ImageFormat::Jpeg);
            let elapsed = started.elapsed();
            assert_eq!(decoded.expect("the photo decodes").width(), WIDTH);
            elapsed
        })
        .collect();
    let rows = vec![
        Row::from_samples(
            format!(
                "{:.1} MB {WIDTH}x{HEIGHT} photo → {} KB JPEG, 1568 px",
                source.len() as f64 / 1e6,
                out_bytes / 1000
            ),
            &mut samples,
            "< 60 ms",
        ),
        Row::from_samples(
            "  of which at least: the JPEG decode alone".into(),
            &mut decodes,
            "",
        ),
        report::value_row(
            "peak memory allocated beyond the input".into(),
            mib(peak),
            "< 64 MiB",
        ),
        report::value_row("still allocated after the request".into(), mib(after), "0"),
    ];
    report::print(&format!("image preparation ({runs} runs)"), &rows);
}
