//! `timezone` and `cron.*`: the zone jobs without one use, how many runs go at once, the
//! inactivity limit, the catch-up bounds and how many finished runs are kept.

use std::time::Duration;

use crate::config::settings::Zone;
use serde_yaml::Value;

use super::{
    ApprovalsSection, CronMode,
    read::{Reader, Verdict, show},
    zone::{ZONE_HINT, parse_zone, system_zone},
};

/// The environment variables that override `cron.*` keys.
#[derive(Debug, Clone, Copy, Default)]
pub struct CronEnv<'a> {
    /// `HERMES_CRON_TIMEOUT`.
    pub timeout: Option<&'a str>,
    /// `HERMES_CRON_SCRIPT_TIMEOUT`.
    pub script_timeout: Option<&'a str>,
}

/// `variable`'s seconds when it is set and a number ≥ 0, else `configured` (with a notice when
/// it is set but not a number).
fn env_seconds(
    r: &mut Reader<'_>,
    variable: &str,
    value: Option<&str>,
    key: &str,
    configured: f64,
) -> f64 {
    let Some(text) = value else {
        return configured;
    };
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds >= 0.0 => seconds,
        _ => {
            r.notice_raw(format!(
                "{variable}: {} is not a number of seconds; using {key} ({configured})",
                show(&Value::String(text.to_string()))
            ));
            configured
        }
    }
}

/// What the scheduler and runs read (re-read on reload).
#[derive(Debug, Clone, PartialEq)]
pub struct CronSection {
    /// `timezone` (Hermes' key), else `TZ`, else the system zone, else UTC.
    pub timezone: Zone,
    /// `cron.max_parallel_jobs`: runs at the same time (1 to 256, default 4; Python's default is
    /// unbounded, too much for a small machine).
    pub max_parallel: usize,
    /// `cron.inactivity_timeout` seconds (env `HERMES_CRON_TIMEOUT` wins): a run with no
    /// progress for this long is stopped. `None` (0) = no limit. Default 600, as in Hermes.
    pub inactivity_timeout: Option<Duration>,
    /// `cron.catch_up_window` seconds: how old a missed slot may be for the `once` policy to still
    /// run it (default one day).
    pub catch_up_window: Duration,
    /// `cron.catch_up_limit`: the most missed slots the `all` policy runs (1 to 1,000, default 10).
    pub catch_up_limit: usize,
    /// `approvals.cron_mode: approve` lets unattended runs execute dangerous commands; the
    /// default (`deny`) refuses them.
    pub approve_dangerous: bool,
    /// `cron.keep_runs`: the newest runs kept per job, with their sessions and output files
    /// (default 50, at most 1,000,000; 0 keeps every run until it is older than `keep_days`).
    pub keep_runs: usize,
    /// `cron.keep_days`: runs that ended longer ago than this go, whatever their number
    /// (default 30, at most 36,500; 0 keeps them for ever).
    pub keep_days: u32,
    /// `cron.wrap_response`: a delivered result carries Hermes' "Cronjob Response" header and
    /// how-to-stop footer (default on); off sends the result alone.
    pub wrap_response: bool,
    /// `cron.script_timeout_seconds` (env `HERMES_CRON_SCRIPT_TIMEOUT` wins): how long a job's
    /// pre-run script may run (default 3600, as in Hermes).
    pub script_timeout: Duration,
}

impl Default for CronSection {
    fn default() -> Self {
        Self {
            timezone: system_zone(),
            max_parallel: 4,
            inactivity_timeout: Some(Duration::from_secs(600)),
            catch_up_window: Duration::from_secs(86_400),
            catch_up_limit: 10,
            approve_dangerous: false,
            keep_runs: 50,
            keep_days: 30,
            wrap_response: true,
            script_timeout: Duration::from_secs(3600),
        }
    }
}

impl CronSection {
    /// Read the section; `env` holds `HERMES_CRON_TIMEOUT` and `HERMES_CRON_SCRIPT_TIMEOUT`
    /// when set, `approvals` is the approvals section already read.
    pub fn read(r: &mut Reader<'_>, env: CronEnv<'_>, approvals: &ApprovalsSection) -> Self {
        let d = Self::default();
        let zone = d.timezone;
        let timezone = r.value("timezone", zone, &zone, |value| match value {
            Value::String(name) if name.trim().is_empty() => Verdict::Use(zone),
            Value::String(name) => parse_zone(name).map_or_else(
                || Verdict::Bad(format!("is not an IANA time zone ({ZONE_HINT})")),
                Verdict::Use,
            ),
            _ => Verdict::Bad("is not a time zone name".into()),
        });
        let configured = r.seconds("cron.inactivity_timeout", 600.0);
        let timeout = env_seconds(
            r,
            "HERMES_CRON_TIMEOUT",
            env.timeout,
            "cron.inactivity_timeout",
            configured,
        );
        let script = r.seconds(
            "cron.script_timeout_seconds",
            d.script_timeout.as_secs_f64(),
        );
        let script = env_seconds(
            r,
            "HERMES_CRON_SCRIPT_TIMEOUT",
            env.script_timeout,
            "cron.script_timeout_seconds",
            script,
        );
        let count = |r: &mut Reader<'_>, key: &str, default: usize, min: u64, max: u64| {
            r.whole(key, default as u64, min, max) as usize
        };
        Self {
            timezone,
            max_parallel: count(r, "cron.max_parallel_jobs", d.max_parallel, 1, 256),
            inactivity_timeout: (timeout > 0.0)
                .then(|| Duration::from_secs_f64(timeout.min(31_536_000.0))),
            catch_up_window: Duration::from_secs_f64(
                r.seconds("cron.catch_up_window", d.catch_up_window.as_secs_f64()),
            ),
            catch_up_limit: count(r, "cron.catch_up_limit", d.catch_up_limit, 1, 1_000),
            approve_dangerous: approvals.cron_mode == CronMode::Approve,
            keep_runs: count(r, "cron.keep_runs", d.keep_runs, 0, 1_000_000),
            keep_days: r.whole("cron.keep_days", d.keep_days.into(), 0, 36_500) as u32,
            wrap_response: r.flag("cron.wrap_response", d.wrap_response),
            script_timeout: if script > 0.0 {
                Duration::from_secs_f64(script.min(31_536_000.0))
            } else {
                d.script_timeout
            },
        }
    }

    /// The zone of a job: its own (`--tz`) or the configured one.
    pub fn zone_of(&self, job_zone: &str) -> Zone {
        parse_zone(job_zone).unwrap_or(self.timezone)
    }
}
