//! Import of the `schedule` object that Python Hermes stores per job in `cron/jobs.json`:
//! `{"kind": "interval", "minutes": 30, "display": "every 30m"}`,
//! `{"kind": "cron", "expr": "0 9 * * *", "display": "0 9 * * *"}`,
//! `{"kind": "once", "run_at": "2026-02-03T14:00:00+00:00", "display": "once at 2026-02-03 14:00"}`.

use std::time::Duration;

use crate::config::settings::Zone;
use serde_json::Value;

use super::{MIN_INTERVAL, Schedule, ScheduleError, cron_expr, parse::parse_iso_instant};

/// Converts a Python Hermes `schedule` object. `display` is ignored (it is recomputed). A naive
/// `run_at` (written by old versions) is read as UTC. A one-shot in the past is still returned: the
/// caller decides what a missed run means.
pub fn from_python(value: &Value) -> Result<Schedule, ScheduleError> {
    let stored = |reason: &str| ScheduleError::Stored(format!("Python schedule {value}: {reason}"));
    let object = value
        .as_object()
        .ok_or_else(|| stored("is not an object"))?;
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .ok_or_else(|| stored("has no \"kind\" (expected interval, cron or once)"))?;
    match kind {
        "interval" => {
            let minutes = object
                .get("minutes")
                .ok_or_else(|| stored("has no \"minutes\""))?;
            let minutes = minutes
                .as_u64()
                .or_else(|| {
                    minutes
                        .as_f64()
                        .filter(|m| m.fract() == 0.0 && *m >= 0.0)
                        .map(|m| m as u64)
                })
                .ok_or_else(|| stored("\"minutes\" is not a whole number"))?;
            let period = minutes
                .checked_mul(60)
                .map(Duration::from_secs)
                .ok_or_else(|| stored("\"minutes\" is too large"))?;
            if period < MIN_INTERVAL {
                return Err(stored("\"minutes\" must be at least 1"));
            }
            Ok(Schedule::Every { period })
        }
        "cron" => {
            let expr = object
                .get("expr")
                .and_then(Value::as_str)
                .ok_or_else(|| stored("has no \"expr\" string"))?;
            cron_expr::compile(expr)?;
            let expr = expr
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_ascii_lowercase();
            Ok(Schedule::Cron { expr })
        }
        "once" => {
            let run_at = object
                .get("run_at")
                .and_then(Value::as_str)
                .ok_or_else(|| stored("has no \"run_at\" string"))?;
            let at = parse_iso_instant(run_at, Zone::utc())
                .map_err(|reason| stored(&format!("\"run_at\" {reason}")))?;
            Ok(Schedule::Once { at })
        }
        other => Err(stored(&format!(
            "unknown kind {other:?} (expected interval, cron or once)"
        ))),
    }
}
