//! Jobs as users write them: a new job from its fields (schedule parsed in its zone, delivery
//! target and policy checked, first run computed), an edit of named fields, and resuming.

use std::path::Path;

use chrono::{DateTime, Utc};

use super::{
    plan::{MissedPolicy, next_slot, whole_second},
    schedule::{Schedule, parse, parse_tz},
};
use crate::{config::settings::CronSection, store::CronJobRow};

/// Chat platforms a delivery target may name (Hermes' list).
pub const PLATFORMS: &[&str] = &[
    "telegram",
    "discord",
    "slack",
    "whatsapp",
    "signal",
    "matrix",
    "mattermost",
    "homeassistant",
    "dingtalk",
    "feishu",
    "wecom",
    "weixin",
    "sms",
    "email",
    "webhook",
    "bluebubbles",
    "qqbot",
];

/// Longest prompt accepted, in bytes (a user message's limit).
const MAX_PROMPT_BYTES: usize = crate::agent::MAX_INPUT_BYTES;
/// Longest name, in characters.
const MAX_NAME_CHARS: usize = 200;

/// A job as given by a user, a client or the `cronjob` tool. Empty means "not given".
#[derive(Debug, Clone, Default)]
pub struct JobSpec {
    pub name: String,
    pub prompt: String,
    pub schedule: String,
    pub timezone: String,
    pub skills: Vec<String>,
    pub model: String,
    pub toolsets: Vec<String>,
    pub workdir: String,
    pub deliver: String,
    /// 0 = forever (a one-shot runs once).
    pub repeat_times: i64,
    pub missed_policy: String,
    /// Where it was created from (JSON), for `origin` delivery.
    pub origin: Option<String>,
    /// A pre-run script under `$HERMES_HOME/scripts/`, relative to it.
    pub script: String,
    /// The script's output is the result: no model call.
    pub no_agent: bool,
    /// The job's own provider and server (Hermes' per-job pins).
    pub provider: String,
    pub base_url: String,
}

/// Why a job was refused: one line for the user, with an example where one helps.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JobError(pub String);

fn refuse<T>(why: impl Into<String>) -> Result<T, JobError> {
    Err(JobError(why.into()))
}

/// The stored schedule of a job.
pub fn schedule_of(job: &CronJobRow) -> Result<Schedule, JobError> {
    let value: serde_json::Value = serde_json::from_str(&job.schedule_json)
        .map_err(|e| JobError(format!("job {} has an unreadable schedule: {e}", job.id)))?;
    Schedule::from_json(&value).map_err(|e| JobError(format!("job {}: {e}", job.id)))
}

/// The grid an interval job's runs lie on: its creation, to the second.
pub fn anchor_of(job: &CronJobRow) -> Option<i64> {
    DateTime::from_timestamp_millis(job.created_at).map(whole_second)
}

/// The job's next slot after `after` (epoch ms) under its schedule and zone.
pub fn next_run_of(job: &CronJobRow, after: i64, settings: &CronSection) -> Option<i64> {
    let schedule = schedule_of(job).ok()?;
    next_slot(
        &schedule,
        after,
        settings.zone_of(&job.timezone),
        anchor_of(job),
    )
}

fn check_zone(zone: &str) -> Result<String, JobError> {
    let zone = zone.trim();
    if zone.is_empty() {
        return Ok(String::new());
    }
    parse_tz(zone)
        .map(|_| zone.to_string())
        .map_err(|e| JobError(e.to_string()))
}

fn check_workdir(dir: &str) -> Result<String, JobError> {
    let dir = dir.trim();
    if dir.is_empty() {
        return Ok(String::new());
    }
    let path = Path::new(dir);
    if !path.is_absolute() {
        return refuse(format!("workdir {dir:?} must be an absolute path"));
    }
    if !path.is_dir() {
        return refuse(format!("workdir {dir} is not a directory"));
    }
    Ok(dir.to_string())
}

/// Delivery targets, comma-separated (`origin,telegram`), each checked by [`check_target`].
pub fn check_deliver(targets: &str, has_origin: bool) -> Result<String, JobError> {
    if targets.trim().is_empty() {
        return Ok(if has_origin { "origin" } else { "local" }.into());
    }
    let mut checked: Vec<String> = Vec::new();
    for target in targets.split(',').filter(|t| !t.trim().is_empty()) {
        let target = check_target(target)?;
        if !checked.contains(&target) {
            checked.push(target);
        }
    }
    Ok(checked.join(","))
}

/// A delivery target: `local`, `origin`, `<platform>` or `<platform>:<chat>[:<thread>]`.
fn check_target(target: &str) -> Result<String, JobError> {
    let target = target.trim();
    if target == "local" || target == "origin" {
        return Ok(target.into());
    }
    let (platform, chat) = target.split_once(':').unwrap_or((target, ""));
    let platform = platform.trim().to_ascii_lowercase();
    if !PLATFORMS.contains(&platform.as_str()) {
        return refuse(format!(
            "unknown delivery target {target:?}: use local, origin, or <platform>[:<chat>] with \
             a platform among {} (e.g. telegram:123456789)",
            PLATFORMS.join(", ")
        ));
    }
    if target.contains(':') && chat.trim().is_empty() {
        return refuse(format!(
            "delivery target {target:?} names no chat after the colon"
        ));
    }
    Ok(if chat.is_empty() {
        platform
    } else {
        format!("{platform}:{}", chat.trim())
    })
}

/// A script path as Hermes takes it: relative to `~/.hermes/scripts/`, never leaving it.
pub fn check_script(raw: &str) -> Result<String, JobError> {
    let script = raw.trim();
    if script.is_empty() {
        return Ok(String::new());
    }
    let drive = script.as_bytes().get(1) == Some(&b':');
    if script.starts_with('/') || script.starts_with('~') || script.starts_with('\\') || drive {
        return refuse(format!(
            "Script path must be relative to ~/.hermes/scripts/. Got absolute or home-relative \
             path: '{script}'. Place scripts in ~/.hermes/scripts/ and use just the filename."
        ));
    }
    if Path::new(script)
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return refuse(format!(
            "Script path escapes the scripts directory via traversal: '{script}'"
        ));
    }
    if script.len() > 1024 || script.chars().any(char::is_control) {
        return refuse(format!("Script path {script:?} is not a file name"));
    }
    Ok(script.to_string())
}

/// A job's pinned provider and server, checked as Hermes checks them.
pub(super) fn check_pins(provider: &str, base_url: &str) -> Result<(String, String), JobError> {
    let provider = provider.trim().to_ascii_lowercase();
    let base_url = base_url.trim().trim_end_matches('/').to_string();
    crate::llm::check_job_base_url(&provider, &base_url).map_err(JobError)?;
    Ok((provider, base_url))
}

fn check_policy(text: &str) -> Result<String, JobError> {
    MissedPolicy::parse(text)
        .map(|p| p.as_str().to_string())
        .ok_or_else(|| JobError(format!("missed-run policy {text:?}: use skip, once or all")))
}

fn check_prompt(prompt: &str) -> Result<String, JobError> {
    if prompt.trim().is_empty() {
        return refuse("a prompt is required: what should the agent do when the job runs?");
    }
    if prompt.len() > MAX_PROMPT_BYTES {
        return refuse(format!(
            "the prompt is {} bytes; the limit is {MAX_PROMPT_BYTES}",
            prompt.len()
        ));
    }
    Ok(prompt.to_string())
}

fn check_name(name: &str, prompt: &str) -> Result<String, JobError> {
    let name = name.trim();
    if name.chars().count() > MAX_NAME_CHARS {
        return refuse(format!(
            "the name is longer than {MAX_NAME_CHARS} characters"
        ));
    }
    if name.is_empty() {
        let first_line = prompt.trim().lines().next().unwrap_or_default();
        return Ok(first_line
            .chars()
            .take(50)
            .collect::<String>()
            .trim()
            .to_string());
    }
    Ok(name.to_string())
}

fn names(items: &[String]) -> Vec<String> {
    items
        .iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Parse `text` in the job's zone and set the schedule fields and the first run.
fn set_schedule(
    job: &mut CronJobRow,
    text: &str,
    now: DateTime<Utc>,
    settings: &CronSection,
) -> Result<(), JobError> {
    let zone = settings.zone_of(&job.timezone);
    let schedule = parse(text, now, zone).map_err(|e| JobError(e.to_string()))?;
    job.schedule = schedule.display();
    job.schedule_json = schedule.to_json().to_string();
    if matches!(schedule, Schedule::Once { .. }) && job.repeat_times == 0 {
        job.repeat_times = 1;
    }
    job.next_run_at = match &schedule {
        // A one-shot may be up to two minutes late already (then it runs at once).
        Schedule::Once { at } => Some(whole_second(*at)),
        _ => next_slot(&schedule, now.timestamp_millis(), zone, anchor_of(job)),
    };
    if job.next_run_at.is_none() {
        return refuse(format!("schedule {text:?} never runs after now"));
    }
    Ok(())
}

/// A new job (not yet stored) with id `id`, created at `now`.
pub fn new_job(
    spec: &JobSpec,
    id: String,
    now: DateTime<Utc>,
    settings: &CronSection,
) -> Result<CronJobRow, JobError> {
    if spec.schedule.trim().is_empty() {
        return refuse(
            "a schedule is required: e.g. \"every 30m\", \"in 2h\", \"0 9 * * 1-5\" or \
             \"2026-12-01T09:00\"",
        );
    }
    let script = check_script(&spec.script)?;
    if spec.no_agent && script.is_empty() {
        return refuse(
            "no_agent=True requires a script — with no agent and no script there is nothing \
             for the job to run.",
        );
    }
    let prompt = if spec.no_agent {
        spec.prompt.trim().to_string()
    } else {
        check_prompt(&spec.prompt)?
    };
    let (provider, base_url) = check_pins(&spec.provider, &spec.base_url)?;
    let named_after = if prompt.is_empty() { &script } else { &prompt };
    let mut job = CronJobRow {
        id,
        name: check_name(&spec.name, named_after)?,
        script,
        no_agent: spec.no_agent,
        provider,
        base_url,
        prompt,
        timezone: check_zone(&spec.timezone)?,
        skills: names(&spec.skills),
        model: spec.model.trim().to_string(),
        toolsets: names(&spec.toolsets),
        workdir: check_workdir(&spec.workdir)?,
        deliver: check_deliver(&spec.deliver, spec.origin.is_some())?,
        origin: spec.origin.clone(),
        repeat_times: spec.repeat_times.max(0),
        state: "scheduled".into(),
        missed_policy: check_policy(&spec.missed_policy)?,
        created_at: now.timestamp_millis(),
        ..CronJobRow::default()
    };
    set_schedule(&mut job, &spec.schedule, now, settings)?;
    Ok(job)
}

/// Fields an edit may name (the proto's field names).
pub const EDITABLE: &[&str] = &[
    "name",
    "prompt",
    "schedule",
    "timezone",
    "skills",
    "model",
    "enabled_toolsets",
    "workdir",
    "deliver",
    "repeat_times",
    "missed_policy",
    "script",
    "no_agent",
    "provider",
    "base_url",
];

/// Change the named `fields` of `job` to `spec`'s values. A new schedule or zone recomputes the
/// next run (and a completed one-shot given a new time is scheduled again).
pub fn apply_edit(
    job: &mut CronJobRow,
    spec: &JobSpec,
    fields: &[String],
    now: DateTime<Utc>,
    settings: &CronSection,
) -> Result<(), JobError> {
    if fields.is_empty() {
        return refuse(format!(
            "nothing to change: name one of {}",
            EDITABLE.join(", ")
        ));
    }
    for field in fields {
        match field.as_str() {
            "name" => job.name = check_name(&spec.name, &job.prompt)?,
            "prompt" if job.no_agent => job.prompt = spec.prompt.trim().to_string(),
            "prompt" => job.prompt = check_prompt(&spec.prompt)?,
            "script" => job.script = check_script(&spec.script)?,
            "no_agent" => job.no_agent = spec.no_agent,
            "provider" | "base_url" => {
                let provider = if fields.iter().any(|f| f == "provider") {
                    &spec.provider
                } else {
                    &job.provider
                };
                let base_url = if fields.iter().any(|f| f == "base_url") {
                    &spec.base_url
                } else {
                    &job.base_url
                };
                (job.provider, job.base_url) = check_pins(provider, base_url)?;
            }
            "timezone" => job.timezone = check_zone(&spec.timezone)?,
            "skills" => job.skills = names(&spec.skills),
            "model" => job.model = spec.model.trim().to_string(),
            "enabled_toolsets" => job.toolsets = names(&spec.toolsets),
            "workdir" => job.workdir = check_workdir(&spec.workdir)?,
            "deliver" => job.deliver = check_deliver(&spec.deliver, job.origin.is_some())?,
            "repeat_times" => job.repeat_times = spec.repeat_times.max(0),
            "missed_policy" => job.missed_policy = check_policy(&spec.missed_policy)?,
            "schedule" => {}
            other => {
                return refuse(format!(
                    "cannot edit {other:?}: editable fields are {}",
                    EDITABLE.join(", ")
                ));
            }
        }
    }
    if job.no_agent && job.script.is_empty() {
        return refuse("a no_agent job needs a script: the script is the job");
    }
    if !job.no_agent && job.prompt.trim().is_empty() {
        return refuse("a prompt is required: what should the agent do when the job runs?");
    }
    let reschedule = fields.iter().any(|f| f == "schedule" || f == "timezone");
    if reschedule {
        let text = if fields.iter().any(|f| f == "schedule") {
            spec.schedule.clone()
        } else {
            job.schedule.clone()
        };
        let was_once = schedule_of(job).is_ok_and(|s| matches!(s, Schedule::Once { .. }));
        if was_once && job.repeat_times == 1 {
            job.repeat_times = 0;
        }
        set_schedule(job, &text, now, settings)?;
        if job.state == "completed" {
            job.state = "scheduled".into();
            job.repeat_completed = 0;
        }
    }
    if job.repeat_times > 0 && job.repeat_completed >= job.repeat_times && job.state != "running" {
        job.state = "completed".into();
        job.next_run_at = None;
    }
    Ok(())
}

/// A paused job resumed at `now`: its next run is the first slot after now (missed slots while
/// paused are not runs that were due).
pub fn resume(job: &mut CronJobRow, now: i64, settings: &CronSection) -> Result<(), JobError> {
    match job.state.as_str() {
        "paused" => {}
        "completed" => {
            return refuse(format!(
                "job {} has completed; edit its schedule to run it again",
                job.id
            ));
        }
        _ => return Ok(()),
    }
    job.state = "scheduled".into();
    job.paused_reason = None;
    job.next_run_at = next_run_of(job, now, settings);
    if job.next_run_at.is_none() {
        job.state = "completed".into();
    }
    Ok(())
}

#[cfg(test)]
mod tests;
