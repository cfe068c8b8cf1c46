//! The requests of `hermesctl cron add|edit`: job settings from the flags, and for `edit` the
//! list of the fields it changes.

use std::{io::Read, path::Path};

use hermes_proto::pb;

use crate::{
    cli::{CronJobArgs, MissedPolicyArg},
    error::CliError,
};

/// The flags of `cron edit`, as the list in the "nothing to change" error.
const EDIT_FLAGS: &str = "--schedule, --prompt, --name, --skill, --no-skills, --deliver, \
    --model, --tz, --repeat, --missed, --toolset, --no-toolsets, --workdir, --script, --no-agent, \
    --agent, --provider, --base-url";

/// The prompt as given, or standard input for `-`.
pub fn prompt_text(prompt: String) -> Result<String, CliError> {
    if prompt != "-" {
        return Ok(prompt);
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| CliError::new(format!("cannot read the prompt from stdin: {e}")))?;
    let text = text.trim_end();
    if text.trim().is_empty() {
        return Err(CliError::new(
            "standard input held no prompt (`--prompt -` reads it from there)",
        ));
    }
    Ok(text.to_string())
}

/// A directory made absolute against the current directory; empty stays empty (the default).
fn absolute_dir(dir: &Path) -> Result<String, CliError> {
    if dir.as_os_str().is_empty() {
        return Ok(String::new());
    }
    std::path::absolute(dir)
        .map(|path| path.display().to_string())
        .map_err(|e| CliError::new(format!("cannot resolve --workdir {}: {e}", dir.display())))
}

/// The proto value of `--missed`.
pub fn missed_policy(arg: MissedPolicyArg) -> pb::MissedRunPolicy {
    match arg {
        MissedPolicyArg::Skip => pb::MissedRunPolicy::Skip,
        MissedPolicyArg::Once => pb::MissedRunPolicy::Once,
        MissedPolicyArg::All => pb::MissedRunPolicy::All,
    }
}

/// Copy the settings given into `job`; returns the proto names of the fields set.
pub fn apply(job: &mut pb::CronJob, args: CronJobArgs) -> Result<Vec<&'static str>, CliError> {
    let mut fields = Vec::new();
    if let Some(name) = args.name {
        job.name = name;
        fields.push("name");
    }
    if let Some(timezone) = args.timezone {
        job.timezone = timezone;
        fields.push("timezone");
    }
    if !args.skills.is_empty() {
        job.skills = args.skills;
        fields.push("skills");
    }
    if let Some(model) = args.model {
        job.model = model;
        fields.push("model");
    }
    if !args.toolsets.is_empty() {
        job.enabled_toolsets = args.toolsets;
        fields.push("enabled_toolsets");
    }
    if let Some(workdir) = args.workdir {
        job.workdir = absolute_dir(&workdir)?;
        fields.push("workdir");
    }
    if let Some(deliver) = args.deliver {
        job.deliver = deliver;
        fields.push("deliver");
    }
    if let Some(repeat) = args.repeat_times {
        job.repeat_times = repeat;
        fields.push("repeat_times");
    }
    if let Some(missed) = args.missed_policy {
        job.missed_policy = missed_policy(missed) as i32;
        fields.push("missed_policy");
    }
    if let Some(script) = args.script {
        job.script = script;
        fields.push("script");
    }
    if args.no_agent || args.agent {
        job.no_agent = args.no_agent;
        fields.push("no_agent");
    }
    if let Some(provider) = args.provider {
        job.provider = provider;
        fields.push("provider");
    }
    if let Some(base_url) = args.base_url {
        job.base_url = base_url;
        fields.push("base_url");
    }
    Ok(fields)
}

/// What `cron edit` was given (the prompt already read from stdin if it was `-`).
#[derive(Debug, Default)]
pub struct Edit {
    pub schedule: Option<String>,
    pub prompt: Option<String>,
    pub args: CronJobArgs,
    pub no_skills: bool,
    pub no_toolsets: bool,
}

/// The Update request: the new values in `job`, their proto names in `fields`.
pub fn update_request(id: String, edit: Edit) -> Result<pb::UpdateCronJobRequest, CliError> {
    let mut job = pb::CronJob {
        id,
        ..Default::default()
    };
    let mut fields = Vec::new();
    if let Some(prompt) = edit.prompt {
        job.prompt = prompt;
        fields.push("prompt");
    }
    if let Some(schedule) = edit.schedule {
        job.schedule = schedule;
        fields.push("schedule");
    }
    fields.extend(apply(&mut job, edit.args)?);
    // clap keeps --no-skills from --skill, and --no-toolsets from --toolset.
    if edit.no_skills {
        job.skills.clear();
        fields.push("skills");
    }
    if edit.no_toolsets {
        job.enabled_toolsets.clear();
        fields.push("enabled_toolsets");
    }
    if fields.is_empty() {
        return Err(CliError::new(format!(
            "nothing to change; give at least one of {EDIT_FLAGS}"
        )));
    }
    Ok(pb::UpdateCronJobRequest {
        job: Some(job),
        fields: fields.into_iter().map(String::from).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(edit: Edit) -> Vec<String> {
        update_request("job1".into(), edit).unwrap().fields
    }

    #[test]
    fn edit_fields_name_exactly_the_flags_given() {
        let edit = Edit {
            schedule: Some("every 2h".into()),
            args: CronJobArgs {
                timezone: Some("Europe/Berlin".into()),
                repeat_times: Some(0),
                missed_policy: Some(MissedPolicyArg::Once),
                ..Default::default()
            },
            ..Default::default()
        };
        let request = update_request("job1".into(), edit).unwrap();
        assert_eq!(
            request.fields,
            ["schedule", "timezone", "repeat_times", "missed_policy"]
        );
        let job = request.job.unwrap();
        assert_eq!(job.id, "job1");
        assert_eq!(job.schedule, "every 2h");
        assert_eq!(job.timezone, "Europe/Berlin");
        assert_eq!(job.missed_policy, pb::MissedRunPolicy::Once as i32);
        assert!(job.prompt.is_empty());

        let all = Edit {
            schedule: Some("0 9 * * *".into()),
            prompt: Some("brief me".into()),
            args: CronJobArgs {
                name: Some("brief".into()),
                skills: vec!["arxiv".into()],
                deliver: Some("telegram:42".into()),
                model: Some("openrouter:x".into()),
                timezone: Some("UTC".into()),
                repeat_times: Some(3),
                missed_policy: Some(MissedPolicyArg::All),
                toolsets: vec!["web".into(), "terminal".into()],
                workdir: Some("/srv/reports".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(
            fields(all),
            [
                "prompt",
                "schedule",
                "name",
                "timezone",
                "skills",
                "model",
                "enabled_toolsets",
                "workdir",
                "deliver",
                "repeat_times",
                "missed_policy"
            ]
        );
    }

    #[test]
    fn clearing_flags_name_their_fields_with_empty_values() {
        let request = update_request(
            "job1".into(),
            Edit {
                no_skills: true,
                no_toolsets: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(request.fields, ["skills", "enabled_toolsets"]);
        let job = request.job.unwrap();
        assert!(job.skills.is_empty() && job.enabled_toolsets.is_empty());
    }

    #[test]
    fn an_edit_without_flags_says_what_to_give() {
        let error = update_request("job1".into(), Edit::default()).unwrap_err();
        assert!(
            error
                .message
                .starts_with("nothing to change; give at least one of --schedule")
        );
        assert!(error.message.contains("--no-toolsets"));
        assert_eq!(error.code, 1);
    }

    #[test]
    fn workdir_is_made_absolute_and_empty_clears_it() {
        let dir = absolute_dir(Path::new("reports")).unwrap();
        assert!(Path::new(&dir).is_absolute() && dir.ends_with("reports"));
        assert_eq!(absolute_dir(Path::new("")).unwrap(), "");
    }
}
