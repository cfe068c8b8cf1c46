//! Python Hermes' `cron/jobs.json` read into hermesd's job rows (for `hermesctl import hermes`):
//! ids, names, prompts, skills, model, toolsets, workdir, delivery, repeat counts and state are
//! kept; the schedule object becomes a [`Schedule`]. Jobs that cannot be read are reported by id
//! with the reason, never dropped silently.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::schedule::{Schedule, from_python};
use crate::store::CronJobRow;

/// What reading a jobs.json gave.
#[derive(Debug, Default)]
pub struct PythonJobs {
    pub jobs: Vec<CronJobRow>,
    /// (job id or index, why it was not readable).
    pub unreadable: Vec<(String, String)>,
}

fn text(job: &Value, key: &str) -> String {
    job.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn strings(job: &Value, key: &str) -> Vec<String> {
    job.get(key)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// An ISO-8601 time as Python writes it (with an offset; naive ones are UTC).
fn millis(job: &Value, key: &str) -> Option<i64> {
    let raw = job.get(key)?.as_str()?;
    DateTime::parse_from_rfc3339(raw)
        .map(|t| t.with_timezone(&Utc))
        .or_else(|_| {
            chrono::NaiveDateTime::parse_from_str(raw, "%Y-%m-%dT%H:%M:%S%.f").map(|t| t.and_utc())
        })
        .ok()
        .map(|t| t.timestamp_millis())
}

/// Read the text of a `cron/jobs.json` (`{"jobs": [...]}`, or a bare list).
pub fn read(jobs_json: &str) -> Result<PythonJobs, String> {
    let doc: Value = serde_json::from_str(jobs_json)
        .map_err(|e| format!("cron/jobs.json is not valid JSON: {e}"))?;
    let list = doc
        .get("jobs")
        .and_then(Value::as_array)
        .or_else(|| doc.as_array())
        .ok_or("cron/jobs.json has no `jobs` list")?;
    let mut out = PythonJobs::default();
    for (index, job) in list.iter().enumerate() {
        let id = Some(text(job, "id"))
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("#{index}"));
        match convert(job) {
            Ok(row) => out.jobs.push(row),
            Err(why) => out.unreadable.push((id, why)),
        }
    }
    Ok(out)
}

fn convert(job: &Value) -> Result<CronJobRow, String> {
    let id = text(job, "id");
    if id.is_empty() {
        return Err("the job has no id".into());
    }
    let no_agent = job
        .get("no_agent")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let script = super::jobs::check_script(&text(job, "script")).map_err(|e| e.0)?;
    if no_agent && script.is_empty() {
        return Err("a no_agent job without a script".into());
    }
    let prompt = text(job, "prompt");
    if prompt.is_empty() && !no_agent {
        return Err("the job has no prompt".into());
    }
    let (provider, base_url) =
        super::jobs::check_pins(&text(job, "provider"), &text(job, "base_url")).map_err(|e| e.0)?;
    let schedule_value = job.get("schedule").ok_or("the job has no schedule")?;
    let schedule: Schedule = from_python(schedule_value).map_err(|e| e.to_string())?;
    let shown = Some(text(job, "schedule_display"))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| schedule.display());
    let mut skills = strings(job, "skills");
    let single = text(job, "skill");
    if skills.is_empty() && !single.is_empty() {
        skills.push(single);
    }
    let enabled = job.get("enabled").and_then(Value::as_bool).unwrap_or(true);
    let state = match text(job, "state").as_str() {
        "completed" => "completed",
        "paused" => "paused",
        _ if !enabled => "paused",
        _ => "scheduled",
    };
    let repeat = job.get("repeat");
    let count = |key: &str| {
        repeat
            .and_then(|r| r.get(key))
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .max(0)
    };
    let name = Some(text(job, "name"))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| {
            let about = if prompt.is_empty() { &script } else { &prompt };
            about.chars().take(50).collect()
        });
    Ok(CronJobRow {
        id,
        name,
        prompt,
        schedule: shown,
        schedule_json: schedule.to_json().to_string(),
        timezone: String::new(),
        skills,
        model: text(job, "model"),
        toolsets: strings(job, "enabled_toolsets"),
        workdir: text(job, "workdir"),
        deliver: Some(text(job, "deliver"))
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| "local".into()),
        origin: job
            .get("origin")
            .filter(|o| !o.is_null())
            .map(Value::to_string),
        repeat_times: count("times"),
        repeat_completed: count("completed"),
        state: state.into(),
        paused_reason: Some(text(job, "paused_reason")).filter(|r| !r.is_empty()),
        missed_policy: "skip".into(),
        next_run_at: millis(job, "next_run_at"),
        last_run_at: millis(job, "last_run_at"),
        last_status: Some(text(job, "last_status")).filter(|s| !s.is_empty()),
        last_error: Some(text(job, "last_error")).filter(|s| !s.is_empty()),
        failure_streak: 0,
        created_at: millis(job, "created_at").unwrap_or_else(crate::store::now_ms),
        script,
        no_agent,
        provider,
        base_url,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The job Python Hermes 0.19 wrote for `hermes cron create "every 30m" "Say hello"`
    /// (from the measurements in ../shared/bench), plus a paused cron job and a broken one.
    const JOBS: &str = r#"{"jobs": [
      {"id": "ea0b9bb3facc", "name": "bench-job", "prompt": "Say hello",
       "skills": [], "skill": null, "model": null, "provider": null,
       "schedule": {"kind": "interval", "minutes": 30, "display": "every 30m"},
       "schedule_display": "every 30m", "repeat": {"times": null, "completed": 0},
       "enabled": true, "state": "scheduled", "paused_at": null, "paused_reason": null,
       "created_at": "2026-11-30T03:36:52.689073+00:00",
       "next_run_at": "2026-11-30T04:06:52.839349+00:00", "last_run_at": null,
       "deliver": "local", "origin": null, "enabled_toolsets": null, "workdir": null},
      {"id": "b1", "name": "", "prompt": "Summarise the overnight logs for me please",
       "skill": "log-summarising",
       "schedule": {"kind": "cron", "expr": "0 9 * * 1-5", "display": "0 9 * * 1-5"},
       "repeat": {"times": 5, "completed": 2}, "enabled": false, "state": "paused",
       "paused_reason": "on holiday", "deliver": "telegram:12345",
       "origin": {"platform": "telegram", "chat_id": "12345"},
       "enabled_toolsets": ["terminal", "file"], "workdir": "/srv/logs"},
      {"id": "c2", "prompt": "broken", "schedule": {"kind": "cron", "expr": "61 * * * *"}},
      {"prompt": "no id", "schedule": {"kind": "interval", "minutes": 5}}
    ]}"#;

    #[test]
    fn python_jobs_become_rows_and_broken_ones_are_named() {
        let found = read(JOBS).unwrap();
        assert_eq!(found.jobs.len(), 2);
        let bench = &found.jobs[0];
        assert_eq!(bench.id, "ea0b9bb3facc");
        assert_eq!(bench.schedule, "every 30m");
        assert_eq!(bench.state, "scheduled");
        assert_eq!(bench.deliver, "local");
        assert_eq!(bench.repeat_times, 0, "null = forever");
        assert_eq!(bench.next_run_at, Some(1_796_011_612_839));
        let parsed = Schedule::from_json(&serde_json::from_str(&bench.schedule_json).unwrap());
        assert!(matches!(parsed, Ok(Schedule::Every { .. })));

        let paused = &found.jobs[1];
        assert_eq!(paused.name, "Summarise the overnight logs for me please");
        assert_eq!(paused.skills, ["log-summarising"]);
        assert_eq!(paused.state, "paused");
        assert_eq!(paused.paused_reason.as_deref(), Some("on holiday"));
        assert_eq!((paused.repeat_times, paused.repeat_completed), (5, 2));
        assert_eq!(paused.toolsets, ["terminal", "file"]);
        assert!(paused.origin.as_deref().unwrap_or("").contains("12345"));

        assert_eq!(found.unreadable.len(), 2);
        assert_eq!(found.unreadable[0].0, "c2");
        assert!(
            found.unreadable[0].1.contains("61"),
            "{:?}",
            found.unreadable[0]
        );
        assert_eq!(found.unreadable[1].0, "#3");
        assert!(read("[]").unwrap().jobs.is_empty());
        assert!(read("{oops").unwrap_err().contains("not valid JSON"));
    }

    /// Jobs the real `hermes cron create` wrote (hermes-agent 0.19.0): a script job, a
    /// no-agent watchdog and a job pinned to a local server keep what makes them what they are.
    #[test]
    fn script_and_pinned_jobs_keep_their_script_and_server() {
        let found = read(include_str!("fixtures/hermes-0.19-jobs.json")).unwrap();
        assert!(found.unreadable.is_empty(), "{:?}", found.unreadable);
        let by_name = |name: &str| found.jobs.iter().find(|j| j.name == name).unwrap();
        let collector = by_name("collector");
        assert_eq!(
            (collector.script.as_str(), collector.no_agent),
            ("collect.py", false)
        );
        let watchdog = by_name("watchdog");
        assert_eq!(
            (watchdog.script.as_str(), watchdog.no_agent),
            ("check.sh", true)
        );
        assert_eq!(watchdog.prompt, "");
        assert_eq!(watchdog.deliver, "origin,telegram:-1001234567890:17");
        let pinned = by_name("pinned");
        assert_eq!(
            (
                pinned.provider.as_str(),
                pinned.base_url.as_str(),
                pinned.model.as_str()
            ),
            ("custom", "http://localhost:11434/v1", "llama3")
        );
        // One that would leave the scripts directory, or send a key elsewhere, is named.
        let odd = read(
            r#"{"jobs": [
              {"id": "x1", "prompt": "p", "script": "/etc/x.sh",
               "schedule": {"kind": "interval", "minutes": 5}},
              {"id": "x2", "prompt": "p", "provider": "openai", "base_url": "https://evil.example/v1",
               "schedule": {"kind": "interval", "minutes": 5}}
            ]}"#,
        )
        .unwrap();
        assert!(odd.jobs.is_empty());
        assert!(
            odd.unreadable[0].1.contains("must be relative"),
            "{:?}",
            odd.unreadable
        );
        assert!(
            odd.unreadable[1].1.contains("openai's endpoint"),
            "{:?}",
            odd.unreadable
        );
    }
}
