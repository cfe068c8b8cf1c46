//! Scheduled jobs: their schedules (`schedule/`), the settings, new jobs and edits (`jobs`), what
//! a due job does (`plan`), the scheduler and its timer (`scheduler`), one run from lease to
//! record (`run`, `script`, `prompt`, `output`, `delivery`), results that wait for their platform
//! (`waiting`), the operations clients and the `cronjob` tool
//! use (`manage`), the daemon's handle (`control`), and Python Hermes' `cron/jobs.json`
//! (`python_jobs`). The rows live in `store/cron`. Cron works through [`Cron`]: the turn runner
//! and its own control, never the daemon's state; the `cronjob` tool reaches it through the
//! narrow handle in `ops`.

pub mod control;
pub mod delivery;
pub mod import;
pub mod jobs;
pub mod manage;
pub mod ops;
pub mod output;
pub mod plan;
pub mod prompt;
pub mod python_jobs;
pub mod retention;
pub mod run;
pub mod schedule;
pub mod scheduler;
pub mod script;
mod tool;
pub mod waiting;

pub use control::Control;
pub use jobs::{JobError, JobSpec};
pub use manage::CronError;

/// What cron works with: the turn runner (store, configuration, hub, tools) to run jobs, and
/// its own control (settings, the scheduler's wake-up, the run permits).
#[derive(Debug)]
pub struct Cron {
    pub runner: std::sync::Arc<crate::agent::TurnRunner>,
    pub control: std::sync::Arc<control::Control>,
}
