//! Cron settings read from the configuration: the time zone jobs without one use, how many runs
//! go at once, the inactivity limit, the catch-up bounds and how dangerous commands are treated.

use std::time::Duration;

use chrono_tz::Tz;
use serde_yaml::Value;

use super::schedule::parse_tz;

/// What the scheduler and runs read from `config.yaml` (re-read on reload).
#[derive(Debug, Clone, PartialEq)]
pub struct CronSettings {
    /// `timezone` (Hermes' key), else `TZ`, else the system zone, else UTC.
    pub timezone: Tz,
    /// `cron.max_parallel_jobs`: runs at the same time (default 4; Python's default is unbounded,
    /// too much for a small machine).
    pub max_parallel: usize,
    /// `cron.inactivity_timeout` seconds (env `HERMES_CRON_TIMEOUT`): a run with no progress for
    /// this long is stopped. `None` (0) = no limit. Default 600, as in Hermes.
    pub inactivity_timeout: Option<Duration>,
    /// `cron.catch_up_window` seconds: how old a missed slot may be for the `once` policy to still
    /// run it (default one day).
    pub catch_up_window: Duration,
    /// `cron.catch_up_limit`: the most missed slots the `all` policy runs (default 10).
    pub catch_up_limit: usize,
    /// `approvals.cron_mode: approve` lets unattended runs execute dangerous commands; the
    /// default (`deny`) refuses them.
    pub approve_dangerous: bool,
    /// `cron.keep_runs`: the newest runs kept per job, with their sessions and output files
    /// (default 50; 0 keeps every run until it is older than `keep_days`).
    pub keep_runs: usize,
    /// `cron.keep_days`: runs that ended longer ago than this go, whatever their number
    /// (default 30; 0 keeps them for ever).
    pub keep_days: u32,
}

impl Default for CronSettings {
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
        }
    }
}

fn get<'a>(tree: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(tree, |node, key| node.get(key))
}

fn number(value: Option<&Value>) -> Option<f64> {
    match value? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|n| n.is_finite() && *n >= 0.0)
}

/// The zone of this machine: `TZ` when it names an IANA zone, else the system setting, else UTC.
pub fn system_zone() -> Tz {
    std::env::var("TZ")
        .ok()
        .map(|tz| tz.trim_start_matches(':').to_string())
        .and_then(|tz| parse_tz(&tz).ok())
        .or_else(|| {
            iana_time_zone::get_timezone()
                .ok()
                .and_then(|tz| parse_tz(&tz).ok())
        })
        .unwrap_or(Tz::UTC)
}

impl CronSettings {
    /// Read the settings; `env_timeout` is `HERMES_CRON_TIMEOUT` when set. Bad values fall back
    /// to the defaults with a notice in the returned list.
    pub fn from_config(tree: &Value, env_timeout: Option<&str>) -> (Self, Vec<String>) {
        let defaults = Self::default();
        let mut notices = Vec::new();
        let timezone = match get(tree, "timezone").and_then(Value::as_str).map(str::trim) {
            Some(name) if !name.is_empty() => parse_tz(name).unwrap_or_else(|e| {
                notices.push(format!("timezone: {e}; using {}", defaults.timezone));
                defaults.timezone
            }),
            _ => defaults.timezone,
        };
        let timeout = env_timeout
            .and_then(|t| t.trim().parse::<f64>().ok())
            .filter(|t| t.is_finite() && *t >= 0.0)
            .or_else(|| number(get(tree, "cron.inactivity_timeout")));
        let inactivity_timeout = match timeout {
            Some(0.0) => None,
            Some(seconds) => Some(Duration::from_secs_f64(seconds)),
            None => defaults.inactivity_timeout,
        };
        let max_parallel = number(get(tree, "cron.max_parallel_jobs"))
            .map_or(defaults.max_parallel, |n| (n as usize).clamp(1, 256));
        let approve_dangerous = get(tree, "approvals.cron_mode")
            .and_then(Value::as_str)
            .is_some_and(|mode| mode.trim().eq_ignore_ascii_case("approve"));
        let settings = Self {
            timezone,
            max_parallel,
            inactivity_timeout,
            catch_up_window: number(get(tree, "cron.catch_up_window"))
                .map_or(defaults.catch_up_window, Duration::from_secs_f64),
            catch_up_limit: number(get(tree, "cron.catch_up_limit"))
                .map_or(defaults.catch_up_limit, |n| (n as usize).clamp(1, 1_000)),
            approve_dangerous,
            keep_runs: number(get(tree, "cron.keep_runs"))
                .map_or(defaults.keep_runs, |n| (n as usize).min(1_000_000)),
            keep_days: number(get(tree, "cron.keep_days"))
                .map_or(defaults.keep_days, |n| (n as u32).min(36_500)),
        };
        (settings, notices)
    }

    /// The zone of a job: its own (`--tz`) or the configured one.
    pub fn zone_of(&self, job_zone: &str) -> Tz {
        parse_tz(job_zone.trim()).unwrap_or(self.timezone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(yaml: &str) -> Value {
        serde_yaml::from_str(yaml).unwrap_or(Value::Null)
    }

    #[test]
    fn defaults_follow_hermes() {
        let (s, notices) = CronSettings::from_config(&Value::Null, None);
        assert!(notices.is_empty());
        assert_eq!(s.inactivity_timeout, Some(Duration::from_secs(600)));
        assert_eq!(s.max_parallel, 4);
        assert!(!s.approve_dangerous);
    }

    #[test]
    fn keys_and_env_are_read() {
        let t = tree(
            "timezone: Europe/Berlin\ncron: {max_parallel_jobs: 2, inactivity_timeout: 30}\n\
             approvals: {cron_mode: approve}",
        );
        let (s, _) = CronSettings::from_config(&t, None);
        assert_eq!(s.timezone, chrono_tz::Europe::Berlin);
        assert_eq!(s.max_parallel, 2);
        assert_eq!(s.inactivity_timeout, Some(Duration::from_secs(30)));
        assert!(s.approve_dangerous);
        let (s, _) = CronSettings::from_config(&t, Some("0"));
        assert_eq!(
            s.inactivity_timeout, None,
            "HERMES_CRON_TIMEOUT=0 means no limit"
        );
    }

    #[test]
    fn a_bad_zone_is_a_notice_not_an_error() {
        let (s, notices) = CronSettings::from_config(&tree("timezone: Mars/Olympus"), None);
        assert_eq!(s.timezone, CronSettings::default().timezone);
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(notices[0].contains("Mars/Olympus"), "{notices:?}");
    }
}
