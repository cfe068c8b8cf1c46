//! Cron's side of the `cronjob` tool (whose schema is in `tools/cronjob_tool.rs`): the model's
//! arguments become job operations sent through [`CronOps`] — the same operations as `hermesctl
//! cron` — and their results become what the model reads. A job made here remembers the
//! session it came from, for `origin` delivery; a prompt the agent writes is scanned first.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{
    jobs::JobSpec,
    manage::CronError,
    ops::{CronOps, Done, Op},
};
use crate::{
    policy::{ThreatScope, scan_for_threats},
    store::CronJobRow,
    tools::{
        CRONJOB_ACTIONS as ACTIONS, CronHandle, CronOrigin, ToolError, optional_str, required_str,
    },
};

fn failure(e: CronError) -> ToolError {
    match e {
        CronError::Invalid(e) => ToolError::Arguments(e.to_string()),
        other => ToolError::Failed(other.to_string()),
    }
}

fn time(ms: Option<i64>) -> Value {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map_or(Value::Null, |t| Value::from(t.to_rfc3339()))
}

/// A job as the model sees it.
fn job_json(job: &CronJobRow) -> Value {
    let prompt: String = job.prompt.chars().take(200).collect();
    json!({
        "job_id": job.id,
        "name": job.name,
        "prompt": prompt,
        "schedule": job.schedule,
        "timezone": job.timezone,
        "state": job.state,
        "next_run_at": time(job.next_run_at),
        "last_run_at": time(job.last_run_at),
        "last_status": job.last_status,
        "last_error": job.last_error,
        "deliver": job.deliver,
        "skills": job.skills,
        "model": job.model,
        "enabled_toolsets": job.toolsets,
        "workdir": job.workdir,
        "script": (!job.script.is_empty()).then_some(&job.script),
        "no_agent": job.no_agent,
        "provider": (!job.provider.is_empty()).then_some(&job.provider),
        "base_url": (!job.base_url.is_empty()).then_some(&job.base_url),
        "repeat": {"times": (job.repeat_times > 0).then_some(job.repeat_times),
                   "completed": job.repeat_completed},
    })
}

fn strings(args: &Value, key: &str) -> Result<Option<Vec<String>>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(
            s.split(',')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect(),
        )),
        Some(Value::Array(items)) => Ok(Some(
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        )),
        Some(_) => Err(ToolError::Arguments(format!(
            "{key} must be a list of names"
        ))),
    }
}

/// A prompt the agent writes runs later, unattended and repeatedly: one that carries injection
/// or exfiltration payloads (text the agent may have picked up from a web page or a file) is
/// refused, as Hermes does. The whole prompt is scanned (up to the 1 MB a prompt may have).
/// Jobs the user adds with `hermesctl cron add` are not scanned.
fn check_prompt(prompt: &str) -> Result<(), ToolError> {
    let findings = scan_for_threats(prompt, ThreatScope::Cron);
    match findings.first() {
        None => Ok(()),
        Some(id) => Err(ToolError::Arguments(format!(
            "Blocked: the job's prompt matches threat pattern '{id}'. Cron prompts must not carry \
             injection or exfiltration payloads; if the user really wants this job, they can add \
             it themselves with `hermesctl cron add`."
        ))),
    }
}

/// The model named in `args`: a string, or Hermes' `{"provider": …, "model": …}`.
fn model_of(args: &Value) -> Option<String> {
    match args.get("model")? {
        Value::String(model) => Some(model.clone()),
        Value::Object(fields) => fields.get("model")?.as_str().map(str::to_string),
        _ => None,
    }
}

/// The provider named in `args`: top-level, or inside Hermes' `model` object.
fn provider_of(args: &Value) -> Option<String> {
    optional_str(args, "provider")
        .or_else(|| args.get("model")?.get("provider")?.as_str())
        .map(str::to_string)
}

/// The spec in `args`, and the fields they name (for update).
fn spec(args: &Value) -> Result<(JobSpec, Vec<String>), ToolError> {
    let mut spec = JobSpec::default();
    let mut fields = Vec::new();
    let mut text = |key: &str, field: &str, slot: &mut String| {
        if let Some(value) = optional_str(args, key) {
            *slot = value.to_string();
            fields.push(field.to_string());
        }
    };
    text("name", "name", &mut spec.name);
    text("prompt", "prompt", &mut spec.prompt);
    text("schedule", "schedule", &mut spec.schedule);
    text("timezone", "timezone", &mut spec.timezone);
    text("workdir", "workdir", &mut spec.workdir);
    text("deliver", "deliver", &mut spec.deliver);
    text("missed_policy", "missed_policy", &mut spec.missed_policy);
    text("script", "script", &mut spec.script);
    // A server of the agent's choosing would drive the job's tools unattended, every run: the
    // user sets one (`hermesctl cron add|edit --base-url`), never text the agent read.
    if optional_str(args, "base_url").is_some_and(|u| !u.trim().is_empty()) {
        return Err(ToolError::Arguments(
            "base_url is set by the user, not by the agent: a job's own model server would run \
             its tools unattended. Ask the user to run `hermesctl cron edit <job> --provider \
             custom --base-url <url>`."
                .into(),
        ));
    }
    if let Some(provider) = provider_of(args) {
        spec.provider = provider;
        fields.push("provider".into());
    }
    match args.get("no_agent") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(on)) => {
            spec.no_agent = *on;
            fields.push("no_agent".into());
        }
        Some(_) => {
            return Err(ToolError::Arguments(
                "no_agent must be true or false".into(),
            ));
        }
    }
    if let Some(model) = model_of(args) {
        spec.model = model;
        fields.push("model".into());
    }
    if fields.iter().any(|f| f == "prompt") {
        check_prompt(&spec.prompt)?;
    }
    if let Some(skills) = strings(args, "skills")? {
        spec.skills = skills;
        fields.push("skills".into());
    }
    if let Some(toolsets) = strings(args, "enabled_toolsets")? {
        spec.toolsets = toolsets;
        fields.push("enabled_toolsets".into());
    }
    match args.get("repeat") {
        None | Some(Value::Null) => {}
        Some(value) => {
            let times = value
                .as_i64()
                .filter(|n| *n >= 0)
                .ok_or_else(|| ToolError::Arguments("repeat must be a whole number ≥ 0".into()))?;
            spec.repeat_times = times;
            fields.push("repeat_times".into());
        }
    }
    Ok((spec, fields))
}

#[async_trait]
impl CronHandle for CronOps {
    async fn cronjob(&self, args: Value, origin: CronOrigin) -> Result<Value, ToolError> {
        let action = required_str(&args, "action")?.trim().to_ascii_lowercase();
        let cron = self;
        let job_id = || required_str(&args, "job_id").map(str::to_string);
        let done = |message: String, job: &CronJobRow| json!({"success": true, "message": message, "job": job_json(job)});
        let job = |done: Done| match done {
            Done::Job(job) => Ok(*job),
            _ => Err(ToolError::Failed(
                "cron answered with something else".into(),
            )),
        };
        match action.as_str() {
            "create" => {
                let (mut spec, _) = spec(&args)?;
                spec.origin = Some(
                    json!({"platform": origin.platform, "session_id": origin.session_id})
                        .to_string(),
                );
                let job = job(cron.call(Op::Add(spec)).await.map_err(failure)?)?;
                Ok(done(
                    format!("Scheduled job {} ({}).", job.id, job.schedule),
                    &job,
                ))
            }
            "list" => {
                let Done::Jobs(jobs) = cron.call(Op::List).await.map_err(failure)? else {
                    return Err(ToolError::Failed(
                        "cron answered with something else".into(),
                    ));
                };
                Ok(json!({"success": true, "count": jobs.len(),
                          "jobs": jobs.iter().map(job_json).collect::<Vec<_>>()}))
            }
            "update" => {
                let (spec, fields) = spec(&args)?;
                let op = Op::Edit {
                    id: job_id()?,
                    spec,
                    fields,
                };
                let job = job(cron.call(op).await.map_err(failure)?)?;
                Ok(done(format!("Updated job {}.", job.id), &job))
            }
            "pause" => {
                let op = Op::Pause {
                    id: job_id()?,
                    reason: "paused by the agent".into(),
                };
                let job = job(cron.call(op).await.map_err(failure)?)?;
                Ok(done(format!("Paused job {}.", job.id), &job))
            }
            "resume" => {
                let job = job(cron.call(Op::Resume(job_id()?)).await.map_err(failure)?)?;
                Ok(done(format!("Resumed job {}.", job.id), &job))
            }
            "remove" => {
                let job = job(cron.call(Op::Remove(job_id()?)).await.map_err(failure)?)?;
                Ok(
                    json!({"success": true, "message": format!("Removed job {} ({}).", job.id, job.name)}),
                )
            }
            "run" => {
                let Done::Run(run) = cron.call(Op::Run(job_id()?)).await.map_err(failure)? else {
                    return Err(ToolError::Failed(
                        "cron answered with something else".into(),
                    ));
                };
                Ok(
                    json!({"success": true, "run_id": run.id, "job_id": run.job_id,
                          "message": "The job is running now; its result is delivered as usual."}),
                )
            }
            other => Err(ToolError::Arguments(format!(
                "unknown action {other:?}: use one of {}",
                ACTIONS.join(", ")
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_names_a_script_and_a_provider_but_never_a_server() {
        let (job, fields) = spec(&json!({
            "script": "collect.py", "no_agent": true,
            "model": {"provider": "openrouter", "model": "x/y"}
        }))
        .unwrap();
        assert_eq!((job.script.as_str(), job.no_agent), ("collect.py", true));
        assert_eq!(
            (job.provider.as_str(), job.model.as_str()),
            ("openrouter", "x/y")
        );
        assert!(fields.iter().any(|f| f == "no_agent"));
        let refused = spec(&json!({"provider": "custom", "base_url": "https://evil.example/v1"}));
        match refused {
            Err(ToolError::Arguments(why)) => assert!(why.contains("set by the user"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(spec(&json!({"no_agent": "yes"})).is_err());
    }
}
