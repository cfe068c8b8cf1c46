//! Keeping cron's history bounded: after every run, and daily for every job, runs beyond the
//! newest `cron.keep_runs` of a job or older than `cron.keep_days` are deleted with their
//! sessions and output files. Removing a job removes all of its runs that way.

use super::Cron;
use std::{path::Path, sync::Arc, time::Duration};

use crate::store::{self, StoreError};

/// How often every job's runs are checked against the age bound.
const SWEEP_EVERY: Duration = Duration::from_secs(24 * 3600);

/// Why a pruned run's turn would be interrupted (it never runs: running runs are not pruned).
const PRUNED: &str = "the cron run was pruned";

/// What to prune: one job's runs past the settings, every job's, or all of one job's.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    Job(&'a str),
    AllJobs,
    /// Every run of the job (it is being removed).
    Everything(&'a str),
}

/// Prune runs in `scope`; returns how many runs went.
pub async fn prune(state: &Arc<Cron>, scope: Scope<'_>) -> Result<usize, StoreError> {
    let settings = state.control.settings();
    let cutoff = match settings.keep_days {
        0 => 0,
        days => store::now_ms() - i64::from(days) * 86_400_000,
    };
    let (job, keep, cutoff) = match scope {
        Scope::Job(job) => (Some(job.to_string()), settings.keep_runs, cutoff),
        Scope::AllJobs => (None, settings.keep_runs, cutoff),
        // No count bound, and every run ended before the far future: all of them.
        Scope::Everything(job) => (Some(job.to_string()), 0, i64::MAX),
    };
    let pruned = state
        .runner
        .store
        .write(move |tx| store::prune_cron_runs(tx, job.as_deref(), keep, cutoff))
        .await?;
    if pruned.is_empty() {
        return Ok(0);
    }
    let sessions: Vec<String> = pruned.iter().filter_map(|r| r.session_id.clone()).collect();
    crate::agent::ending::delete_conversations(&state.runner, sessions, PRUNED).await?;
    let home = state.runner.home.dir.clone();
    let files: Vec<String> = pruned
        .iter()
        .filter_map(|r| r.output_path.clone())
        .collect();
    let count = pruned.len();
    let _ = tokio::task::spawn_blocking(move || remove_outputs(&home, &files)).await;
    tracing::info!(
        runs = count,
        "old cron runs pruned with their sessions and outputs"
    );
    Ok(count)
}

/// Remove run output files, only ever inside `$HERMES_HOME/cron/output`.
fn remove_outputs(home: &Path, files: &[String]) {
    let root = home.join("cron").join("output");
    for file in files {
        let path = Path::new(file);
        let inside = path.starts_with(&root)
            && path
                .components()
                .all(|c| !matches!(c, std::path::Component::ParentDir));
        if !inside {
            tracing::warn!(path = %file, "a cron output outside cron/output was not removed");
            continue;
        }
        match std::fs::remove_file(path) {
            Ok(()) => {
                // The job's directory goes when its last output does.
                if let Some(dir) = path.parent() {
                    let _ = std::fs::remove_dir(dir);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(path = %file, error = %e, "cannot remove a cron output"),
        }
    }
}

/// Check every job's runs against the bounds once a day, until the daemon stops.
pub async fn sweep(state: Arc<Cron>) {
    loop {
        if let Err(e) = prune(&state, Scope::AllJobs).await {
            tracing::warn!(error = %e, "cannot prune old cron runs");
        }
        tokio::select! {
            () = state.runner.shutdown.cancelled() => return,
            () = tokio::time::sleep(SWEEP_EVERY) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_inside_the_output_directory_are_removed() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("cron/output/job1");
        std::fs::create_dir_all(&dir).unwrap();
        let inside = dir.join("2026-12-01_09-00-00.md");
        std::fs::write(&inside, "x").unwrap();
        let outside = home.path().join("config.yaml");
        std::fs::write(&outside, "x").unwrap();
        let sneaky = format!("{}/cron/output/../../config.yaml", home.path().display());
        remove_outputs(
            home.path(),
            &[
                inside.display().to_string(),
                outside.display().to_string(),
                sneaky,
            ],
        );
        assert!(
            !inside.exists() && !dir.exists(),
            "the output and its empty directory went"
        );
        assert!(outside.exists(), "nothing outside cron/output is touched");
    }
}
