//! What a background process reports unasked: watch matches, their rate limit and strikes, and
//! Hermes' message texts.

use std::time::{Duration, Instant};

use super::super::process_notify::{
    NotificationKind, Notify, WATCH_MIN_INTERVAL, WATCH_STRIKE_LIMIT, Watcher, completion_text,
};

fn watching(patterns: &[&str]) -> Watcher {
    Watcher::new(Notify {
        on_complete: false,
        watch_patterns: patterns.iter().map(|p| (*p).to_string()).collect(),
    })
}

#[test]
fn a_watched_line_is_reported_with_its_pattern_and_command() {
    let mut watcher = watching(&["ERROR", "Listening"]);
    let now = Instant::now();
    assert_eq!(watcher.scan("proc_1", "npm start", "booting\n", now), None);
    let (kind, text) = watcher
        .scan("proc_1", "npm start", "x\nListening on :3000\nok\n", now)
        .unwrap();
    assert_eq!(kind, NotificationKind::WatchMatch);
    assert_eq!(
        text,
        "[IMPORTANT: Background process proc_1 matched watch pattern \"Listening\".\n\
         Command: npm start\nMatched output:\nListening on :3000]"
    );
    assert!(!watcher.reports_completion());
}

#[test]
fn a_line_split_over_two_chunks_is_seen_whole_and_once() {
    let mut watcher = watching(&["READY"]);
    let now = Instant::now();
    assert_eq!(watcher.scan("p", "c", "server REA", now), None);
    let (_, text) = watcher.scan("p", "c", "DY at last\n", now).unwrap();
    assert!(text.ends_with("server READY at last]"), "{text}");

    // A partial line that matched already is not reported again when it is finished.
    let later = now + WATCH_MIN_INTERVAL * 2;
    let mut watcher = watching(&["READY"]);
    assert!(
        watcher
            .scan("p", "c", "READY (no newline yet)", later)
            .is_some()
    );
    let again = later + WATCH_MIN_INTERVAL * 2;
    assert_eq!(watcher.scan("p", "c", " and the rest\n", again), None);
    assert!(watcher.scan("p", "c", "READY again\n", again).is_some());
}

#[test]
fn matches_inside_the_interval_are_dropped_counted_and_named_in_the_next() {
    let mut watcher = watching(&["tick"]);
    let start = Instant::now();
    assert!(watcher.scan("p", "c", "tick 1\n", start).is_some());
    let soon = start + Duration::from_secs(1);
    assert_eq!(watcher.scan("p", "c", "tick 2\ntick 3\n", soon), None);
    let after = start + WATCH_MIN_INTERVAL + Duration::from_secs(1);
    let (_, text) = watcher.scan("p", "c", "tick 4\n", after).unwrap();
    assert!(
        text.ends_with("tick 4\n(2 earlier matches were suppressed by rate limit)]"),
        "{text}"
    );
}

#[test]
fn too_many_dropped_windows_stop_watching_and_report_the_end_instead() {
    let mut watcher = watching(&["spam"]);
    let mut now = Instant::now();
    let mut seen = Vec::new();
    for _ in 0..=WATCH_STRIKE_LIMIT {
        if let Some((kind, _)) = watcher.scan("p", "c", "spam\n", now) {
            seen.push(kind);
        }
        // A drop inside the window: one strike for it.
        if let Some((kind, _)) = watcher.scan("p", "c", "spam\n", now + Duration::from_secs(1)) {
            seen.push(kind);
        }
        now += WATCH_MIN_INTERVAL + Duration::from_secs(1);
    }
    assert_eq!(
        seen,
        [
            NotificationKind::WatchMatch,
            NotificationKind::WatchMatch,
            NotificationKind::WatchMatch,
            NotificationKind::WatchDisabled,
        ]
    );
    assert!(watcher.reports_completion());
    assert_eq!(
        watcher.scan("p", "c", "spam\n", now),
        None,
        "watching stopped"
    );
}

#[test]
fn a_clean_window_resets_the_strikes() {
    let mut watcher = watching(&["x"]);
    let mut now = Instant::now();
    for round in 0..10 {
        assert!(
            watcher.scan("p", "c", "x\n", now).is_some(),
            "round {round}"
        );
        if round % 2 == 0 {
            // Every other window drops one: never three in a row.
            assert_eq!(
                watcher.scan("p", "c", "x\n", now + Duration::from_secs(1)),
                None
            );
        }
        now += WATCH_MIN_INTERVAL + Duration::from_secs(1);
    }
    assert!(!watcher.reports_completion());
}

#[test]
fn completion_alone_wins_over_patterns_and_long_lines_are_bounded() {
    let mut both = Watcher::new(Notify {
        on_complete: true,
        watch_patterns: vec!["x".into()],
    });
    assert!(both.reports_completion());
    assert_eq!(both.scan("p", "c", "x\n", Instant::now()), None);

    let mut watcher = watching(&["needle"]);
    let long = format!("{}needle\n", "é".repeat(3_000));
    let (_, text) = watcher.scan("p", "c", &long, Instant::now()).unwrap();
    assert!(text.contains("...(truncated)]"), "{}", text.len());
    assert!(text.len() < 2_300);
}

#[test]
fn completion_texts_are_hermes_own() {
    assert_eq!(
        completion_text("proc_a", "make", Some(0), "exited", "", "done"),
        "[IMPORTANT: Background process proc_a completed normally (exit code 0).\n\
         Command: make\nOutput:\ndone]"
    );
    assert!(
        completion_text("proc_a", "make", Some(2), "exited", "", "")
            .starts_with("[IMPORTANT: Background process proc_a exited (exit code 2).")
    );
    assert!(
        completion_text("proc_a", "sleep 9", Some(-15), "killed", "process.kill", "")
            .starts_with(
                "[IMPORTANT: Background process proc_a terminated by process.kill (exit code -15, SIGTERM)."
            )
    );
}
