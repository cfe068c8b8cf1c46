//! `hermesctl cron add|list|show|edit|pause|resume|rm|run|runs`: scheduled jobs through the
//! daemon's Cron service. Requests are built in `cron_request.rs`, texts in `cron_text.rs`, and
//! JSON and tables in `cron_show.rs`.

use hermes_proto::pb;
use serde_json::{Value, json};

use super::{
    cron_request::{self as request, Edit},
    cron_show as show,
    cron_text::{self as text, now_seconds},
};
use crate::{cli::CronCommand, connection, context::Context, error::CliError, output};

/// How many runs `cron show` lists.
const SHOW_RUNS: u32 = 5;

pub async fn run(ctx: &Context, command: CronCommand) -> Result<(), CliError> {
    // Requests are built before connecting: a bad flag fails without starting the daemon.
    match command {
        CronCommand::Add {
            schedule,
            prompt,
            job: args,
        } => {
            let mut job = pb::CronJob {
                schedule,
                prompt: prompt
                    .map(request::prompt_text)
                    .transpose()?
                    .unwrap_or_default(),
                ..Default::default()
            };
            request::apply(&mut job, args)?;
            let daemon = connection::connect(ctx).await?;
            let job = daemon
                .cron()
                .add(pb::AddCronJobRequest { job: Some(job) })
                .await?
                .into_inner()
                .job;
            print_summary(ctx, "added", job)
        }
        CronCommand::List => {
            let daemon = connection::connect(ctx).await?;
            let jobs = daemon
                .cron()
                .list(pb::ListCronJobsRequest {})
                .await?
                .into_inner()
                .jobs;
            if ctx.json {
                output::json(&Value::Array(jobs.iter().map(show::job_json).collect()));
            } else {
                show::print_jobs(&jobs, now_seconds());
            }
            Ok(())
        }
        CronCommand::Show { id } => {
            let daemon = connection::connect(ctx).await?;
            let mut cron = daemon.cron();
            let job = cron
                .get(pb::GetCronJobRequest { id })
                .await?
                .into_inner()
                .job
                .ok_or_else(no_job)?;
            let runs = cron
                .list_runs(pb::ListCronRunsRequest {
                    job_id: job.id.clone(),
                    limit: SHOW_RUNS,
                })
                .await?
                .into_inner()
                .runs;
            if ctx.json {
                output::json(&json!({
                    "job": show::job_json(&job),
                    "runs": runs.iter().map(show::run_json).collect::<Vec<_>>(),
                }));
            } else {
                show::print_job(&job, now_seconds());
                output::line("");
                if runs.is_empty() {
                    output::line("no runs yet");
                } else {
                    output::line("latest runs:");
                    show::print_runs(&runs);
                }
            }
            Ok(())
        }
        CronCommand::Edit {
            id,
            schedule,
            prompt,
            job: args,
            no_skills,
            no_toolsets,
        } => {
            let edit = Edit {
                schedule,
                prompt: prompt.map(request::prompt_text).transpose()?,
                args,
                no_skills,
                no_toolsets,
            };
            let update = request::update_request(id, edit)?;
            let daemon = connection::connect(ctx).await?;
            let job = daemon.cron().update(update).await?.into_inner().job;
            print_summary(ctx, "updated", job)
        }
        CronCommand::Pause { id, reason } => {
            let daemon = connection::connect(ctx).await?;
            let job = daemon
                .cron()
                .pause(pb::PauseCronJobRequest {
                    id,
                    reason: reason.unwrap_or_default(),
                })
                .await?
                .into_inner()
                .job;
            print_summary(ctx, "paused", job)
        }
        CronCommand::Resume { id } => {
            let daemon = connection::connect(ctx).await?;
            let job = daemon
                .cron()
                .resume(pb::ResumeCronJobRequest { id })
                .await?
                .into_inner()
                .job;
            print_summary(ctx, "resumed", job)
        }
        CronCommand::Rm { id } => {
            let daemon = connection::connect(ctx).await?;
            daemon
                .cron()
                .remove(pb::RemoveCronJobRequest { id: id.clone() })
                .await?;
            if ctx.json {
                output::json(&json!({"id": id, "removed": true}));
            } else {
                output::line(format!("removed {id}"));
            }
            Ok(())
        }
        CronCommand::Run { id, wait } => {
            let daemon = connection::connect(ctx).await?;
            // No deadline on this call (see `Daemon::cron`): with `wait` it lasts as long as the run.
            let run = daemon
                .cron()
                .run_now(pb::RunCronJobNowRequest { id, wait })
                .await?
                .into_inner()
                .run
                .ok_or_else(|| CliError::new("hermesd returned no cron run"))?;
            if ctx.json {
                output::json(&show::run_json(&run));
            } else if wait {
                show::print_finished_run(&run);
            } else {
                let session = if run.session_id.is_empty() {
                    String::new()
                } else {
                    format!(" (session {})", run.session_id)
                };
                output::line(format!("started run {} of {}{session}", run.id, run.job_id));
            }
            if wait && run.status != pb::CronRunStatus::Ok as i32 {
                // The outcome is printed above; only the exit code is left to say.
                return Err(CliError::new(String::new()));
            }
            Ok(())
        }
        CronCommand::Runs { id, limit } => {
            let daemon = connection::connect(ctx).await?;
            let runs = daemon
                .cron()
                .list_runs(pb::ListCronRunsRequest {
                    job_id: id.clone(),
                    limit,
                })
                .await?
                .into_inner()
                .runs;
            if ctx.json {
                output::json(&Value::Array(runs.iter().map(show::run_json).collect()));
            } else if runs.is_empty() {
                output::line(format!("no runs of {id} yet"));
            } else {
                show::print_runs(&runs);
            }
            Ok(())
        }
    }
}

fn no_job() -> CliError {
    CliError::new("hermesd returned no cron job")
}

/// One line about a job just added, updated, paused or resumed (or the job as JSON).
fn print_summary(ctx: &Context, verb: &str, job: Option<pb::CronJob>) -> Result<(), CliError> {
    let job = job.ok_or_else(no_job)?;
    if ctx.json {
        output::json(&show::job_json(&job));
    } else {
        output::line(format!(
            "{verb} {}: {}, {}",
            text::label(&job),
            text::schedule_text(&job),
            text::next_run_text(&job, now_seconds())
        ));
    }
    Ok(())
}
