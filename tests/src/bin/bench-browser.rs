//! Browser benchmark, on Debian's chromium and local pages: the start of a browser with its
//! first navigation, then `browser_snapshot` of a page of 1,000 interactive elements (compact
//! and full; target: under 150 ms), through the daemon's own `browser` module. Then the real
//! daemon's idle RSS after start, and again after a turn that used the browser tools and the
//! idle reaper closed the browser (target: unchanged — the CDP client loads only when used).
//!
//! `cargo run --release -p hermes-tests --bin bench-browser [-- COUNT]` (default 20 snapshots).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench binary fails by panicking

use std::time::{Duration, Instant};

use hermes_tests::{
    TestHome,
    browser_fixture::{Pages, browser_pids, chromium},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    report::{Row, print, value_row},
    wait,
};
use hermesd::{browser::Browsers, config::settings::BrowserSection};

const ELEMENTS: usize = 1_000;

#[tokio::main]
async fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("COUNT is a number"))
        .unwrap_or(20)
        .max(1);
    chromium();
    let pages = Pages::start().await;
    let mut rows = Vec::new();

    let home = tempfile::tempdir().unwrap();
    let browsers = Browsers::new(home.path());
    browsers.apply(&BrowserSection::default(), true);
    let started = Instant::now();
    let mut lease = browsers
        .lease("bench", Some(&home.path().join("downloads")))
        .await
        .unwrap();
    let page = lease.page().unwrap();
    page.navigate(&pages.url(&format!("/big?n={ELEMENTS}")))
        .await
        .unwrap();
    rows.push(value_row(
        "browser start + first navigation (1,000-element page)".into(),
        hermes_tests::report::ms(started.elapsed()),
        "",
    ));
    let mut raw = Vec::with_capacity(count);
    for _ in 0..count {
        let t = Instant::now();
        page.call_as::<serde::de::IgnoredAny>("Accessibility.getFullAXTree")
            .await
            .unwrap();
        raw.push(t.elapsed());
    }
    rows.push(Row::from_samples(
        format!("for comparison: Chromium's own accessibility tree (getFullAXTree, read only), {count} runs"),
        &mut raw,
        "",
    ));
    for full in [false, true] {
        let mut samples = Vec::with_capacity(count);
        let mut elements = 0;
        for _ in 0..count {
            let t = Instant::now();
            let snapshot = page.snapshot(full).await.unwrap();
            samples.push(t.elapsed());
            elements = snapshot.elements;
        }
        assert_eq!(elements, ELEMENTS, "every element has a ref");
        let what = if full { "full" } else { "compact" };
        rows.push(Row::from_samples(
            format!("browser_snapshot ({what}) of {ELEMENTS} elements, {count} runs"),
            &mut samples,
            "< 150 ms",
        ));
    }
    drop(lease);
    browsers.close_all().await;

    // The daemon: idle RSS before and after a browser turn whose browser was reaped.
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let server = FakeLlm::start(vec![
        Reply::text("hello"),
        Reply::tool_call(
            "browser_navigate",
            &serde_json::json!({"url": pages.url("/big?n=1000")}).to_string(),
        ),
        Reply::tool_call("browser_snapshot", "{}"),
        Reply::text("done"),
    ])
    .await;
    home.use_fake_model(
        &server,
        "security:\n  allow_private_urls: true\nbrowser:\n  inactivity_timeout: 1\n",
    );
    for _ in 0..20 {
        home.ctl_async(&["status"]).await.ok();
    }
    let idle = home.daemon_rss_mib();
    let cwd = home.path().to_str().unwrap().to_string();
    let out = home
        .ctl_async(&["send", "--json", "--cwd", &cwd, "hi"])
        .await
        .json();
    assert_eq!(out["answer"], "hello", "{out}");
    for _ in 0..20 {
        home.ctl_async(&["status"]).await.ok();
    }
    let plain = home.daemon_rss_mib();
    let out = home
        .ctl_async(&["send", "--json", "--cwd", &cwd, "go"])
        .await
        .json();
    assert_eq!(out["answer"], "done", "{out}");
    wait::until(
        "the reaper closes the browser",
        Duration::from_secs(30),
        || async { browser_pids(home.path()).is_empty().then_some(()) },
    )
    .await;
    for _ in 0..20 {
        home.ctl_async(&["status"]).await.ok();
    }
    rows.push(value_row(
        "hermesd idle RSS after start (browser tools offered)".into(),
        format!("{idle:.1} MiB"),
        "",
    ));
    rows.push(value_row(
        "hermesd RSS after a turn without the browser".into(),
        format!("{plain:.1} MiB"),
        "",
    ));
    rows.push(value_row(
        "hermesd RSS after a browser turn, browser reaped".into(),
        format!("{:.1} MiB", home.daemon_rss_mib()),
        "≈ the row above",
    ));
    print("bench-browser", &rows);
}
