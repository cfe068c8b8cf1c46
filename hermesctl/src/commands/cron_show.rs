//! Printing cron jobs and runs for `hermesctl cron`: JSON documents and aligned tables.

use hermes_proto::pb;
use serde_json::{Value, json};

use super::cron_text::{
    first_line, label, last_text, missed_word, next_run_text, relative, schedule_text, seconds,
    state_word, status_word, took_text,
};
use crate::output;

/// The longest error text a runs table shows (its first line, cut).
const ERROR_WIDTH: usize = 60;

fn or_dash(text: &str) -> &str {
    if text.is_empty() { "-" } else { text }
}

pub fn job_json(job: &pb::CronJob) -> Value {
    json!({
        "id": job.id,
        "name": job.name,
        "prompt": job.prompt,
        "schedule": job.schedule,
        "timezone": job.timezone,
        "skills": job.skills,
        "model": job.model,
        "enabled_toolsets": job.enabled_toolsets,
        "workdir": job.workdir,
        "deliver": job.deliver,
        "repeat_times": job.repeat_times,
        "repeat_completed": job.repeat_completed,
        "state": state_word(job.state),
        "next_run_at": output::timestamp(job.next_run_at.as_ref()),
        "last_run_at": output::timestamp(job.last_run_at.as_ref()),
        "last_status": if job.last_status == pb::CronRunStatus::Unspecified as i32 {
            Value::Null
        } else {
            Value::from(status_word(job.last_status))
        },
        "last_error": job.last_error,
        "failure_streak": job.failure_streak,
        "paused_reason": job.paused_reason,
        "missed_policy": missed_word(job.missed_policy),
        "created_at": output::timestamp(job.created_at.as_ref()),
        "script": (!job.script.is_empty()).then_some(&job.script),
        "no_agent": job.no_agent,
        "provider": (!job.provider.is_empty()).then_some(&job.provider),
        "base_url": (!job.base_url.is_empty()).then_some(&job.base_url),
    })
}

pub fn run_json(run: &pb::CronRun) -> Value {
    json!({
        "id": run.id,
        "job_id": run.job_id,
        "status": status_word(run.status),
        "started_at": output::timestamp(run.started_at.as_ref()),
        "ended_at": output::timestamp(run.ended_at.as_ref()),
        "error": run.error,
        "output_path": run.output_path,
        "session_id": run.session_id,
        "delivery": run.delivery,
    })
}

/// Rows under a header, each column as wide as its widest cell; the last one is not padded.
fn print_table(header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let render = |cells: Vec<&str>| {
        let last = cells.len().saturating_sub(1);
        let mut line = String::new();
        for (i, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            if i == last {
                line.push_str(cell);
            } else {
                let pad = width.saturating_sub(cell.chars().count());
                line.push_str(cell);
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        line.trim_end().to_string()
    };
    output::line(render(header.to_vec()));
    for row in rows {
        output::line(render(row.iter().map(String::as_str).collect()));
    }
}

pub fn print_jobs(jobs: &[pb::CronJob], now: i64) {
    if jobs.is_empty() {
        output::line(
            "no cron jobs; add one with `hermesctl cron add --schedule '0 9 * * *' --prompt '…'`",
        );
        return;
    }
    let rows: Vec<Vec<String>> = jobs
        .iter()
        .map(|job| {
            vec![
                job.id.clone(),
                or_dash(&job.name).to_string(),
                schedule_text(job),
                state_word(job.state).to_string(),
                output::when(job.next_run_at.as_ref()),
                last_text(job, now),
            ]
        })
        .collect();
    print_table(
        &["ID", "NAME", "SCHEDULE", "STATE", "NEXT RUN", "LAST"],
        &rows,
    );
}

pub fn print_runs(runs: &[pb::CronRun]) {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|run| {
            vec![
                run.id.clone(),
                output::when(run.started_at.as_ref()),
                status_word(run.status).to_string(),
                took_text(run),
                or_dash(&run.delivery).to_string(),
                first_line(&run.error, ERROR_WIDTH),
                or_dash(&run.output_path).to_string(),
            ]
        })
        .collect();
    print_table(
        &[
            "RUN", "STARTED", "STATUS", "TOOK", "DELIVERY", "ERROR", "OUTPUT",
        ],
        &rows,
    );
}

/// Every field of a job, one per line, then its prompt in full.
pub fn print_job(job: &pb::CronJob, now: i64) {
    let field = |name: &str, value: &str| output::line(format!("{name:<11} {value}"));
    output::line(format!("job {}", label(job)));
    field("state", state_word(job.state));
    if !job.paused_reason.is_empty() && job.state == pb::CronJobState::Paused as i32 {
        field("paused", &job.paused_reason);
    }
    field("schedule", &schedule_text(job));
    let next = next_run_text(job, now);
    field("next run", next.strip_prefix("next run ").unwrap_or(&next));
    let last = match seconds(job.last_run_at.as_ref()) {
        Some(at) => format!(
            "{} ({}): {}",
            output::when(job.last_run_at.as_ref()),
            relative(at, now),
            status_word(job.last_status)
        ),
        None => "never".into(),
    };
    field("last run", &last);
    let repeat = if job.repeat_times == 0 {
        "forever".into()
    } else {
        format!("{} of {}", job.repeat_completed, job.repeat_times)
    };
    field("repeat", &repeat);
    field("missed", missed_word(job.missed_policy));
    field("failures", &format!("{} in a row", job.failure_streak));
    if !job.last_error.is_empty() {
        let mut lines = job.last_error.trim().lines();
        field("last error", lines.next().unwrap_or_default());
        for line in lines {
            field("", line);
        }
    }
    field("deliver", default_if_empty(&job.deliver));
    field("model", default_if_empty(&job.model));
    if !job.provider.is_empty() || !job.base_url.is_empty() {
        field("provider", default_if_empty(&job.provider));
        field("server", default_if_empty(&job.base_url));
    }
    if !job.script.is_empty() {
        let mode = if job.no_agent {
            " (no agent: its output is the message)"
        } else {
            " (its output feeds the prompt)"
        };
        field("script", &format!("{}{mode}", job.script));
    }
    field("skills", &list_or(&job.skills, "none"));
    field("toolsets", &list_or(&job.enabled_toolsets, "(default)"));
    field("workdir", default_if_empty(&job.workdir));
    field("created", &output::when(job.created_at.as_ref()));
    output::line("prompt:");
    for line in job.prompt.lines() {
        output::line(format!("  {line}"));
    }
}

fn default_if_empty(text: &str) -> &str {
    if text.is_empty() { "(default)" } else { text }
}

fn list_or(items: &[String], empty: &str) -> String {
    if items.is_empty() {
        empty.into()
    } else {
        items.join(", ")
    }
}

/// The outcome of a run `cron run --wait` waited for.
pub fn print_finished_run(run: &pb::CronRun) {
    output::line(format!(
        "run {} of {}: {}, took {}",
        run.id,
        run.job_id,
        status_word(run.status),
        took_text(run)
    ));
    let field = |name: &str, value: &str| output::line(format!("{name:<9} {value}"));
    field("delivery", or_dash(&run.delivery));
    field("output", or_dash(&run.output_path));
    if !run.session_id.is_empty() {
        field("session", &run.session_id);
    }
    if !run.error.is_empty() {
        let mut lines = run.error.trim().lines();
        field("error", lines.next().unwrap_or_default());
        for line in lines {
            field("", line);
        }
    }
}
