//! The record of every run on disk: `cron/output/<job_id>/<timestamp>.md` under HERMES_HOME
//! (directories 0700, files 0600), with the job, the prompt, and the response or the error.

use std::{
    io::Write,
    os::unix::fs::{DirBuilderExt, OpenOptionsExt},
    path::{Path, PathBuf},
};

use crate::config::settings::Zone;
use chrono::{DateTime, Utc};

/// What one output file says.
#[derive(Debug, Clone)]
pub struct RunReport<'a> {
    pub job_id: &'a str,
    pub job_name: &'a str,
    pub run_id: &'a str,
    pub schedule: &'a str,
    /// The job's pre-run script (empty: none), and whether it is the whole job.
    pub script: &'a str,
    pub no_agent: bool,
    pub prompt: &'a str,
    pub session_id: &'a str,
    pub started: DateTime<Utc>,
    pub zone: Zone,
    pub status: &'a str,
    pub answer: &'a str,
    pub error: Option<&'a str>,
}

/// A fence longer than any backtick run in `text`.
fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// The Markdown of a run.
pub fn render(report: &RunReport<'_>) -> String {
    let local = report.started.with_timezone(&report.zone);
    let failed = if report.status == "ok" {
        String::new()
    } else {
        format!(" ({})", report.status.to_uppercase())
    };
    let answer = if report.answer.trim().is_empty() {
        "(No response generated)"
    } else {
        report.answer.trim_end()
    };
    let mut out = format!(
        "# Cron Job: {}{failed}\n\n**Job ID:** {}\n**Run ID:** {}\n**Run Time:** {}\n\
         **Schedule:** {}\n{}**Session:** {}\n\n## Prompt\n\n{}\n\n## Response\n\n{answer}\n",
        report.job_name,
        report.job_id,
        report.run_id,
        local.format("%Y-%m-%d %H:%M:%S %Z"),
        report.schedule,
        match (report.script.is_empty(), report.no_agent) {
            (true, _) => String::new(),
            (false, false) => format!("**Script:** {}\n", report.script),
            (false, true) => format!(
                "**Script:** {}\n**Mode:** no_agent (script)\n",
                report.script
            ),
        },
        if report.session_id.is_empty() {
            "-"
        } else {
            report.session_id
        },
        report.prompt.trim_end(),
    );
    if let Some(error) = report.error {
        let fence = fence(error);
        out.push_str(&format!(
            "\n## Error\n\n{fence}text\n{}\n{fence}\n",
            error.trim_end()
        ));
    }
    out
}

/// Write a run's rendered report under `home`; returns its path. The name is the run's local
/// start time; a second run in the same second gets `-2`, `-3`, … (never overwriting).
pub fn write_text(
    home: &Path,
    job_id: &str,
    started: DateTime<Zone>,
    text: &str,
) -> Result<PathBuf, String> {
    let dir = home.join("cron").join("output").join(job_id);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stamp = started.format("%Y-%m-%d_%H-%M-%S").to_string();
    for attempt in 1..=100 {
        let name = if attempt == 1 {
            format!("{stamp}.md")
        } else {
            format!("{stamp}-{attempt}.md")
        };
        let path = dir.join(name);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path);
        match file {
            Ok(mut file) => {
                file.write_all(text.as_bytes())
                    .and_then(|()| file.sync_all())
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
        }
    }
    Err(format!("too many runs at {stamp} in {}", dir.display()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use chrono::TimeZone;

    fn report<'a>(status: &'a str, error: Option<&'a str>) -> RunReport<'a> {
        RunReport {
            job_id: "abc123",
            job_name: "news",
            run_id: "run1",
            schedule: "0 9 * * *",
            script: "",
            no_agent: false,
            prompt: "Summarise",
            session_id: "s1",
            started: Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 0).unwrap(),
            zone: crate::config::settings::parse_zone("Europe/Berlin").unwrap(),
            status,
            answer: "",
            error,
        }
    }

    #[test]
    fn failures_say_so_and_show_the_error_fenced() {
        let text = render(&report("failed", Some("boom ``` here")));
        assert!(text.starts_with("# Cron Job: news (FAILED)"), "{text}");
        assert!(
            text.contains("**Run Time:** 2026-12-01 09:00:00 CET"),
            "{text}"
        );
        assert!(text.contains("(No response generated)"));
        assert!(text.contains("````text\nboom ``` here\n````"), "{text}");
    }

    #[test]
    fn two_runs_in_one_second_get_two_files_private_to_the_user() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let r = report("ok", None);
        let local = r.started.with_timezone(&r.zone);
        let first = write_text(home.path(), r.job_id, local, &render(&r)).unwrap();
        let second = write_text(home.path(), r.job_id, local, "again").unwrap();
        assert_ne!(first, second);
        assert!(
            first.ends_with("cron/output/abc123/2026-12-01_09-00-00.md"),
            "{first:?}"
        );
        assert!(second.ends_with("2026-12-01_09-00-00-2.md"), "{second:?}");
        let mode = std::fs::metadata(&first).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
