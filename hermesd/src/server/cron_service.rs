//! The `Cron` service: jobs and their runs for `hermesctl cron`, the TUI and scripts — through
//! the same operations as the `cronjob` tool (`cron::manage`).

use std::sync::Arc;

use hermes_proto::pb;
use tonic::{Request, Response, Status};

use super::convert::timestamp;
use crate::{
    cron::{CronError, JobSpec, manage},
    state::DaemonState,
    store::{CronJobRow, CronRunRow},
};

#[derive(Debug)]
pub struct CronService {
    pub state: Arc<DaemonState>,
}

fn status(e: CronError) -> Status {
    match e {
        CronError::Invalid(e) => Status::invalid_argument(e.to_string()),
        CronError::NotFound(why) => Status::not_found(why),
        CronError::Busy(why) => Status::failed_precondition(why),
        CronError::Store(e) => Status::internal(e.to_string()),
        CronError::Stopping => Status::unavailable("hermesd is stopping"),
    }
}

fn job_state(state: &str) -> pb::CronJobState {
    match state {
        "scheduled" => pb::CronJobState::Scheduled,
        "paused" => pb::CronJobState::Paused,
        "running" => pb::CronJobState::Running,
        "completed" => pb::CronJobState::Completed,
        _ => pb::CronJobState::Unspecified,
    }
}

fn run_status(status: &str) -> pb::CronRunStatus {
    match status {
        "ok" => pb::CronRunStatus::Ok,
        "failed" => pb::CronRunStatus::Failed,
        "timed_out" => pb::CronRunStatus::TimedOut,
        "missed" => pb::CronRunStatus::Missed,
        "skipped" => pb::CronRunStatus::Skipped,
        "interrupted" => pb::CronRunStatus::Interrupted,
        "running" => pb::CronRunStatus::Running,
        _ => pb::CronRunStatus::Unspecified,
    }
}

fn policy(text: &str) -> pb::MissedRunPolicy {
    match text {
        "skip" => pb::MissedRunPolicy::Skip,
        "once" => pb::MissedRunPolicy::Once,
        "all" => pb::MissedRunPolicy::All,
        _ => pb::MissedRunPolicy::Unspecified,
    }
}

fn policy_text(value: i32) -> String {
    match pb::MissedRunPolicy::try_from(value) {
        Ok(pb::MissedRunPolicy::Once) => "once",
        Ok(pb::MissedRunPolicy::All) => "all",
        Ok(pb::MissedRunPolicy::Skip) => "skip",
        _ => "",
    }
    .into()
}

/// A stored job as the API shows it.
pub fn job(row: CronJobRow) -> pb::CronJob {
    pb::CronJob {
        id: row.id,
        name: row.name,
        prompt: row.prompt,
        schedule: row.schedule,
        timezone: row.timezone,
        skills: row.skills,
        model: row.model,
        enabled_toolsets: row.toolsets,
        workdir: row.workdir,
        deliver: row.deliver,
        repeat_times: u32::try_from(row.repeat_times).unwrap_or(0),
        repeat_completed: u32::try_from(row.repeat_completed).unwrap_or(0),
        state: job_state(&row.state) as i32,
        next_run_at: row.next_run_at.map(timestamp),
        last_run_at: row.last_run_at.map(timestamp),
        last_status: row
            .last_status
            .as_deref()
            .map_or(0, |s| run_status(s) as i32),
        last_error: row.last_error.unwrap_or_default(),
        failure_streak: u32::try_from(row.failure_streak).unwrap_or(0),
        missed_policy: policy(&row.missed_policy) as i32,
        created_at: Some(timestamp(row.created_at)),
        paused_reason: row.paused_reason.unwrap_or_default(),
        script: row.script,
        no_agent: row.no_agent,
        provider: row.provider,
        base_url: row.base_url,
    }
}

/// A run record as the API shows it.
pub fn run(row: CronRunRow) -> pb::CronRun {
    pb::CronRun {
        id: row.id,
        job_id: row.job_id,
        status: run_status(&row.status) as i32,
        started_at: row.started_at.map(timestamp),
        ended_at: row.ended_at.map(timestamp),
        error: row.error.unwrap_or_default(),
        output_path: row.output_path.unwrap_or_default(),
        session_id: row.session_id.unwrap_or_default(),
        delivery: row.delivery.unwrap_or_default(),
    }
}

/// The fields of a job given by a client.
fn spec(job: pb::CronJob) -> JobSpec {
    JobSpec {
        name: job.name,
        prompt: job.prompt,
        schedule: job.schedule,
        timezone: job.timezone,
        skills: job.skills,
        model: job.model,
        toolsets: job.enabled_toolsets,
        workdir: job.workdir,
        deliver: job.deliver,
        repeat_times: i64::from(job.repeat_times),
        missed_policy: policy_text(job.missed_policy),
        origin: None,
        script: job.script,
        no_agent: job.no_agent,
        provider: job.provider,
        base_url: job.base_url,
    }
}

fn required(id: &str) -> Result<&str, Status> {
    let id = id.trim();
    if id.is_empty() {
        return Err(Status::invalid_argument("a job id (or name) is required"));
    }
    Ok(id)
}

#[tonic::async_trait]
impl pb::cron_server::Cron for CronService {
    async fn add(
        &self,
        request: Request<pb::AddCronJobRequest>,
    ) -> Result<Response<pb::AddCronJobResponse>, Status> {
        let given = request.into_inner().job.unwrap_or_default();
        let added = manage::add(&self.state.cron, spec(given))
            .await
            .map_err(status)?;
        Ok(Response::new(pb::AddCronJobResponse {
            job: Some(job(added)),
        }))
    }

    async fn list(
        &self,
        _request: Request<pb::ListCronJobsRequest>,
    ) -> Result<Response<pb::ListCronJobsResponse>, Status> {
        let rows = self
            .state
            .store
            .read(crate::store::cron_jobs)
            .await
            .map_err(super::convert::status)?;
        Ok(Response::new(pb::ListCronJobsResponse {
            jobs: rows.into_iter().map(job).collect(),
        }))
    }

    async fn get(
        &self,
        request: Request<pb::GetCronJobRequest>,
    ) -> Result<Response<pb::GetCronJobResponse>, Status> {
        let req = request.into_inner();
        let row = manage::get(&self.state.store, required(&req.id)?)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::GetCronJobResponse {
            job: Some(job(row)),
        }))
    }

    async fn update(
        &self,
        request: Request<pb::UpdateCronJobRequest>,
    ) -> Result<Response<pb::UpdateCronJobResponse>, Status> {
        let req = request.into_inner();
        let given = req.job.unwrap_or_default();
        let id = required(&given.id)?.to_string();
        let edited = manage::edit(&self.state.cron, &id, spec(given), req.fields)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::UpdateCronJobResponse {
            job: Some(job(edited)),
        }))
    }

    async fn pause(
        &self,
        request: Request<pb::PauseCronJobRequest>,
    ) -> Result<Response<pb::PauseCronJobResponse>, Status> {
        let req = request.into_inner();
        let paused = manage::pause(&self.state.cron, required(&req.id)?, &req.reason)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::PauseCronJobResponse {
            job: Some(job(paused)),
        }))
    }

    async fn resume(
        &self,
        request: Request<pb::ResumeCronJobRequest>,
    ) -> Result<Response<pb::ResumeCronJobResponse>, Status> {
        let req = request.into_inner();
        let resumed = manage::resume(&self.state.cron, required(&req.id)?)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::ResumeCronJobResponse {
            job: Some(job(resumed)),
        }))
    }

    async fn remove(
        &self,
        request: Request<pb::RemoveCronJobRequest>,
    ) -> Result<Response<pb::RemoveCronJobResponse>, Status> {
        let req = request.into_inner();
        manage::remove(&self.state.cron, required(&req.id)?)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::RemoveCronJobResponse {}))
    }

    async fn run_now(
        &self,
        request: Request<pb::RunCronJobNowRequest>,
    ) -> Result<Response<pb::RunCronJobNowResponse>, Status> {
        let req = request.into_inner();
        let started = manage::run_now(&self.state.cron, required(&req.id)?, req.wait)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::RunCronJobNowResponse {
            run: Some(run(started)),
        }))
    }

    async fn list_runs(
        &self,
        request: Request<pb::ListCronRunsRequest>,
    ) -> Result<Response<pb::ListCronRunsResponse>, Status> {
        let req = request.into_inner();
        let rows = manage::runs(&self.state.store, required(&req.job_id)?, req.limit)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::ListCronRunsResponse {
            runs: rows.into_iter().map(run).collect(),
        }))
    }
}
