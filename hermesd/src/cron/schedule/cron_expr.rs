//! Classic five-field cron expressions: alias expansion, field validation with precise errors, and
//! the next fire time on a time zone's wall clock (croner searches the calendar; this file adds the
//! handling of fall-back overlaps that croner's single-result search leaves out).

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::rc::Rc;

use crate::config::settings::Zone;
use chrono::{DateTime, Offset, TimeDelta, TimeZone, Utc};
use croner::parser::{CronParser, Seconds, Year};
use croner::{Cron, JobType};

use super::ScheduleError;

/// Appended to every cron error so the user sees a working expression.
const EXAMPLE: &str = "(example: \"0 9 * * 1-5\" = 09:00 on weekdays)";

const MONTH_NAMES: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAY_NAMES: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const MONTH_LENGTHS: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/// One of the five positions of a cron expression.
struct FieldSpec {
    label: &'static str,
    min: u32,
    max: u32,
    /// Names accepted in place of numbers; `names[i]` stands for `min_name + i`.
    names: &'static [&'static str],
    min_name: u32,
    names_hint: &'static str,
}

const FIELDS: [FieldSpec; 5] = [
    FieldSpec {
        label: "minute",
        min: 0,
        max: 59,
        names: &[],
        min_name: 0,
        names_hint: "",
    },
    FieldSpec {
        label: "hour",
        min: 0,
        max: 23,
        names: &[],
        min_name: 0,
        names_hint: "",
    },
    FieldSpec {
        label: "day-of-month",
        min: 1,
        max: 31,
        names: &[],
        min_name: 0,
        names_hint: "",
    },
    FieldSpec {
        label: "month",
        min: 1,
        max: 12,
        names: &MONTH_NAMES,
        min_name: 1,
        names_hint: " or a name jan-dec",
    },
    FieldSpec {
        label: "day-of-week",
        min: 0,
        max: 7,
        names: &DAY_NAMES,
        min_name: 0,
        names_hint: " or a name sun-sat",
    },
];

/// A validated expression, ready to search.
pub(super) struct CompiledCron {
    cron: Cron,
    /// Hour and minute are single values: such a job fires at most once per local day.
    fixed_time: bool,
}

/// Compiled expressions kept per thread; a croner parse costs ~40 µs (it builds a 5,000-year table),
/// a lookup well under 1 µs. Each entry holds ~5 KB, so the map is emptied when it reaches this size.
const CACHE_LIMIT: usize = 512;

thread_local! {
    static COMPILED: RefCell<HashMap<String, Rc<CompiledCron>>> = RefCell::new(HashMap::new());
}

/// Like [`compile`], but reuses an earlier compilation of the same text on this thread.
pub(super) fn compile_cached(expr: &str) -> Result<Rc<CompiledCron>, ScheduleError> {
    if let Some(hit) = COMPILED.with_borrow(|cache| cache.get(expr).cloned()) {
        return Ok(hit);
    }
    let compiled = Rc::new(compile(expr)?);
    COMPILED.with_borrow_mut(|cache| {
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(expr.to_owned(), Rc::clone(&compiled));
    });
    Ok(compiled)
}

/// Validates `expr` (five fields or an `@alias`) and prepares it for searching.
pub(super) fn compile(expr: &str) -> Result<CompiledCron, ScheduleError> {
    let lowered = expr.trim().to_ascii_lowercase();
    let expanded = expand_alias(expr, &lowered)?;
    let err = |reason: String| {
        ScheduleError::Cron(format!("cron expression {expr:?}: {reason} {EXAMPLE}"))
    };

    let count = expanded.split_whitespace().count();
    if count != 5 {
        return Err(err(format!(
            "has {count} field(s) but needs 5: minute hour day-of-month month day-of-week"
        )));
    }
    let mut normalized = String::with_capacity(expanded.len() + 16);
    let mut sets = [0u64; 5];
    for (index, (spec, field)) in FIELDS.iter().zip(expanded.split_whitespace()).enumerate() {
        if index > 0 {
            normalized.push(' ');
        }
        sets[index] = parse_field(spec, field, &mut normalized).map_err(err)?;
    }
    let mut fields = expanded.split_whitespace();
    let dom_star = fields.nth(2) == Some("*");
    let dow_star = fields.nth(1) == Some("*");
    if !dom_star && dow_star && !any_day_exists(sets[2], sets[3]) {
        return Err(err(
            "never fires: no selected month has any of the selected days".to_owned(),
        ));
    }
    let cron = CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build()
        .parse(&normalized)
        .map_err(|e| err(e.to_string()))?;
    let fixed_time = cron.determine_job_type() == JobType::FixedTime;
    Ok(CompiledCron { cron, fixed_time })
}

/// Replaces `@daily` and friends by their five-field form; other text passes through.
fn expand_alias<'a>(expr: &str, lowered: &'a str) -> Result<&'a str, ScheduleError> {
    if !lowered.starts_with('@') {
        return Ok(lowered);
    }
    Ok(match lowered {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        _ => {
            return Err(ScheduleError::Cron(format!(
                "cron alias {expr:?} is unknown; use @yearly, @annually, @monthly, @weekly, @daily, \
                 @midnight or @hourly (example: \"@daily\" = every day at 00:00)"
            )));
        }
    })
}

/// Parses one field (a comma list of `*`, `a`, `a-b`, each optionally `/step`), writes its numeric
/// form to `out` and returns the set of selected values as a bit mask.
fn parse_field(spec: &FieldSpec, field: &str, out: &mut String) -> Result<u64, String> {
    let mut mask = 0u64;
    for (index, item) in field.split(',').enumerate() {
        if index > 0 {
            out.push(',');
        }
        mask |= parse_item(spec, item, out)?;
    }
    Ok(mask)
}

fn parse_item(spec: &FieldSpec, item: &str, out: &mut String) -> Result<u64, String> {
    let label = spec.label;
    if item.is_empty() {
        return Err(format!("{label} field has an empty list item"));
    }
    let (range, step) = match item.split_once('/') {
        Some((range, step_text)) => (range, Some(parse_step(spec, step_text)?)),
        None => (item, None),
    };
    let (low, high, star) = if range == "*" {
        (spec.min, spec.max, true)
    } else if let Some((first, last)) = range.split_once('-') {
        let (low, high) = (parse_value(spec, first)?, parse_value(spec, last)?);
        if low > high {
            return Err(format!(
                "{label} range {first}-{last} is backwards (ranges do not wrap; use a list like 22-23,0-2)"
            ));
        }
        (low, high, false)
    } else {
        let value = parse_value(spec, range)?;
        (value, if step.is_some() { spec.max } else { value }, false)
    };
    // `write!` into a String cannot fail.
    let _ = match (star, step) {
        (true, None) => write!(out, "*"),
        (true, Some(step)) => write!(out, "*/{step}"),
        (false, None) if low == high => write!(out, "{low}"),
        (false, None) => write!(out, "{low}-{high}"),
        (false, Some(step)) => write!(out, "{low}-{high}/{step}"),
    };
    let step = step.unwrap_or(1);
    Ok((low..=high)
        .step_by(step as usize)
        .fold(0u64, |mask, v| mask | (1u64 << v)))
}

fn parse_step(spec: &FieldSpec, text: &str) -> Result<u32, String> {
    let label = spec.label;
    match text.parse::<u32>() {
        Ok(0) => Err(format!("{label} step /0 must be at least 1")),
        Ok(step) if step > spec.max - spec.min + 1 => Err(format!(
            "{label} step /{step} is larger than the range {}-{}",
            spec.min, spec.max
        )),
        Ok(step) => Ok(step),
        Err(_) => Err(format!("{label} step {text:?} is not a whole number")),
    }
}

fn parse_value(spec: &FieldSpec, text: &str) -> Result<u32, String> {
    let (label, min, max) = (spec.label, spec.min, spec.max);
    if let Ok(value) = text.parse::<u32>() {
        return if (min..=max).contains(&value) {
            Ok(value)
        } else {
            Err(format!("{label} {value} is out of range {min}-{max}"))
        };
    }
    if let Some(position) = spec.names.iter().position(|name| *name == text) {
        return Ok(spec.min_name + position as u32);
    }
    if text.is_empty() {
        return Err(format!("{label} field has a range with a missing end"));
    }
    Err(format!(
        "{label} {text:?} is not a number {min}-{max}{}",
        spec.names_hint
    ))
}

/// Whether some selected month has some selected day-of-month (February counted with 29 days).
fn any_day_exists(days: u64, months: u64) -> bool {
    (1..=12u32)
        .filter(|month| months & (1 << month) != 0)
        .any(|month| {
            let length = MONTH_LENGTHS[month as usize - 1];
            (1..=length).any(|day| days & (1 << day) != 0)
        })
}

/// UTC offset in seconds of `tz` at `instant`.
fn offset_at(tz: Zone, instant: DateTime<Utc>) -> i32 {
    tz.offset_from_utc_datetime(&instant.naive_utc())
        .fix()
        .local_minus_utc()
}

impl CompiledCron {
    /// The first fire time strictly after `after`, on the wall clock of `tz`.
    pub(super) fn next_after(&self, after: DateTime<Utc>, tz: Zone) -> Option<DateTime<Utc>> {
        // croner keeps sub-second parts; searching from the whole second keeps results on :00.
        let after_second = DateTime::from_timestamp(after.timestamp(), 0)?;
        let mut start = after_second.with_timezone(&tz);
        // Each round moves the wall-clock start forward; two rounds settle any real zone.
        for _ in 0..4 {
            let found = self.cron.find_next_occurrence(&start, false).ok()?;
            let found_utc = found.with_timezone(&Utc);
            if found_utc > after {
                if self.fixed_time {
                    return Some(found_utc);
                }
                return Some(
                    self.second_pass_before(after, found_utc, tz)
                        .unwrap_or(found_utc),
                );
            }
            // croner returned the first pass of a repeated wall time while `after` is already in the
            // second pass: take the second pass, except for single-time jobs, which fire only once.
            let second_pass = tz.from_local_datetime(&found.naive_local()).latest()?;
            if !self.fixed_time && second_pass.with_timezone(&Utc) > after {
                return Some(second_pass.with_timezone(&Utc));
            }
            start = second_pass;
        }
        None
    }

    /// For wildcard jobs: a match in the second pass of a fall-back overlap that lies between `after`
    /// and croner's answer `found` (croner only ever reports the first pass of a repeated time).
    fn second_pass_before(
        &self,
        after: DateTime<Utc>,
        found: DateTime<Utc>,
        tz: Zone,
    ) -> Option<DateTime<Utc>> {
        let probe = found.min(after.checked_add_signed(TimeDelta::hours(3))?);
        let offset_before = offset_at(tz, after);
        if offset_at(tz, probe) >= offset_before {
            return None;
        }
        // Bisect to the first second of the new (smaller) offset.
        let (mut low, mut high) = (after.timestamp(), probe.timestamp());
        while high - low > 1 {
            let mid = low + (high - low) / 2;
            if offset_at(tz, DateTime::from_timestamp(mid, 0)?) == offset_before {
                low = mid;
            } else {
                high = mid;
            }
        }
        let transition = DateTime::from_timestamp(high, 0)?.with_timezone(&tz);
        let repeated = self.cron.find_next_occurrence(&transition, true).ok()?;
        let second_pass = tz.from_local_datetime(&repeated.naive_local()).latest()?;
        let second_pass = second_pass.with_timezone(&Utc);
        (second_pass > after && second_pass < found).then_some(second_pass)
    }
}
