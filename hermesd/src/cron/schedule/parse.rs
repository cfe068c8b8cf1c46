//! Parsing schedule text typed by a user or the model (cron, `every …`, `in …`, bare durations,
//! ISO-8601 times) and IANA time-zone names, with one-line errors that carry an example.

use std::time::Duration;

use crate::config::settings::Zone;
use chrono::{DateTime, LocalResult, NaiveDate, NaiveDateTime, TimeDelta, TimeZone, Utc};

use super::{Schedule, ScheduleError, cron_expr};
use crate::config::settings::{ZONE_HINT, parse_zone};

/// Listed when the text matches no form at all.
const FORMS: &str = "use \"every 30m\" (recurring), \"30m\" or \"in 2h\" (once), \"0 9 * * 1-5\" \
                     (cron) or \"2026-12-01T09:00\" (once, in the job's time zone)";

/// Parses schedule text.
///
/// Accepted forms (case-insensitive):
/// - `every 30m`, `every 2h`, `every 1d` (units m/min/minute(s), h/hr/hour(s), d/day(s)) →
///   [`Schedule::Every`]; seconds (`every 90s`) are refused: the minimum is one minute.
/// - `in 30m` and a bare `30m` / `2h` / `1d` → [`Schedule::Once`] at `now` + that duration. A bare
///   duration is deliberately a one-shot, as in hermes-agent 0.19's `parse_schedule`; newer Python
///   Hermes reads bare `30m` as recurring, so callers wanting repetition must say `every 30m`.
/// - five cron fields (`0 9 * * mon-fri`) or `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`,
///   `@midnight`, `@hourly` → [`Schedule::Cron`].
/// - ISO-8601 `2026-12-01T09:00[:SS]` (naive: wall time in `tz`), with `Z` or an offset
///   (`+02:00`), or a bare date (midnight in `tz`) → [`Schedule::Once`]; it must lie after `now`.
pub fn parse(text: &str, now: DateTime<Utc>, tz: Zone) -> Result<Schedule, ScheduleError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ScheduleError::Unrecognized(format!(
            "schedule is empty: {FORMS}"
        )));
    }
    let lowered = text.to_ascii_lowercase();
    if let Some(rest) = strip_word(&lowered, "every") {
        let period = parse_duration(rest, "every ")?;
        return Ok(Schedule::Every { period });
    }
    if let Some(rest) = strip_word(&lowered, "in") {
        let delay = parse_duration(rest, "in ")?;
        return once_after(now, delay, text);
    }
    if lowered.starts_with('@') {
        return cron(&lowered);
    }
    if looks_like_iso(&lowered) {
        return parse_iso(text, now, tz).map(|at| Schedule::Once { at });
    }
    let starts_with_digit = lowered.starts_with(|c: char| c.is_ascii_digit());
    let tokens = lowered.split_whitespace().count();
    if starts_with_digit && (tokens == 1 || (tokens == 2 && !lowered.contains('*'))) {
        let delay = parse_duration(&lowered, "")?;
        return once_after(now, delay, text);
    }
    if tokens >= 3 || lowered.starts_with('*') {
        return cron(&lowered);
    }
    Err(ScheduleError::Unrecognized(format!(
        "schedule {text:?} is not understood: {FORMS}"
    )))
}

/// Parses an IANA time-zone name such as `Europe/Berlin` or `UTC`.
pub fn parse_tz(name: &str) -> Result<Zone, ScheduleError> {
    parse_zone(name)
        .ok_or_else(|| ScheduleError::TimeZone(format!("unknown time zone {name:?}: {ZONE_HINT}")))
}

fn cron(expr: &str) -> Result<Schedule, ScheduleError> {
    cron_expr::compile(expr)?;
    let expr = expr.split_whitespace().collect::<Vec<_>>().join(" ");
    Ok(Schedule::Cron { expr })
}

/// `rest` when `text` is `word` followed by whitespace (or by nothing).
fn strip_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(word)?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then(|| rest.trim())
}

fn once_after(now: DateTime<Utc>, delay: Duration, text: &str) -> Result<Schedule, ScheduleError> {
    TimeDelta::from_std(delay)
        .ok()
        .and_then(|delta| now.checked_add_signed(delta))
        .map(|at| Schedule::Once { at })
        .ok_or_else(|| ScheduleError::Duration(format!("{text:?} is too far in the future")))
}

/// Parses `30m`, `2 h`, `1day`; `prefix` (`"every "`, `"in "` or `""`) shapes the error examples.
fn parse_duration(text: &str, prefix: &str) -> Result<Duration, ScheduleError> {
    let examples = format!("{prefix}30m, {prefix}2h, {prefix}1d");
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    let unit = unit.trim();
    let shown = format!("{prefix}{text}");
    if number.is_empty() {
        return Err(ScheduleError::Duration(format!(
            "{shown:?} needs a number and a unit: {examples}"
        )));
    }
    let seconds_per_unit: u64 = match unit {
        "" => {
            return Err(ScheduleError::Duration(format!(
                "{shown:?} needs a unit: {examples}"
            )));
        }
        "s" | "sec" | "secs" | "second" | "seconds" => {
            return Err(ScheduleError::Duration(format!(
                "{shown:?}: seconds are not supported, the minimum is 1 minute: {examples}"
            )));
        }
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600,
        "d" | "day" | "days" => 86_400,
        other => {
            return Err(ScheduleError::Duration(format!(
                "{shown:?}: unknown unit {other:?}; use m, h or d: {examples}"
            )));
        }
    };
    let too_large = || ScheduleError::Duration(format!("{shown:?} is too large: {examples}"));
    let count: u64 = number.parse().map_err(|_| too_large())?;
    if count == 0 {
        return Err(ScheduleError::Duration(format!(
            "{shown:?} must be longer than zero: {examples}"
        )));
    }
    let seconds = count.checked_mul(seconds_per_unit).ok_or_else(too_large)?;
    // Beyond ~100 years nothing sensible is meant, and chrono arithmetic stays in range.
    if seconds > 100 * 366 * 86_400 {
        return Err(too_large());
    }
    Ok(Duration::from_secs(seconds))
}

/// `YYYY-` at the start.
fn looks_like_iso(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 5 && bytes[..4].iter().all(u8::is_ascii_digit) && bytes[4] == b'-'
}

/// How far in the past a one-shot time may be and still be accepted (it then runs at once):
/// Hermes' one-shot grace, so a job typed for the current minute is not refused.
pub const ONE_SHOT_GRACE: TimeDelta = TimeDelta::seconds(120);

/// Parses an ISO-8601 date-time (naive → wall time in `tz`) that must lie after
/// `now − ONE_SHOT_GRACE`.
fn parse_iso(text: &str, now: DateTime<Utc>, tz: Zone) -> Result<DateTime<Utc>, ScheduleError> {
    let example = now
        .checked_add_signed(TimeDelta::days(1))
        .unwrap_or(now)
        .with_timezone(&tz)
        .format("%Y-%m-%dT%H:%M");
    let at = parse_iso_instant(text, tz).map_err(|reason| {
        ScheduleError::Time(format!(
            "time {text:?} {reason} (example: \"{example}\" in {tz}, or \"{example}:00Z\")"
        ))
    })?;
    if at <= now - ONE_SHOT_GRACE {
        return Err(ScheduleError::Time(format!(
            "time {text:?} is in the past (now is {}); give a future time (example: \"{example}\")",
            now.with_timezone(&tz).format("%Y-%m-%dT%H:%M %Z")
        )));
    }
    Ok(at)
}

/// The instant an ISO text names; the error is a reason phrase.
pub(super) fn parse_iso_instant(text: &str, tz: Zone) -> Result<DateTime<Utc>, String> {
    let mut owned = text.trim().to_owned();
    if owned.len() > 10 && owned.as_bytes()[10] == b' ' {
        owned.replace_range(10..11, "T");
    }
    if owned.ends_with(['z', 'Z']) {
        owned.pop();
        owned.push_str("+00:00");
    }
    if let Ok(at) = DateTime::parse_from_rfc3339(&owned) {
        return Ok(at.with_timezone(&Utc));
    }
    for format in [
        "%Y-%m-%dT%H:%M%:z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M%z",
    ] {
        if let Ok(at) = DateTime::parse_from_str(&owned, format) {
            return Ok(at.with_timezone(&Utc));
        }
    }
    let naive = ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"]
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(&owned, format).ok())
        .or_else(|| {
            NaiveDate::parse_from_str(&owned, "%Y-%m-%d")
                .ok()
                .and_then(|date| date.and_hms_opt(0, 0, 0))
        })
        .ok_or_else(|| "is not a valid ISO-8601 time".to_owned())?;
    match tz.from_local_datetime(&naive) {
        LocalResult::Single(at) | LocalResult::Ambiguous(at, _) => Ok(at.with_timezone(&Utc)),
        LocalResult::None => Err(format!(
            "does not exist in {tz}: the clocks skip it for daylight saving time"
        )),
    }
}
