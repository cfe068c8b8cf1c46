//! The words and short texts of `hermesctl cron`: enum words, relative times, durations.

use hermes_proto::pb;

use crate::output;

/// Seconds since the epoch, now.
pub fn now_seconds() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Lower-case word for a job state, as `--json` prints enums.
pub fn state_word(state: i32) -> &'static str {
    match pb::CronJobState::try_from(state).unwrap_or(pb::CronJobState::Unspecified) {
        pb::CronJobState::Unspecified => "unknown",
        pb::CronJobState::Scheduled => "scheduled",
        pb::CronJobState::Paused => "paused",
        pb::CronJobState::Running => "running",
        pb::CronJobState::Completed => "completed",
    }
}

/// Lower-case word for a run status (`unknown` for none).
pub fn status_word(status: i32) -> &'static str {
    match pb::CronRunStatus::try_from(status).unwrap_or(pb::CronRunStatus::Unspecified) {
        pb::CronRunStatus::Unspecified => "unknown",
        pb::CronRunStatus::Ok => "ok",
        pb::CronRunStatus::Failed => "failed",
        pb::CronRunStatus::TimedOut => "timed_out",
        pb::CronRunStatus::Missed => "missed",
        pb::CronRunStatus::Skipped => "skipped",
        pb::CronRunStatus::Interrupted => "interrupted",
        pb::CronRunStatus::Running => "running",
    }
}

/// Lower-case word for a missed-run policy (`default` when the job names none).
pub fn missed_word(policy: i32) -> &'static str {
    match pb::MissedRunPolicy::try_from(policy).unwrap_or(pb::MissedRunPolicy::Unspecified) {
        pb::MissedRunPolicy::Unspecified => "default",
        pb::MissedRunPolicy::Skip => "skip",
        pb::MissedRunPolicy::Once => "once",
        pb::MissedRunPolicy::All => "all",
    }
}

/// A length of time in its two largest units: `45s`, `5m 30s`, `17h 3m`, `3d 4h`, `2h`.
pub fn span(seconds: u64) -> String {
    let (big, small, units) = if seconds < 60 {
        return format!("{seconds}s");
    } else if seconds < 3_600 {
        (seconds / 60, seconds % 60, ("m", "s"))
    } else if seconds < 86_400 {
        (seconds / 3_600, seconds % 3_600 / 60, ("h", "m"))
    } else {
        (seconds / 86_400, seconds % 86_400 / 3_600, ("d", "h"))
    };
    if small == 0 {
        format!("{big}{}", units.0)
    } else {
        format!("{big}{} {small}{}", units.0, units.1)
    }
}

/// `in 17h 3m`, `2h ago`, or `now`: `at` seen from `now` (both seconds since the epoch).
pub fn relative(at: i64, now: i64) -> String {
    let distance = at.abs_diff(now);
    if distance == 0 {
        "now".into()
    } else if at > now {
        format!("in {}", span(distance))
    } else {
        format!("{} ago", span(distance))
    }
}

pub fn seconds(ts: Option<&prost_types::Timestamp>) -> Option<i64> {
    ts.map(|t| t.seconds)
}

/// `<id> "<name>"`, or the id alone for a job without a name.
pub fn label(job: &pb::CronJob) -> String {
    if job.name.is_empty() {
        job.id.clone()
    } else {
        format!("{} \"{}\"", job.id, job.name)
    }
}

/// The schedule as written, with its time zone when the job has one.
pub fn schedule_text(job: &pb::CronJob) -> String {
    if job.timezone.is_empty() {
        job.schedule.clone()
    } else {
        format!("{} ({})", job.schedule, job.timezone)
    }
}

/// `next run 2026-05-02 09:00 (in 17h 3m)`, or why there is none.
pub fn next_run_text(job: &pb::CronJob, now: i64) -> String {
    match seconds(job.next_run_at.as_ref()) {
        Some(at) => format!(
            "next run {} ({})",
            output::when(job.next_run_at.as_ref()),
            relative(at, now)
        ),
        None => match pb::CronJobState::try_from(job.state) {
            Ok(pb::CronJobState::Paused) => "paused, no next run".into(),
            Ok(pb::CronJobState::Completed) => "completed, no next run".into(),
            _ => "no next run".into(),
        },
    }
}

/// `ok 2h ago`, `failed 5m ago`, or `-` for a job that never ran.
pub fn last_text(job: &pb::CronJob, now: i64) -> String {
    let status = job.last_status != pb::CronRunStatus::Unspecified as i32;
    match (status, seconds(job.last_run_at.as_ref())) {
        (true, Some(at)) => format!("{} {}", status_word(job.last_status), relative(at, now)),
        (true, None) => status_word(job.last_status).into(),
        (false, Some(at)) => relative(at, now),
        (false, None) => "-".into(),
    }
}

/// `1m 23s`, `<1s`, or `-` for a run that has not ended.
pub fn took_text(run: &pb::CronRun) -> String {
    let (Some(start), Some(end)) = (run.started_at.as_ref(), run.ended_at.as_ref()) else {
        return "-".into();
    };
    if run.status == pb::CronRunStatus::Running as i32 {
        return "-".into();
    }
    let millis = (end.seconds - start.seconds)
        .saturating_mul(1_000)
        .saturating_add(i64::from(end.nanos - start.nanos) / 1_000_000);
    if millis < 1_000 {
        "<1s".into()
    } else {
        span(u64::try_from(millis / 1_000).unwrap_or(0))
    }
}

/// The first line of `text`, at most `width` characters (`…` marks a cut); `-` when empty.
pub fn first_line(text: &str, width: usize) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    if line.is_empty() {
        return "-".into();
    }
    let cut = text.trim().lines().nth(1).is_some() || line.chars().count() > width;
    if cut {
        let kept: String = line.chars().take(width.saturating_sub(1)).collect();
        format!("{}…", kept.trim_end())
    } else {
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::*;
    use crate::cli::MissedPolicyArg;

    #[test]
    fn spans_keep_the_two_largest_units() {
        assert_eq!(span(0), "0s");
        assert_eq!(span(45), "45s");
        assert_eq!(span(60), "1m");
        assert_eq!(span(330), "5m 30s");
        assert_eq!(span(7_200), "2h");
        assert_eq!(span(17 * 3_600 + 3 * 60 + 59), "17h 3m");
        assert_eq!(span(3 * 86_400 + 4 * 3_600 + 5), "3d 4h");
    }

    #[test]
    fn relative_times_read_forward_and_back() {
        let now = 1_800_000_000;
        assert_eq!(relative(now + 17 * 3_600 + 3 * 60, now), "in 17h 3m");
        assert_eq!(relative(now - 2 * 3_600, now), "2h ago");
        assert_eq!(relative(now - 300, now), "5m ago");
        assert_eq!(relative(now, now), "now");
    }

    #[test]
    fn enums_have_their_words() {
        assert_eq!(state_word(pb::CronJobState::Scheduled as i32), "scheduled");
        assert_eq!(state_word(pb::CronJobState::Paused as i32), "paused");
        assert_eq!(state_word(pb::CronJobState::Running as i32), "running");
        assert_eq!(state_word(pb::CronJobState::Completed as i32), "completed");
        assert_eq!(state_word(99), "unknown");
        let statuses = [
            (pb::CronRunStatus::Ok, "ok"),
            (pb::CronRunStatus::Failed, "failed"),
            (pb::CronRunStatus::TimedOut, "timed_out"),
            (pb::CronRunStatus::Missed, "missed"),
            (pb::CronRunStatus::Skipped, "skipped"),
            (pb::CronRunStatus::Interrupted, "interrupted"),
            (pb::CronRunStatus::Running, "running"),
        ];
        for (status, word) in statuses {
            assert_eq!(status_word(status as i32), word);
        }
        assert_eq!(missed_word(0), "default");
        // The words of --missed are the words printed back.
        for arg in MissedPolicyArg::value_variants() {
            let policy = crate::commands::cron_request::missed_policy(*arg) as i32;
            let word = arg.to_possible_value().map(|v| v.get_name().to_string());
            assert_eq!(Some(missed_word(policy).to_string()), word);
        }
    }

    #[test]
    fn last_result_and_duration_texts() {
        let now = 1_800_000_000;
        let at = |seconds| Some(prost_types::Timestamp { seconds, nanos: 0 });
        let mut job = pb::CronJob::default();
        assert_eq!(last_text(&job, now), "-");
        job.last_status = pb::CronRunStatus::Failed as i32;
        job.last_run_at = at(now - 300);
        assert_eq!(last_text(&job, now), "failed 5m ago");
        assert_eq!(next_run_text(&job, now), "no next run");
        job.state = pb::CronJobState::Paused as i32;
        assert_eq!(next_run_text(&job, now), "paused, no next run");

        let mut run = pb::CronRun {
            status: pb::CronRunStatus::Ok as i32,
            started_at: at(now),
            ended_at: at(now + 83),
            ..Default::default()
        };
        assert_eq!(took_text(&run), "1m 23s");
        run.ended_at = None;
        assert_eq!(took_text(&run), "-");
    }

    #[test]
    fn errors_are_cut_to_their_first_line() {
        assert_eq!(first_line("", 60), "-");
        assert_eq!(first_line("boom", 60), "boom");
        assert_eq!(first_line("boom\ntrace", 60), "boom…");
        assert_eq!(
            first_line(&"x".repeat(80), 10),
            format!("{}…", "x".repeat(9))
        );
    }
}
