//! `web_extract`'s conversion benchmark: a 1 MB article page (navigation, ads and a footer
//! around about 2,000 sections of headings, paragraphs and lists) turned into Markdown by
//! `hermesd::tools::web::to_markdown`, fetch excluded (pages from 256 KB take the one-pass path);
//! a 250 KB one, the largest readability scores; and the fixture article with a table and code.
//! Prints a table of times and of the peak memory the conversion allocated beyond its input.
//!
//! `cargo run --release -p hermes-tests --bin bench-web [-- RUNS]` (RUNS: samples of each
//! timing; default 20; CI runs 1 as a smoke test, whose numbers mean nothing).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench binary fails by panicking

use hermes_tests::counting;
use std::time::{Duration, Instant};

use hermes_tests::{
    report::{self, Row},
    web_fixture,
};
use hermesd::tools::web::to_markdown;

const RUNS: usize = 20;
const PAGE_BYTES: usize = 1_000_000;
const URL: &str = "https://news.example/2026/rivers";

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

/// Time `runs` conversions of `html`; the samples and the largest peak allocation.
fn measure(html: &str, runs: usize) -> (Vec<Duration>, isize, usize) {
    let mut samples = Vec::with_capacity(runs);
    let mut peak = 0;
    let mut chars = 0;
    for _ in 0..runs {
        counting::start();
        let started = Instant::now();
        let page = to_markdown(html, URL);
        samples.push(started.elapsed());
        chars = page.markdown.len();
        drop(page);
        peak = peak.max(counting::stop().1);
    }
    (samples, peak, chars)
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
    let big = web_fixture::huge_article(PAGE_BYTES);
    let (mut big_times, big_peak, big_chars) = measure(&big, runs);
    assert!(
        big_chars > 100_000,
        "the big page converted to {big_chars} bytes"
    );
    // Just under the size where the one-pass path takes over: readability's worst case.
    let edge = web_fixture::huge_article(250_000);
    let (mut edge_times, edge_peak, _) = measure(&edge, runs);
    let (mut small_times, small_peak, _) = measure(web_fixture::ARTICLE, runs);
    let rows = vec![
        Row::from_samples(
            format!("1 MB article → Markdown ({} KB out)", big_chars / 1000),
            &mut big_times,
            "< 20 ms",
        ),
        report::value_row(
            "1 MB article: peak memory allocated".into(),
            mib(big_peak),
            "< 10 MiB",
        ),
        Row::from_samples(
            "250 KB article (readability, the largest it takes) → Markdown".into(),
            &mut edge_times,
            "",
        ),
        report::value_row(
            "250 KB article: peak memory allocated".into(),
            mib(edge_peak),
            "",
        ),
        Row::from_samples(
            "5 KB article with table and code → Markdown".into(),
            &mut small_times,
            "",
        ),
        report::value_row(
            "5 KB article: peak memory allocated".into(),
            mib(small_peak),
            "",
        ),
    ];
    report::print(&format!("web_extract conversion ({runs} runs)"), &rows);
}
