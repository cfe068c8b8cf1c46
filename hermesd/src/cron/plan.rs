//! What a due job does now: which of its slots run, which are recorded as missed, and when it is
//! due next — from the lateness of its slots, its grace window and its missed-run policy. Pure:
//! the scheduler applies the plan.

use crate::config::settings::Zone;
use chrono::{DateTime, TimeDelta, Utc};

use super::schedule::Schedule;
use crate::config::settings::CronSection;

/// Fewest seconds a slot may be late and still run on time (Hermes' `MIN_GRACE`).
const MIN_GRACE_SECS: i64 = 120;
/// Most seconds of grace (Hermes' `MAX_GRACE`).
const MAX_GRACE_SECS: i64 = 7_200;
/// Slots counted when a job was missed for a long time; beyond this the count says "or more".
pub const MAX_COUNTED_SLOTS: usize = 10_000;

/// What to do with the missed slots of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissedPolicy {
    /// Record them as missed (the default).
    Skip,
    /// Run one catch-up for the latest, if it is within the catch-up window.
    Once,
    /// Run each (the latest `catch_up_limit` within the window).
    All,
}

impl MissedPolicy {
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "skip" => Some(Self::Skip),
            "once" => Some(Self::Once),
            "all" => Some(Self::All),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skip => "skip",
            Self::Once => "once",
            Self::All => "all",
        }
    }
}

/// The plan for a due job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Slots to run now, oldest first (epoch ms).
    pub run: Vec<i64>,
    /// Slots that will not run: first, last, and how many (capped at [`MAX_COUNTED_SLOTS`]).
    pub missed: Option<Missed>,
    /// The next slot after now (`None`: the schedule has no more).
    pub next: Option<i64>,
}

/// A stretch of slots that did not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missed {
    pub first: i64,
    pub last: i64,
    pub count: usize,
    /// More slots were missed than were counted.
    pub more: bool,
}

fn at(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

/// A time rounded up to the whole second (the timer's resolution), in epoch ms.
pub fn whole_second(t: DateTime<Utc>) -> i64 {
    let ms = t.timestamp_millis();
    ms.div_euclid(1000) * 1000 + if ms.rem_euclid(1000) > 0 { 1000 } else { 0 }
}

/// The next slot strictly after `after` (epoch ms, whole seconds).
pub fn next_slot(schedule: &Schedule, after: i64, tz: Zone, anchor: Option<i64>) -> Option<i64> {
    schedule
        .next_after(at(after), tz, anchor.map(at))
        .map(whole_second)
}

/// How late a slot may be and still run as scheduled: half the period, within 2 min .. 2 h
/// (Hermes' rule); a one-shot gets 2 min.
pub fn grace(schedule: &Schedule, slot: i64, tz: Zone) -> TimeDelta {
    let period = match schedule {
        Schedule::Every { period } => i64::try_from(period.as_secs()).unwrap_or(i64::MAX),
        Schedule::Cron { .. } => next_slot(schedule, slot, tz, None)
            .and_then(|a| Some((a, next_slot(schedule, a, tz, None)?)))
            .map_or(0, |(a, b)| (b - a) / 1000),
        Schedule::Once { .. } => 0,
    };
    TimeDelta::seconds((period / 2).clamp(MIN_GRACE_SECS, MAX_GRACE_SECS))
}

/// Plan a job whose slot `slot` is due at `now` (`slot <= now`).
pub fn plan(
    schedule: &Schedule,
    tz: Zone,
    anchor: Option<i64>,
    slot: i64,
    now: i64,
    policy: MissedPolicy,
    settings: &CronSection,
) -> Plan {
    let mut slots = vec![slot];
    let mut more = false;
    while let Some(next) = next_slot(schedule, slots[slots.len() - 1], tz, anchor) {
        if next > now {
            break;
        }
        if slots.len() >= MAX_COUNTED_SLOTS {
            more = true;
            break;
        }
        slots.push(next);
    }
    let latest = slots[slots.len() - 1];
    let grace_ms = grace(schedule, latest, tz).num_milliseconds();
    let window_ms = i64::try_from(settings.catch_up_window.as_millis()).unwrap_or(i64::MAX);
    let on_time = now - latest <= grace_ms;
    let within_window = |s: &i64| now - *s <= window_ms.max(grace_ms);
    let run: Vec<i64> = match policy {
        _ if on_time && policy != MissedPolicy::All => vec![latest],
        MissedPolicy::Skip => Vec::new(),
        MissedPolicy::Once => slots
            .iter()
            .copied()
            .rfind(within_window)
            .into_iter()
            .collect(),
        MissedPolicy::All => {
            let eligible: Vec<i64> = slots.iter().copied().filter(within_window).collect();
            let keep = eligible.len().min(settings.catch_up_limit.max(1));
            eligible[eligible.len() - keep..].to_vec()
        }
    };
    let not_run: Vec<i64> = slots.iter().copied().filter(|s| !run.contains(s)).collect();
    let missed = match (not_run.first(), not_run.last()) {
        (Some(&first), Some(&last)) => Some(Missed {
            first,
            last,
            count: not_run.len(),
            more,
        }),
        _ => None,
    };
    let after = if more { now } else { latest.max(now) };
    Plan {
        run,
        missed,
        next: next_slot(schedule, after, tz, anchor),
    }
}

#[cfg(test)]
mod tests;
