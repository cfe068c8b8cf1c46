//! Cron job schedules: the `Schedule` type, its next-run computation, display text and storage JSON.
//!
//! Three kinds exist, mirroring Python Hermes (`cron/jobs.py`):
//! - [`Schedule::Cron`]: a classic five-field cron expression evaluated in the job's time zone,
//! - [`Schedule::Every`]: a fixed interval (at least one minute) laid on a grid from an anchor,
//! - [`Schedule::Once`]: a single instant.
//!
//! Text parsing lives in `parse`, cron field handling in `cron_expr`, Python `jobs.json` import in
//! `python`.

mod cron_expr;
mod parse;
mod python;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_next;

use std::time::Duration;

use crate::config::settings::Zone;
use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

pub use self::parse::{parse, parse_tz};
pub use self::python::from_python;

/// Shortest allowed interval for [`Schedule::Every`].
pub const MIN_INTERVAL: Duration = Duration::from_secs(60);

/// Why a schedule text, stored value or time zone was refused. The `Display` text is one line that says
/// what was wrong and gives a working example.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// A cron expression (or `@alias`) is malformed.
    #[error("{0}")]
    Cron(String),
    /// An interval (`every …`) or relative duration (`in …`, `30m`) is malformed or too short.
    #[error("{0}")]
    Duration(String),
    /// An ISO-8601 time is malformed, in the past, or does not exist in the time zone.
    #[error("{0}")]
    Time(String),
    /// The time zone name is not an IANA zone.
    #[error("{0}")]
    TimeZone(String),
    /// The text matches none of the schedule forms.
    #[error("{0}")]
    Unrecognized(String),
    /// A stored schedule (our JSON or Python's `jobs.json`) is malformed.
    #[error("{0}")]
    Stored(String),
}

/// When a cron job runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Schedule {
    /// Classic cron: `minute hour day-of-month month day-of-week`, or an alias such as `@daily`.
    /// Stored as the user wrote it (trimmed, lower-cased). When both day fields are restricted a
    /// day matching either one fires (Vixie rule); "restricted" means anything but a bare `*`.
    Cron {
        /// The expression text, e.g. `0 9 * * mon-fri` or `@hourly`.
        expr: String,
    },
    /// A fixed interval, repeated from an anchor (creation or last run) so runs do not drift.
    Every {
        /// The interval; at least [`MIN_INTERVAL`]. Stored as whole seconds.
        #[serde(rename = "seconds", with = "duration_secs")]
        period: Duration,
    },
    /// One run at a fixed instant.
    Once {
        /// The instant to run at.
        at: DateTime<Utc>,
    },
}

impl Schedule {
    /// The first run strictly after `after`, or `None` when there is none (a past one-shot, or a cron
    /// search that found nothing).
    ///
    /// - `Cron` is evaluated on the wall clock of `tz`. A time skipped by a spring-forward change fires
    ///   at the first valid instant after the gap (02:30 → 03:00) when hour and minute are single
    ///   values; wildcard/stepped/list jobs simply have no runs inside the gap. In a fall-back overlap a
    ///   single-time job fires once (at the first pass); other jobs fire on both passes.
    /// - `Every` returns `anchor + k·period` for the smallest `k ≥ 1` that lies after `after`; with
    ///   no anchor it is `after + period`.
    /// - `Once` returns its instant if that is after `after`.
    pub fn next_after(
        &self,
        after: DateTime<Utc>,
        tz: Zone,
        anchor: Option<DateTime<Utc>>,
    ) -> Option<DateTime<Utc>> {
        match self {
            Schedule::Cron { expr } => cron_expr::compile_cached(expr).ok()?.next_after(after, tz),
            Schedule::Every { period } => next_on_grid(*period, after, anchor),
            Schedule::Once { at } => (*at > after).then_some(*at),
        }
    }

    /// Short human text: `every 30m`, `0 9 * * 1-5`, `once at 2026-12-01T09:00:00Z`.
    pub fn display(&self) -> String {
        match self {
            Schedule::Cron { expr } => expr.clone(),
            Schedule::Every { period } => format!("every {}", format_period(*period)),
            Schedule::Once { at } => {
                format!("once at {}", at.to_rfc3339_opts(SecondsFormat::Secs, true))
            }
        }
    }

    /// Storage form: `{"kind":"cron","expr":…}`, `{"kind":"every","seconds":…}` or
    /// `{"kind":"once","at":"…Z"}`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Schedule::Cron { expr } => serde_json::json!({"kind": "cron", "expr": expr}),
            Schedule::Every { period } => {
                serde_json::json!({"kind": "every", "seconds": period.as_secs()})
            }
            Schedule::Once { at } => serde_json::json!({
                "kind": "once",
                "at": at.to_rfc3339_opts(SecondsFormat::AutoSi, true),
            }),
        }
    }

    /// Reads the storage form written by [`Schedule::to_json`], re-validating cron text and interval.
    pub fn from_json(value: &serde_json::Value) -> Result<Schedule, ScheduleError> {
        let schedule = Schedule::deserialize(value)
            .map_err(|e| ScheduleError::Stored(format!("stored schedule {value}: {e}")))?;
        schedule.validate()?;
        Ok(schedule)
    }

    /// Checks invariants that deserialisation alone does not (cron syntax, minimum interval).
    fn validate(&self) -> Result<(), ScheduleError> {
        match self {
            Schedule::Cron { expr } => cron_expr::compile(expr).map(|_| ()),
            Schedule::Every { period } if *period < MIN_INTERVAL => {
                Err(ScheduleError::Duration(format!(
                    "interval of {}s is too short: the minimum is 1 minute (example: every 5m)",
                    period.as_secs()
                )))
            }
            Schedule::Every { .. } | Schedule::Once { .. } => Ok(()),
        }
    }
}

/// `anchor + k·period` with the smallest `k ≥ 1` after `after`, or `after + period` without an anchor.
fn next_on_grid(
    period: Duration,
    after: DateTime<Utc>,
    anchor: Option<DateTime<Utc>>,
) -> Option<DateTime<Utc>> {
    let step = TimeDelta::from_std(period).ok()?;
    if step <= TimeDelta::zero() {
        return None;
    }
    let Some(anchor) = anchor else {
        return after.checked_add_signed(step);
    };
    let elapsed = after.signed_duration_since(anchor);
    if elapsed < step {
        return anchor.checked_add_signed(step);
    }
    let steps = elapsed.num_milliseconds() / step.num_milliseconds().max(1) + 1;
    let steps = i32::try_from(steps).ok()?;
    let mut next = anchor.checked_add_signed(step.checked_mul(steps)?)?;
    // Millisecond rounding may leave `next` on `after`; the grid point must be strictly later.
    while next <= after {
        next = next.checked_add_signed(step)?;
    }
    Some(next)
}

/// `30m`, `2h`, `1d`, `90m`: the largest unit that divides the period exactly.
fn format_period(period: Duration) -> String {
    let secs = period.as_secs();
    match secs {
        s if s % 86_400 == 0 && s > 0 => format!("{}d", s / 86_400),
        s if s % 3_600 == 0 && s > 0 => format!("{}h", s / 3_600),
        s if s % 60 == 0 && s > 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// Serde for `Duration` as whole seconds.
mod duration_secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(period: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(period.as_secs())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_secs)
    }
}
