//! New jobs, edits and resumes: what is accepted, what is refused and with what words.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::config::settings::Zone;
use chrono::{TimeZone, Utc};

use super::*;

fn settings() -> CronSection {
    CronSection {
        timezone: Zone::utc(),
        ..CronSection::default()
    }
}

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 16, 0, 20).unwrap()
}

fn spec(schedule: &str) -> JobSpec {
    JobSpec {
        prompt: "Summarise the news\nand more".into(),
        schedule: schedule.into(),
        ..JobSpec::default()
    }
}

#[test]
fn a_cron_job_gets_its_first_run_in_its_zone() {
    let mut s = spec("0 9 * * *");
    s.timezone = "Asia/Tokyo".into();
    let job = new_job(&s, "j1".into(), now(), &settings()).unwrap();
    // 09:00 in Tokyo is 00:00 UTC.
    assert_eq!(
        job.next_run_at,
        Some(
            Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0)
                .unwrap()
                .timestamp_millis()
        )
    );
    assert_eq!(job.name, "Summarise the news");
    assert_eq!(job.deliver, "local");
    assert_eq!(job.missed_policy, "skip");
    assert_eq!(job.state, "scheduled");
}

#[test]
fn a_one_shot_repeats_once_and_runs_on_the_second() {
    let job = new_job(&spec("in 30m"), "j2".into(), now(), &settings()).unwrap();
    assert_eq!(job.repeat_times, 1);
    assert_eq!(job.next_run_at.unwrap() % 1000, 0);
    assert!(
        job.schedule.starts_with("once at 2026-11-30T16:30:2"),
        "{}",
        job.schedule
    );
}

#[test]
fn intervals_lie_on_the_creation_grid() {
    let job = new_job(&spec("every 30m"), "j3".into(), now(), &settings()).unwrap();
    let created = now().timestamp_millis();
    assert_eq!(job.next_run_at, Some(created + 30 * 60_000));
    assert_eq!(
        next_run_of(&job, created + 61 * 60_000, &settings()),
        Some(created + 90 * 60_000)
    );
}

#[test]
fn bad_input_is_refused_with_what_was_wrong() {
    let err = |s: JobSpec| new_job(&s, "x".into(), now(), &settings()).unwrap_err().0;
    assert!(
        err(spec("every 10s")).contains("minute"),
        "{}",
        err(spec("every 10s"))
    );
    assert!(
        err(spec("61 * * * *")).contains("e.g.") || err(spec("61 * * * *")).contains("example")
    );
    assert!(err(spec("")).contains("schedule is required"));
    let mut s = spec("every 1h");
    s.prompt = "  ".into();
    assert!(err(s).contains("prompt is required"));
    let mut s = spec("every 1h");
    s.timezone = "Nowhere/Land".into();
    assert!(err(s).contains("unknown time zone"));
    let mut s = spec("every 1h");
    s.deliver = "myspace:42".into();
    assert!(err(s).contains("unknown delivery target"));
    let mut s = spec("every 1h");
    s.workdir = "relative/dir".into();
    assert!(err(s).contains("absolute"));
    let mut s = spec("every 1h");
    s.missed_policy = "sometimes".into();
    assert!(err(s).contains("skip, once or all"));
}

#[test]
fn delivery_targets_are_normalised() {
    assert_eq!(check_deliver("", true).unwrap(), "origin");
    assert_eq!(
        check_deliver("Telegram:123", false).unwrap(),
        "telegram:123"
    );
    assert_eq!(check_deliver("discord", false).unwrap(), "discord");
    assert!(check_deliver("telegram:", false).is_err());
    assert_eq!(
        check_deliver("origin, Telegram:-100:17,origin", true).unwrap(),
        "origin,telegram:-100:17"
    );
    assert!(check_deliver("origin,nowhere", true).is_err());
}

#[test]
fn an_edit_changes_only_the_named_fields() {
    let mut job = new_job(&spec("every 1h"), "j4".into(), now(), &settings()).unwrap();
    let before = job.clone();
    let change = JobSpec {
        prompt: "new prompt".into(),
        name: "ignored".into(),
        ..JobSpec::default()
    };
    apply_edit(&mut job, &change, &["prompt".into()], now(), &settings()).unwrap();
    assert_eq!(job.prompt, "new prompt");
    assert_eq!(job.name, before.name);
    assert_eq!(job.next_run_at, before.next_run_at);
    let err = apply_edit(&mut job, &change, &[], now(), &settings()).unwrap_err();
    assert!(err.0.contains("nothing to change"));
    let err = apply_edit(&mut job, &change, &["id".into()], now(), &settings()).unwrap_err();
    assert!(err.0.contains("cannot edit"));
}

#[test]
fn a_new_schedule_revives_a_completed_one_shot() {
    let mut job = new_job(&spec("in 5m"), "j5".into(), now(), &settings()).unwrap();
    job.state = "completed".into();
    job.repeat_completed = 1;
    job.next_run_at = None;
    let change = JobSpec {
        schedule: "every 2h".into(),
        ..JobSpec::default()
    };
    apply_edit(&mut job, &change, &["schedule".into()], now(), &settings()).unwrap();
    assert_eq!(job.state, "scheduled");
    assert_eq!(job.repeat_times, 0, "a recurring schedule repeats forever");
    assert!(job.next_run_at.is_some());
}

#[test]
fn resume_skips_what_passed_while_paused() {
    let mut job = new_job(&spec("every 1h"), "j6".into(), now(), &settings()).unwrap();
    job.state = "paused".into();
    let later = now().timestamp_millis() + 5 * 3_600_000 + 60_000;
    resume(&mut job, later, &settings()).unwrap();
    assert_eq!(job.state, "scheduled");
    assert_eq!(
        job.next_run_at,
        Some(now().timestamp_millis() + 6 * 3_600_000)
    );
}

#[test]
fn a_one_shot_for_a_moment_ago_is_due_at_once() {
    let job = new_job(
        &spec("2026-11-30T15:59:50Z"),
        "j7".into(),
        now(),
        &settings(),
    )
    .unwrap();
    assert_eq!(
        job.next_run_at,
        Some(
            Utc.with_ymd_and_hms(2026, 11, 30, 15, 59, 50)
                .unwrap()
                .timestamp_millis()
        )
    );
    let err = new_job(
        &spec("2026-11-30T15:50:00Z"),
        "j8".into(),
        now(),
        &settings(),
    )
    .unwrap_err();
    assert!(err.0.contains("in the past"), "{}", err.0);
}

#[test]
fn an_oversized_prompt_or_name_is_refused() {
    let mut s = spec("every 1h");
    s.prompt = "x".repeat(MAX_PROMPT_BYTES + 1);
    let err = new_job(&s, "j9".into(), now(), &settings()).unwrap_err();
    assert!(err.0.contains("the limit is"), "{}", err.0);
    let mut s = spec("every 1h");
    s.name = "n".repeat(MAX_NAME_CHARS + 1);
    let err = new_job(&s, "j9".into(), now(), &settings()).unwrap_err();
    assert!(err.0.contains("longer than"), "{}", err.0);
}

#[test]
fn scripts_stay_relative_and_no_agent_needs_one() {
    let job = |edit: &dyn Fn(&mut JobSpec)| {
        let mut s = spec("every 1h");
        edit(&mut s);
        new_job(&s, "j".into(), now(), &settings())
    };
    let made = job(&|s| s.script = " collect.py ".into()).unwrap();
    assert_eq!(made.script, "collect.py");
    for (script, wanted) in [
        (
            "/etc/passwd",
            "Script path must be relative to ~/.hermes/scripts/",
        ),
        ("~/x.sh", "Script path must be relative"),
        ("C:x.py", "Script path must be relative"),
        (
            "sub/../../x.sh",
            "escapes the scripts directory via traversal",
        ),
    ] {
        let refused = job(&|s| s.script = script.into()).unwrap_err().0;
        assert!(
            refused.starts_with(wanted) || refused.contains(wanted),
            "{script}: {refused}"
        );
    }
    let refused = job(&|s| s.no_agent = true).unwrap_err().0;
    assert!(
        refused.starts_with("no_agent=True requires a script"),
        "{refused}"
    );
    // A no-agent job needs no prompt, and is named after its script.
    let watchdog = job(&|s| {
        s.no_agent = true;
        s.script = "check.sh".into();
        s.prompt = String::new();
    })
    .unwrap();
    assert_eq!(
        (watchdog.name.as_str(), watchdog.no_agent),
        ("check.sh", true)
    );
}

#[test]
fn a_pinned_server_needs_a_provider_that_may_use_it() {
    let job = |provider: &str, base_url: &str| {
        let mut s = spec("every 1h");
        s.provider = provider.into();
        s.base_url = base_url.into();
        new_job(&s, "j".into(), now(), &settings())
    };
    let local = job("custom", "http://localhost:11434/v1/").unwrap();
    assert_eq!(
        local.base_url, "http://localhost:11434/v1",
        "trailing slash dropped"
    );
    assert!(
        job("", "http://localhost:11434/v1")
            .unwrap_err()
            .0
            .contains("explicit provider")
    );
    // A known provider's key never goes to another host.
    let refused = job("openrouter", "https://evil.example/v1").unwrap_err().0;
    assert!(
        refused.contains("is not openrouter's endpoint"),
        "{refused}"
    );
    assert!(job("openrouter", "https://openrouter.ai/api/v1").is_ok());
    assert!(job("custom", "file:///etc/passwd").is_err());
}
