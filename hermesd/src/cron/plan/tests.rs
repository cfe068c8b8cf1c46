//! Plans for due jobs: on time, late within grace, missed under each policy, bounded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::config::settings::Zone;
use chrono::{TimeZone, Utc};

use super::*;

const MIN: i64 = 60_000;

fn ms(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0)
        .unwrap()
        .timestamp_millis()
}

fn every(minutes: u64) -> Schedule {
    Schedule::Every {
        period: Duration::from_secs(minutes * 60),
    }
}

fn settings() -> CronSection {
    CronSection {
        timezone: Zone::utc(),
        ..CronSection::default()
    }
}

/// `plan` in UTC with the default settings.
fn plan_utc(
    schedule: &Schedule,
    anchor: Option<i64>,
    slot: i64,
    now: i64,
    policy: MissedPolicy,
) -> Plan {
    plan(
        schedule,
        Zone::utc(),
        anchor,
        slot,
        now,
        policy,
        &settings(),
    )
}

#[test]
fn an_on_time_slot_runs_and_the_next_follows() {
    let slot = ms(2026, 12, 1, 9, 0);
    let p = plan_utc(&every(60), Some(slot), slot, slot + 400, MissedPolicy::Skip);
    assert_eq!(p.run, vec![slot]);
    assert_eq!(p.missed, None);
    assert_eq!(p.next, Some(slot + 60 * MIN));
}

#[test]
fn late_within_grace_still_runs() {
    let daily = Schedule::Cron {
        expr: "0 9 * * *".into(),
    };
    let slot = ms(2026, 12, 1, 9, 0);
    // Daily: grace is capped at two hours.
    let p = plan_utc(&daily, None, slot, slot + 119 * MIN, MissedPolicy::Skip);
    assert_eq!(p.run, vec![slot]);
    let p = plan_utc(&daily, None, slot, slot + 121 * MIN, MissedPolicy::Skip);
    assert!(p.run.is_empty());
    assert_eq!(p.missed.as_ref().map(|m| m.count), Some(1));
    assert_eq!(p.next, Some(ms(2026, 12, 2, 9, 0)));
}

#[test]
fn skip_records_the_backlog_and_runs_the_on_time_slot() {
    let slot = ms(2026, 12, 1, 9, 0);
    let now = slot + 10 * MIN + 30_000;
    let p = plan_utc(&every(1), Some(slot), slot, now, MissedPolicy::Skip);
    assert_eq!(
        p.run,
        vec![slot + 10 * MIN],
        "the latest slot is within its 2 min grace"
    );
    let missed = p.missed.unwrap();
    assert_eq!(
        (missed.first, missed.last, missed.count),
        (slot, slot + 9 * MIN, 10)
    );
    assert_eq!(p.next, Some(slot + 11 * MIN));
}

#[test]
fn once_runs_exactly_one_catch_up() {
    let hourly = every(60);
    let slot = ms(2026, 12, 1, 1, 0);
    let now = ms(2026, 12, 1, 6, 40);
    let p = plan_utc(&hourly, Some(slot), slot, now, MissedPolicy::Once);
    assert_eq!(p.run, vec![ms(2026, 12, 1, 6, 0)]);
    assert_eq!(p.missed.unwrap().count, 5);
    assert_eq!(p.next, Some(ms(2026, 12, 1, 7, 0)));
    let skipped = plan_utc(&hourly, Some(slot), slot, now, MissedPolicy::Skip);
    assert!(skipped.run.is_empty());
    assert_eq!(skipped.missed.unwrap().count, 6);
}

#[test]
fn once_outside_the_window_runs_nothing() {
    let weekly = Schedule::Cron {
        expr: "0 9 * * 1".into(),
    };
    let slot = ms(2026, 11, 30, 9, 0); // a Monday
    let now = slot + 3 * 24 * 60 * MIN;
    let p = plan_utc(&weekly, None, slot, now, MissedPolicy::Once);
    assert!(
        p.run.is_empty(),
        "three days late is outside the one-day window"
    );
    assert_eq!(p.next, Some(ms(2026, 12, 7, 9, 0)));
}

#[test]
fn all_runs_every_missed_slot_up_to_the_limit() {
    let slot = ms(2026, 12, 1, 0, 0);
    let now = ms(2026, 12, 1, 5, 1);
    let mut s = settings();
    let p = plan(
        &every(60),
        Zone::utc(),
        Some(slot),
        slot,
        now,
        MissedPolicy::All,
        &s,
    );
    assert_eq!(p.run.len(), 6);
    assert_eq!(p.missed, None);
    s.catch_up_limit = 2;
    let p = plan(
        &every(60),
        Zone::utc(),
        Some(slot),
        slot,
        now,
        MissedPolicy::All,
        &s,
    );
    assert_eq!(p.run, vec![ms(2026, 12, 1, 4, 0), ms(2026, 12, 1, 5, 0)]);
    assert_eq!(p.missed.unwrap().count, 4);
}

#[test]
fn a_missed_one_shot_completes() {
    let at = Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap();
    let once = Schedule::Once { at };
    let slot = at.timestamp_millis();
    let p = plan_utc(&once, None, slot, slot + 60 * MIN, MissedPolicy::Skip);
    assert!(p.run.is_empty());
    assert_eq!(p.next, None);
    let p = plan_utc(&once, None, slot, slot + 60 * MIN, MissedPolicy::Once);
    assert_eq!(p.run, vec![slot]);
    let p = plan_utc(&once, None, slot, slot + MIN, MissedPolicy::Skip);
    assert_eq!(
        p.run,
        vec![slot],
        "within the one-shot grace of two minutes"
    );
}

#[test]
fn a_year_of_minutes_is_counted_with_a_bound() {
    let slot = ms(2025, 12, 1, 0, 0);
    let now = ms(2026, 12, 1, 0, 0) + 30_000;
    let p = plan_utc(&every(1), Some(slot), slot, now, MissedPolicy::Skip);
    let missed = p.missed.unwrap();
    assert!(missed.more);
    assert_eq!(missed.count, MAX_COUNTED_SLOTS);
    assert!(p.next.unwrap() > now);
}

#[test]
fn whole_seconds_round_up() {
    let t = Utc.timestamp_millis_opt(1_500).unwrap();
    assert_eq!(whole_second(t), 2_000);
    let t = Utc.timestamp_millis_opt(2_000).unwrap();
    assert_eq!(whole_second(t), 2_000);
}

#[test]
fn policies_parse() {
    assert_eq!(MissedPolicy::parse(""), Some(MissedPolicy::Skip));
    assert_eq!(MissedPolicy::parse("ONCE"), Some(MissedPolicy::Once));
    assert_eq!(MissedPolicy::parse("sometimes"), None);
}
