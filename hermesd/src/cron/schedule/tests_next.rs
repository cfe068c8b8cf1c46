//! Tests for `Schedule::next_after` against known calendars, DST changes and interval anchors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::config::settings::Zone;
use crate::config::settings::parse_zone;
use chrono::{DateTime, TimeDelta, TimeZone, Utc};

fn zone(name: &str) -> Zone {
    parse_zone(name).unwrap()
}

use super::{Schedule, parse};

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
}

fn cron(expr: &str) -> Schedule {
    parse(expr, utc(2026, 1, 1, 0, 0), Zone::utc()).unwrap()
}

/// The next `count` runs after `start`, each searched from the previous one.
fn runs(schedule: &Schedule, start: DateTime<Utc>, tz: Zone, count: usize) -> Vec<DateTime<Utc>> {
    let mut out = Vec::with_capacity(count);
    let mut after = start;
    for _ in 0..count {
        after = schedule.next_after(after, tz, None).unwrap();
        out.push(after);
    }
    out
}

#[test]
fn day_31_skips_short_months() {
    let got = runs(&cron("0 0 31 * *"), utc(2026, 1, 31, 0, 0), Zone::utc(), 3);
    assert_eq!(
        got,
        [
            utc(2026, 3, 31, 0, 0),
            utc(2026, 5, 31, 0, 0),
            utc(2026, 7, 31, 0, 0)
        ]
    );
}

#[test]
fn leap_day_waits_for_a_leap_year() {
    let got = runs(&cron("0 0 29 2 *"), utc(2026, 1, 1, 0, 0), Zone::utc(), 2);
    assert_eq!(got, [utc(2028, 2, 29, 0, 0), utc(2032, 2, 29, 0, 0)]);
}

#[test]
fn day_of_month_or_day_of_week_fires_on_either() {
    // April 2026: Fridays are the 3rd, 10th, 17th, 24th; the 13th is a Monday.
    let got = runs(&cron("0 0 13 * 5"), utc(2026, 4, 1, 0, 0), Zone::utc(), 6);
    let days: Vec<_> = got.iter().map(|t| t.format("%m-%d").to_string()).collect();
    assert_eq!(days, ["04-03", "04-10", "04-13", "04-17", "04-24", "05-01"]);
}

#[test]
fn weekday_names_and_sunday_as_seven() {
    // 2026-06-07 is a Sunday.
    let sunday = utc(2026, 6, 7, 9, 0);
    for expr in ["0 9 * * 7", "0 9 * * 0", "0 9 * * sun", "0 9 * * 6-7"] {
        let next = cron(expr).next_after(utc(2026, 6, 6, 23, 0), Zone::utc(), None);
        assert_eq!(next, Some(sunday), "{expr}");
    }
    let weekdays = runs(
        &cron("30 8 * * mon-fri"),
        utc(2026, 6, 5, 9, 0),
        Zone::utc(),
        2,
    );
    assert_eq!(weekdays, [utc(2026, 6, 8, 8, 30), utc(2026, 6, 9, 8, 30)]);
}

#[test]
fn next_is_strictly_after() {
    let hourly = cron("@hourly");
    assert_eq!(
        hourly.next_after(utc(2026, 6, 1, 10, 0), Zone::utc(), None),
        Some(utc(2026, 6, 1, 11, 0))
    );
    let just_before = utc(2026, 6, 1, 10, 0) - TimeDelta::milliseconds(1);
    assert_eq!(
        hourly.next_after(just_before, Zone::utc(), None),
        Some(utc(2026, 6, 1, 10, 0))
    );
    let just_after = utc(2026, 6, 1, 10, 0) + TimeDelta::milliseconds(1);
    assert_eq!(
        hourly.next_after(just_after, Zone::utc(), None),
        Some(utc(2026, 6, 1, 11, 0))
    );
}

#[test]
fn daily_alias_is_midnight_in_the_job_zone() {
    let daily = cron("@daily");
    assert_eq!(
        daily.next_after(utc(2026, 6, 1, 0, 0), zone("Asia/Tokyo"), None),
        Some(utc(2026, 6, 1, 15, 0))
    );
    assert_eq!(
        daily.next_after(utc(2026, 6, 1, 0, 0), zone("America/New_York"), None),
        Some(utc(2026, 6, 1, 4, 0))
    );
    assert_eq!(
        daily.next_after(utc(2026, 12, 1, 5, 0), zone("America/New_York"), None),
        Some(utc(2026, 12, 2, 5, 0))
    );
}

#[test]
fn spring_forward_moves_a_skipped_time_to_the_end_of_the_gap() {
    // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT; 02:30 does not exist that day.
    let job = cron("30 2 * * *");
    let got = runs(&job, utc(2026, 3, 7, 17, 0), zone("America/New_York"), 3);
    assert_eq!(
        got,
        [
            utc(2026, 3, 8, 7, 0),
            utc(2026, 3, 9, 6, 30),
            utc(2026, 3, 10, 6, 30)
        ]
    );
    // Berlin, 2026-03-29: 02:00 CET jumps to 03:00 CEST.
    let got = runs(&job, utc(2026, 3, 28, 12, 0), zone("Europe/Berlin"), 2);
    assert_eq!(got, [utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 0, 30)]);
}

#[test]
fn spring_forward_leaves_out_wildcard_runs_inside_the_gap() {
    let got = runs(
        &cron("*/30 * * * *"),
        utc(2026, 3, 8, 6, 15),
        zone("America/New_York"),
        3,
    );
    // 01:30 EST, then 03:00 EDT (02:00 and 02:30 do not exist), 03:30 EDT.
    assert_eq!(
        got,
        [
            utc(2026, 3, 8, 6, 30),
            utc(2026, 3, 8, 7, 0),
            utc(2026, 3, 8, 7, 30)
        ]
    );
}

#[test]
fn fall_back_fires_a_fixed_time_once() {
    // New York, 2026-11-01: 02:00 EDT falls back to 01:00 EST; 01:30 happens twice.
    let job = cron("30 1 * * *");
    let got = runs(&job, utc(2026, 10, 31, 16, 0), zone("America/New_York"), 2);
    assert_eq!(got, [utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30)]);
    // Asked from inside the second pass (01:10 EST), the repeat is still skipped.
    assert_eq!(
        job.next_after(utc(2026, 11, 1, 6, 10), zone("America/New_York"), None),
        Some(utc(2026, 11, 2, 6, 30))
    );
    // Berlin, 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice.
    let got = runs(
        &cron("30 2 * * *"),
        utc(2026, 10, 24, 12, 0),
        zone("Europe/Berlin"),
        2,
    );
    assert_eq!(got, [utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)]);
}

#[test]
fn fall_back_keeps_wildcard_jobs_running_through_both_passes() {
    let got = runs(
        &cron("*/30 * * * *"),
        utc(2026, 11, 1, 4, 45),
        zone("America/New_York"),
        6,
    );
    let expected: Vec<_> = (0..6)
        .map(|k| utc(2026, 11, 1, 5, 0) + TimeDelta::minutes(30 * k))
        .collect();
    assert_eq!(got, expected);
    // From inside the second pass as well.
    let job = cron("*/15 * * * *");
    assert_eq!(
        job.next_after(utc(2026, 11, 1, 6, 10), zone("America/New_York"), None),
        Some(utc(2026, 11, 1, 6, 15))
    );
}

#[test]
fn intervals_stay_on_the_anchor_grid() {
    let job = Schedule::Every {
        period: Duration::from_secs(30 * 60),
    };
    let anchor = utc(2026, 1, 1, 0, 7);
    let mut after = anchor;
    for step in 1..=100 {
        // The scheduler wakes a little late each time; the grid must not move.
        let next = job
            .next_after(after + TimeDelta::seconds(13), Zone::utc(), Some(anchor))
            .unwrap();
        assert_eq!(next, anchor + TimeDelta::minutes(30 * step));
        after = next;
    }
    // A long outage skips to the next grid point rather than replaying missed runs.
    let late = anchor + TimeDelta::minutes(30 * 500 + 1);
    assert_eq!(
        job.next_after(late, Zone::utc(), Some(anchor)),
        Some(anchor + TimeDelta::minutes(30 * 501))
    );
    // Before the anchor's first period, and without an anchor.
    assert_eq!(
        job.next_after(anchor, Zone::utc(), Some(anchor)),
        Some(anchor + TimeDelta::minutes(30))
    );
    let start = utc(2026, 5, 5, 5, 5);
    assert_eq!(
        job.next_after(start, Zone::utc(), None),
        Some(start + TimeDelta::minutes(30))
    );
}

#[test]
fn one_shots_fire_once() {
    let at = utc(2026, 12, 1, 9, 0);
    let once = Schedule::Once { at };
    assert_eq!(
        once.next_after(at - TimeDelta::seconds(1), Zone::utc(), None),
        Some(at)
    );
    assert_eq!(once.next_after(at, Zone::utc(), None), None);
    assert_eq!(
        once.next_after(utc(2027, 1, 1, 0, 0), Zone::utc(), None),
        None
    );
}

#[test]
fn unparsable_stored_cron_has_no_next_run() {
    let broken = Schedule::Cron {
        expr: "0 99 * * *".to_owned(),
    };
    assert_eq!(
        broken.next_after(utc(2026, 1, 1, 0, 0), Zone::utc(), None),
        None
    );
}
