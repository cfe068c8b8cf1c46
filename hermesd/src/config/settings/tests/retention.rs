//! `sessions.*` and `tool_results.*` (the old retention and keep_days tests, moved here, and the
//! bad values).

use std::time::Duration;

use super::{clean, one_notice};
use crate::config::settings::{SessionsSection, ToolResultsSection};

#[test]
fn retention_defaults_follow_python_hermes() {
    let d = clean("{}").sessions;
    assert_eq!(d, SessionsSection::default());
    assert!(!d.auto_prune);
    assert_eq!(d.retention_days, 90);
    assert!(d.vacuum_after_prune);
    assert_eq!(d.evict_after, Duration::from_secs(600));
    let r = clean("sessions: {auto_prune: true, retention_days: 30}").sessions;
    assert!(r.auto_prune);
    assert_eq!(r.retention_days, 30);
    let r = clean("sessions: {evict_after: '0.5', vacuum_after_prune: false}").sessions;
    assert_eq!(r.evict_after, Duration::from_millis(500));
    assert!(!r.vacuum_after_prune);
}

#[test]
fn keep_days_defaults_to_thirty() {
    assert_eq!(
        clean("{}").tool_results,
        ToolResultsSection { keep_days: 30 }
    );
    assert_eq!(
        clean("tool_results: {keep_days: 7}").tool_results.keep_days,
        7
    );
    assert_eq!(
        clean("tool_results: {keep_days: 0}").tool_results.keep_days,
        0
    );
}

#[test]
fn retention_bad_values_are_one_notice_and_the_default() {
    let s = one_notice(
        "sessions: {retention_days: 0}",
        &["sessions.retention_days: 0 is not 1 or more; using 90"],
    );
    assert_eq!(
        s.sessions.retention_days, 90,
        "0 meant the default before too"
    );
    let s = one_notice("sessions: {retention_days: -4}", &["negative"]);
    assert_eq!(s.sessions.retention_days, 90);
    let s = one_notice(
        "sessions: {auto_prune: daily}",
        &["sessions.auto_prune", "using false"],
    );
    assert!(!s.sessions.auto_prune);
    let s = one_notice(
        "sessions: {evict_after: -1}",
        &["sessions.evict_after: -1 is negative"],
    );
    assert_eq!(s.sessions.evict_after, Duration::from_secs(600));
    let s = one_notice(
        "sessions: {evict_after: .inf}",
        &["not a number of seconds"],
    );
    assert_eq!(s.sessions.evict_after, Duration::from_secs(600));
    let s = one_notice(
        "sessions: {evict_after: 1e300}",
        &["is too large; using 600"],
    );
    assert_eq!(s.sessions.evict_after, Duration::from_secs(600), "no panic");
    let s = one_notice(
        "tool_results: {keep_days: a month}",
        &["tool_results.keep_days: \"a month\" is not a whole number; using 30"],
    );
    assert_eq!(s.tool_results.keep_days, 30);
    let s = one_notice(
        "tool_results: {keep_days: 99999999999}",
        &["using 4294967295"],
    );
    assert_eq!(s.tool_results.keep_days, u32::MAX);
}
