//! Tests for parsing, errors, display, storage JSON and Python import.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::config::settings::Zone;
use chrono::{DateTime, TimeZone, Utc};
use serde_json::json;

use super::{Schedule, ScheduleError, from_python, parse, parse_tz};

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap()
}

fn ok(text: &str) -> Schedule {
    parse(text, now(), Zone::utc()).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
}

fn err(text: &str) -> String {
    match parse(text, now(), Zone::utc()) {
        Ok(s) => panic!("{text:?} should be refused, got {s:?}"),
        Err(e) => e.to_string(),
    }
}

fn every(secs: u64) -> Schedule {
    Schedule::Every {
        period: Duration::from_secs(secs),
    }
}

fn cron(expr: &str) -> Schedule {
    Schedule::Cron {
        expr: expr.to_owned(),
    }
}

#[test]
fn intervals_parse_in_every_unit_spelling() {
    assert_eq!(ok("every 30m"), every(1800));
    assert_eq!(ok("every 2h"), every(7200));
    assert_eq!(ok("every 1d"), every(86_400));
    assert_eq!(ok("  EVERY 5 minutes "), every(300));
    assert_eq!(ok("every 3 hrs"), every(10_800));
}

#[test]
fn bad_intervals_say_what_is_wrong() {
    assert_eq!(
        err("every 5"),
        "\"every 5\" needs a unit: every 30m, every 2h, every 1d"
    );
    assert_eq!(
        err("every 90s"),
        "\"every 90s\": seconds are not supported, the minimum is 1 minute: every 30m, every 2h, every 1d"
    );
    assert!(err("in 30 seconds").contains("seconds are not supported"));
    assert!(err("every 0m").contains("longer than zero"));
    assert!(err("every 5x").contains("unknown unit \"x\""));
    assert!(err("every").contains("needs a number and a unit"));
    assert!(err("every soon").contains("every 30m"));
    assert!(err("every 99999999999999999999m").contains("too large"));
}

#[test]
fn relative_one_shots_count_from_now() {
    let at = |secs: i64| Schedule::Once {
        at: now() + chrono::TimeDelta::seconds(secs),
    };
    assert_eq!(ok("in 30m"), at(1800));
    assert_eq!(ok("30m"), at(1800));
    assert_eq!(ok("2h"), at(7200));
    assert_eq!(ok("1d"), at(86_400));
    assert_eq!(ok("90 minutes"), at(5400));
    assert_eq!(err("in 5"), "\"in 5\" needs a unit: in 30m, in 2h, in 1d");
    assert_eq!(err("30"), "\"30\" needs a unit: 30m, 2h, 1d");
}

#[test]
fn cron_forms_parse_and_are_stored_normalised() {
    assert_eq!(ok("0 9 * * 1-5"), cron("0 9 * * 1-5"));
    assert_eq!(ok("0  9 * *   MON-FRI"), cron("0 9 * * mon-fri"));
    assert_eq!(ok("*/15 * * * *"), cron("*/15 * * * *"));
    assert_eq!(
        ok("0,30 8-18/2 1,15 jan-mar,dec sun"),
        cron("0,30 8-18/2 1,15 jan-mar,dec sun")
    );
    assert_eq!(ok("5/10 * * * 7"), cron("5/10 * * * 7"));
    for alias in [
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
    ] {
        assert_eq!(ok(alias), cron(alias));
    }
    assert_eq!(ok("@Daily"), cron("@daily"));
}

#[test]
fn bad_cron_says_which_field_and_gives_an_example() {
    assert_eq!(
        err("0 25 * * *"),
        "cron expression \"0 25 * * *\": hour 25 is out of range 0-23 \
         (example: \"0 9 * * 1-5\" = 09:00 on weekdays)"
    );
    assert!(err("0 9 * *").contains("has 4 field(s) but needs 5"));
    assert!(err("0 9 * * * 2026").contains("has 6 field(s)"));
    assert!(err("60 * * * *").contains("minute 60 is out of range 0-59"));
    assert!(err("0 0 0 * *").contains("day-of-month 0 is out of range 1-31"));
    assert!(err("0 0 * 13 *").contains("month 13 is out of range 1-12"));
    assert!(err("0 9 * * 8").contains("day-of-week 8 is out of range 0-7"));
    assert!(
        err("0 9 * * fry").contains("day-of-week \"fry\" is not a number 0-7 or a name sun-sat")
    );
    assert!(err("0 9 * foo *").contains("or a name jan-dec"));
    assert!(err("0 17-9 * * *").contains("hour range 17-9 is backwards"));
    assert!(err("*/0 * * * *").contains("minute step /0 must be at least 1"));
    assert!(err("*/61 * * * *").contains("larger than the range 0-59"));
    assert!(err("0 0 1,,2 * *").contains("empty list item"));
    assert!(err("0 0 30 2 *").contains("never fires"));
    assert!(err("0 0 L * *").contains("day-of-month \"l\" is not a number 1-31"));
    assert!(err("0 9 * * 1-").contains("missing end"));
    assert!(err("@fortnightly").contains("cron alias \"@fortnightly\" is unknown"));
    // Feb 29 exists (in leap years); day 31 with a weekday restriction fires through the OR rule.
    assert_eq!(ok("0 0 29 2 *"), cron("0 0 29 2 *"));
    assert_eq!(ok("0 0 31 2 mon"), cron("0 0 31 2 mon"));
}

#[test]
fn iso_times_use_the_job_time_zone_when_naive() {
    let berlin: Zone = crate::config::settings::parse_zone("Europe/Berlin").unwrap();
    let at = |text: &str, tz: Zone| match parse(text, now(), tz).unwrap() {
        Schedule::Once { at } => at,
        other => panic!("{other:?}"),
    };
    let utc = |h: u32, m: u32| Utc.with_ymd_and_hms(2026, 12, 1, h, m, 0).unwrap();
    assert_eq!(at("2026-12-01T09:00", berlin), utc(8, 0));
    assert_eq!(at("2026-12-01 09:00:00", berlin), utc(8, 0));
    assert_eq!(at("2026-12-01T09:00:00Z", berlin), utc(9, 0));
    assert_eq!(at("2026-12-01T09:00:00+05:30", berlin), utc(3, 30));
    assert_eq!(at("2026-12-01T09:00+05:30", Zone::utc()), utc(3, 30));
    assert_eq!(
        at("2026-12-01T09:00:00.250+00:00", Zone::utc()),
        utc(9, 0) + chrono::TimeDelta::milliseconds(250)
    );
    assert_eq!(
        at("2026-12-01", berlin),
        Utc.with_ymd_and_hms(2026, 11, 30, 23, 0, 0).unwrap()
    );
}

#[test]
fn bad_iso_times_are_refused() {
    let past = err("2020-01-01T09:00");
    assert!(past.contains("is in the past"), "{past}");
    assert!(past.contains("example: \"2026-06-02T12:00\""), "{past}");
    assert!(err("2026-06-01T11:57:59Z").contains("in the past"));
    // Up to two minutes late is Hermes' one-shot grace: accepted, and it runs at once.
    assert!(parse("2026-06-01T11:58:30Z", now(), Zone::utc()).is_ok());
    assert!(err("2026-13-01T09:00").contains("is not a valid ISO-8601 time"));
    let berlin: Zone = crate::config::settings::parse_zone("Europe/Berlin").unwrap();
    let gap = parse("2027-03-28T02:30", now(), berlin).unwrap_err();
    assert!(matches!(gap, ScheduleError::Time(_)));
    assert!(
        gap.to_string().contains("does not exist in Europe/Berlin"),
        "{gap}"
    );
}

#[test]
fn unrecognised_text_lists_the_forms() {
    let message = err("tomorrow");
    assert!(
        message.contains("every 30m") && message.contains("0 9 * * 1-5"),
        "{message}"
    );
    assert!(err("").contains("schedule is empty"));
}

#[test]
fn time_zones_are_iana_names() {
    assert_eq!(
        parse_tz("Europe/Berlin").unwrap(),
        crate::config::settings::parse_zone("Europe/Berlin").unwrap()
    );
    assert_eq!(parse_tz(" UTC ").unwrap(), Zone::utc());
    let e = parse_tz("Mars/Base").unwrap_err().to_string();
    assert!(
        e.contains("unknown time zone \"Mars/Base\"") && e.contains("America/New_York"),
        "{e}"
    );
}

#[test]
fn display_is_short() {
    assert_eq!(every(1800).display(), "every 30m");
    assert_eq!(every(7200).display(), "every 2h");
    assert_eq!(every(86_400).display(), "every 1d");
    assert_eq!(every(5400).display(), "every 90m");
    assert_eq!(cron("0 9 * * 1-5").display(), "0 9 * * 1-5");
    let at = Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap();
    assert_eq!(
        Schedule::Once { at }.display(),
        "once at 2026-12-01T09:00:00Z"
    );
}

#[test]
fn storage_json_round_trips_and_is_validated() {
    let at = Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap();
    let cases = [
        (
            cron("0 9 * * 1-5"),
            json!({"kind": "cron", "expr": "0 9 * * 1-5"}),
        ),
        (every(1800), json!({"kind": "every", "seconds": 1800})),
        (
            Schedule::Once { at },
            json!({"kind": "once", "at": "2026-12-01T09:00:00Z"}),
        ),
    ];
    for (schedule, stored) in cases {
        assert_eq!(schedule.to_json(), stored);
        assert_eq!(Schedule::from_json(&stored).unwrap(), schedule);
        assert_eq!(serde_json::to_value(&schedule).unwrap(), stored);
    }
    let bad_cron = Schedule::from_json(&json!({"kind": "cron", "expr": "0 99 * * *"}));
    assert!(bad_cron.unwrap_err().to_string().contains("hour 99"));
    let short = Schedule::from_json(&json!({"kind": "every", "seconds": 30}));
    assert!(
        short
            .unwrap_err()
            .to_string()
            .contains("minimum is 1 minute")
    );
    let unknown = Schedule::from_json(&json!({"kind": "weekly"})).unwrap_err();
    assert!(matches!(unknown, ScheduleError::Stored(_)), "{unknown}");
}

#[test]
fn python_jobs_json_shapes_convert() {
    let interval = json!({"kind": "interval", "minutes": 30, "display": "every 30m"});
    assert_eq!(from_python(&interval).unwrap(), every(1800));
    let daily = json!({"kind": "interval", "minutes": 1440.0, "display": "every 1440m"});
    assert_eq!(from_python(&daily).unwrap(), every(86_400));
    let cron_job = json!({"kind": "cron", "expr": "0 9 * * *", "display": "0 9 * * *"});
    assert_eq!(from_python(&cron_job).unwrap(), cron("0 9 * * *"));
    let once = json!({"kind": "once", "run_at": "2026-02-03T14:00:00.123456+05:30",
                      "display": "once at 2026-02-03 14:00"});
    let expected = Utc.with_ymd_and_hms(2026, 2, 3, 8, 30, 0).unwrap()
        + chrono::TimeDelta::microseconds(123_456);
    assert_eq!(from_python(&once).unwrap(), Schedule::Once { at: expected });
    let naive = json!({"kind": "once", "run_at": "2026-02-03T14:00:00"});
    let at = Utc.with_ymd_and_hms(2026, 2, 3, 14, 0, 0).unwrap();
    assert_eq!(from_python(&naive).unwrap(), Schedule::Once { at });
}

#[test]
fn malformed_python_schedules_are_refused() {
    for (value, needle) in [
        (json!("30m"), "is not an object"),
        (json!({}), "has no \"kind\""),
        (json!({"kind": "interval"}), "has no \"minutes\""),
        (json!({"kind": "interval", "minutes": 0}), "at least 1"),
        (
            json!({"kind": "interval", "minutes": 1.5}),
            "not a whole number",
        ),
        (json!({"kind": "cron"}), "has no \"expr\""),
        (
            json!({"kind": "cron", "expr": "0 9 * * * *"}),
            "has 6 field(s)",
        ),
        (
            json!({"kind": "once", "run_at": "soon"}),
            "is not a valid ISO-8601 time",
        ),
        (json!({"kind": "daily"}), "unknown kind \"daily\""),
    ] {
        let message = from_python(&value).unwrap_err().to_string();
        assert!(message.contains(needle), "{value}: {message}");
    }
}
