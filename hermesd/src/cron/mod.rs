//! Scheduled jobs. So far: their schedules (`schedule/`: classic cron in a time zone,
//! intervals, one-shots, and the shapes Python Hermes stores) and the reader of Python Hermes'
//! cron/jobs.json (`python_jobs.rs`). The store side is `store/cron`; the scheduler, runs,
//! delivery and the Cron service come next (issue 8).

pub mod python_jobs;
pub mod schedule;
