//! `timezone` and `cron.*` (the old cron settings tests, moved here, and the bad values).

use std::time::Duration;

use hermes_proto::env::Env;

use super::{clean, one_notice, read, read_with};
use crate::config::settings::CronSection;

#[test]
fn defaults_follow_hermes() {
    let (s, notices) = read("{}");
    assert!(notices.is_empty());
    let s = s.cron;
    assert_eq!(s, CronSection::default());
    assert_eq!(s.inactivity_timeout, Some(Duration::from_secs(600)));
    assert_eq!(s.max_parallel, 4);
    assert_eq!((s.catch_up_limit, s.keep_runs, s.keep_days), (10, 50, 30));
    assert_eq!(s.catch_up_window, Duration::from_secs(86_400));
    assert!(!s.approve_dangerous);
}

#[test]
fn keys_and_env_are_read() {
    let yaml = "timezone: Europe/Berlin\ncron: {max_parallel_jobs: 2, inactivity_timeout: 30}\n\
                approvals: {cron_mode: approve}";
    let s = clean(yaml).cron;
    assert_eq!(
        s.timezone,
        crate::config::settings::parse_zone("Europe/Berlin").unwrap()
    );
    assert_eq!(s.max_parallel, 2);
    assert_eq!(s.inactivity_timeout, Some(Duration::from_secs(30)));
    assert!(s.approve_dangerous);
    let (s, notices) = read_with(yaml, &Env::from_pairs([("HERMES_CRON_TIMEOUT", "0")]));
    assert!(notices.is_empty());
    assert_eq!(
        s.cron.inactivity_timeout, None,
        "HERMES_CRON_TIMEOUT=0 means no limit"
    );
    let s = clean("cron: {catch_up_window: 90.5, catch_up_limit: 3, keep_runs: 0, keep_days: 7}");
    assert_eq!(s.cron.catch_up_window, Duration::from_secs_f64(90.5));
    assert_eq!(
        (s.cron.catch_up_limit, s.cron.keep_runs, s.cron.keep_days),
        (3, 0, 7)
    );
    assert_eq!(
        s.cron.zone_of(" Asia/Tokyo "),
        crate::config::settings::parse_zone("Asia/Tokyo").unwrap()
    );
    assert_eq!(s.cron.zone_of("Mars/Base"), s.cron.timezone);
}

#[test]
fn a_bad_zone_is_a_notice_not_an_error() {
    let s = one_notice(
        "timezone: Mars/Olympus",
        &["timezone: \"Mars/Olympus\"", "IANA"],
    );
    assert_eq!(s.cron.timezone, CronSection::default().timezone);
    let s = one_notice("timezone: 5", &["timezone: 5 is not a time zone name"]);
    assert_eq!(s.cron.timezone, CronSection::default().timezone);
}

#[test]
fn cron_bad_values_are_one_notice_and_the_default() {
    let s = one_notice(
        "cron: {inactivity_timeout: forever}",
        &["cron.inactivity_timeout: \"forever\" is not a number of seconds; using 600"],
    );
    assert_eq!(s.cron.inactivity_timeout, Some(Duration::from_secs(600)));
    let s = one_notice("cron: {catch_up_window: -1}", &["negative", "using 86400"]);
    assert_eq!(s.cron.catch_up_window, Duration::from_secs(86_400));
    let s = one_notice("cron: {max_parallel_jobs: 0}", &["is below 1; using 1"]);
    assert_eq!(s.cron.max_parallel, 1);
    let s = one_notice("cron: {max_parallel_jobs: 1000}", &["using 256"]);
    assert_eq!(s.cron.max_parallel, 256, "clamped as before");
    let s = one_notice("cron: {catch_up_limit: many}", &["using 10"]);
    assert_eq!(s.cron.catch_up_limit, 10);
    let s = one_notice("cron: {keep_days: 100000}", &["using 36500"]);
    assert_eq!(s.cron.keep_days, 36_500);
    let s = one_notice("cron: {keep_runs: [1]}", &["cron.keep_runs", "using 50"]);
    assert_eq!(s.cron.keep_runs, 50);
}

#[test]
fn a_bad_env_timeout_falls_back_to_the_config_with_a_notice() {
    let (s, notices) = read_with(
        "cron: {inactivity_timeout: 30}",
        &Env::from_pairs([("HERMES_CRON_TIMEOUT", "soon")]),
    );
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with("HERMES_CRON_TIMEOUT: \"soon\""),
        "{notices:?}"
    );
    assert_eq!(s.cron.inactivity_timeout, Some(Duration::from_secs(30)));
}

#[test]
fn the_script_timeout_is_configured_and_the_env_wins() {
    assert_eq!(clean("{}").cron.script_timeout, Duration::from_secs(3600));
    let yaml = "cron: {script_timeout_seconds: 120}";
    assert_eq!(clean(yaml).cron.script_timeout, Duration::from_secs(120));
    let (s, notices) = read_with(
        yaml,
        &Env::from_pairs([("HERMES_CRON_SCRIPT_TIMEOUT", "5")]),
    );
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(s.cron.script_timeout, Duration::from_secs(5));
    let (s, notices) = read_with(
        yaml,
        &Env::from_pairs([("HERMES_CRON_SCRIPT_TIMEOUT", "x")]),
    );
    assert!(
        notices[0].starts_with("HERMES_CRON_SCRIPT_TIMEOUT"),
        "{notices:?}"
    );
    assert_eq!(s.cron.script_timeout, Duration::from_secs(120));
}

#[test]
fn a_huge_env_timeout_is_a_year_not_a_panic() {
    let env = Env::from_pairs([
        ("HERMES_CRON_TIMEOUT", "1e20"),
        ("HERMES_CRON_SCRIPT_TIMEOUT", "1e30"),
    ]);
    let (s, _) = read_with("{}", &env);
    assert_eq!(
        s.cron.inactivity_timeout,
        Some(Duration::from_secs(31_536_000))
    );
    assert_eq!(s.cron.script_timeout, Duration::from_secs(31_536_000));
}
