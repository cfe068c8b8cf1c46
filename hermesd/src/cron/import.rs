//! `hermesctl import hermes` for cron: the jobs of a Python Hermes `cron/jobs.json` that are not
//! here yet (by id), scheduled from now on — slots that passed while Python Hermes owned them
//! are not reported as missed here.

use super::Cron;
use std::path::Path;

use chrono::Utc;

use super::{jobs::next_run_of, python_jobs};
use crate::store::{self, StoreError};

/// What an import of jobs did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ImportedJobs {
    pub added: usize,
    /// Already here (imported before).
    pub existing: usize,
    /// Jobs the file has that could not be read: (id, why).
    pub unreadable: Vec<(String, String)>,
}

/// Import the jobs of `<home>/cron/jobs.json`; a home without one has none to import.
pub async fn import_jobs(state: &Cron, home: &Path) -> Result<ImportedJobs, String> {
    let path = home.join("cron").join("jobs.json");
    let text = match tokio::fs::read_to_string(&path).await {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ImportedJobs::default()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let read = python_jobs::read(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let settings = state.control.settings();
    let now = Utc::now().timestamp_millis();
    let mut jobs = read.jobs;
    for job in &mut jobs {
        if job.state == "scheduled" {
            job.next_run_at = next_run_of(job, now, &settings);
            if job.next_run_at.is_none() {
                job.state = "completed".into();
            }
        }
    }
    let (added, existing) = state
        .runner
        .store
        .write(move |tx| {
            let (mut added, mut existing) = (0, 0);
            for job in &jobs {
                match store::cron_job(tx, &job.id) {
                    Ok(found) if found.id == job.id => existing += 1,
                    _ => {
                        store::insert_cron_job(tx, job)?;
                        added += 1;
                    }
                }
            }
            Ok::<_, StoreError>((added, existing))
        })
        .await
        .map_err(|e| format!("cannot store the imported cron jobs: {e}"))?;
    for (id, why) in &read.unreadable {
        tracing::warn!(job = %id, reason = %why, "Python Hermes cron job not imported");
    }
    if added > 0 {
        state.control.changed();
    }
    Ok(ImportedJobs {
        added,
        existing,
        unreadable: read.unreadable,
    })
}
