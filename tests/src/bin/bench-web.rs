//! `web_extract`'s conversion benchmark: a 1 MB article page (navigation, ads and a footer
//! around about 2,000 sections of headings, paragraphs and lists) turned into Markdown by
//! `hermesd::tools::web::to_markdown`, fetch excluded; and the same for the fixture article
//! with a table and code. Prints a table of times and of the peak memory the conversion
//! allocated beyond its input.
//!
//! `cargo run --release -p hermes-tests --bin bench-web [-- RUNS]` (RUNS: samples of each
//! timing; default 20; CI runs 1 as a smoke test, whose numbers mean nothing).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench binary fails by panicking
#![allow(unsafe_code)] // the counting allocator (needs `unsafe_code` at "deny", not "forbid")

use std::time::{Duration, Instant};

use hermes_tests::{
    report::{self, Row},
    web_fixture,
};
use hermesd::tools::web::to_markdown;

const RUNS: usize = 20;
const PAGE_BYTES: usize = 1_000_000;
const URL: &str = "https://news.example/2026/rivers";

/// A global allocator counting the live bytes of the threads that turn counting on.
mod counting {
    use std::{
        alloc::{GlobalAlloc, Layout, System},
        cell::Cell,
    };

    thread_local! {
        static ON: Cell<bool> = const { Cell::new(false) };
        static LIVE: Cell<isize> = const { Cell::new(0) };
        static PEAK: Cell<isize> = const { Cell::new(0) };
    }

    fn add(delta: isize) {
        let _ = ON.try_with(|on| {
            if on.get() {
                let live = LIVE.get() + delta;
                LIVE.set(live);
                PEAK.set(PEAK.get().max(live));
            }
        });
    }

    pub struct Counting;

    // SAFETY: every call goes to `System` unchanged; the counting touches only const-initialised
    // thread-locals, which neither allocate nor panic.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let ptr = unsafe { System.alloc(layout) };
            if !ptr.is_null() {
                add(layout.size() as isize);
            }
            ptr
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            let ptr = unsafe { System.alloc_zeroed(layout) };
            if !ptr.is_null() {
                add(layout.size() as isize);
            }
            ptr
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { System.dealloc(ptr, layout) };
            add(-(layout.size() as isize));
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let new = unsafe { System.realloc(ptr, layout, new_size) };
            if !new.is_null() {
                add(new_size as isize - layout.size() as isize);
            }
            new
        }
    }

    pub fn start() {
        LIVE.set(0);
        PEAK.set(0);
        ON.set(true);
    }

    /// Stops counting; returns the peak live bytes since `start`.
    pub fn stop() -> isize {
        ON.set(false);
        PEAK.get()
    }
}

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
        peak = peak.max(counting::stop());
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
