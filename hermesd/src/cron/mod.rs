//! Scheduled jobs. So far: their schedules (`schedule/`: classic cron in a time zone,
//! intervals, one-shots, and the shapes Python Hermes stores in cron/jobs.json). The store side
//! is `store/cron`; the scheduler, runs and delivery come next (issue 8).

pub mod schedule;
