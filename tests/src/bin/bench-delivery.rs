//! Cron delivery benchmark against the real daemon, with the fake Telegram Bot API and the fake
//! model on loopback (issue 19's delivery targets):
//!
//! 1. **A run's end → its message at the Bot API** (target: median < 20 ms). One job with
//!    `deliver: telegram:<chat>` is run with `Cron.RunNow` (waiting for its record), sample after
//!    sample. The run's end is taken as the moment the fake model *received* the run's (only)
//!    model request: the model answers at once, so this is an upper bound that includes the
//!    answer's stream, the end of the turn, the output file, the outbox record and the send; the
//!    run's `ended_at` cannot be used, the record is closed after the delivery. The delivery is
//!    the moment the fake Bot API received the `sendMessage`.
//! 2. **1,000 jobs delivering to 100 chats in one minute** (targets: every message delivered
//!    once, all within 60 s, daemon RSS < 40 MiB). One-shot jobs all due at the same second
//!    (`Cron.Add` over the socket, job `i` delivering to chat `i % 100`), the fake model
//!    answering each run at once; the bench polls the fake Bot API (and, once every message
//!    arrived, the runs' records) with a deadline, sampling the daemon's RSS as it goes, then
//!    counts each job's `Cronjob Response: <name>` messages: missing, duplicated or in the wrong
//!    chat. The daemon's `VmHWM` is reset before the jobs are added, where the kernel allows.
//!
//! `cargo build --release --workspace --bins && target/release/bench-delivery [SIZE]`: SIZE × 10
//! jobs across max(5, SIZE) chats and min(max(SIZE, 3), 20) latency samples; the default, 100,
//! is the full run (1,000 jobs, 100 chats, 20 samples), 1 is the smoke run CI makes (10 jobs, 5
//! chats, 3 samples). It exits 1 after the table when a message is missing or duplicated.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use chrono::{DateTime, TimeDelta, Utc};
use hermes_proto::pb;
use hermes_tests::{
    TestHome,
    daemon::connect,
    fake_llm::{FakeLlm, Reply},
    fake_telegram::{Call, Chat, FakeTelegram},
    home::StopOnDrop,
    report::{Row, print, value_row},
    telegram_home,
};
use serde_json::Value;

const DEFAULT_SIZE: usize = 100;
const WAIT: Duration = Duration::from_secs(300);
/// How often the load's wait looks at the fake Bot API and the daemon's RSS.
const LOOK_EVERY: Duration = Duration::from_millis(20);
/// `cron.max_parallel_jobs` of the run.
const PARALLEL: usize = 8;
/// The chat of the latency samples, and the first chat of the load.
const LATENCY_CHAT: i64 = 3_000_000;
const LOAD_CHATS: i64 = 1_000_000;
/// What the model answers every run.
const ANSWER: &str = "All quiet.";

struct Size {
    jobs: usize,
    chats: usize,
    samples: usize,
}

impl Size {
    fn from_arg(n: usize) -> Self {
        let n = n.max(1);
        Self {
            jobs: 10 * n,
            chats: n.max(5),
            samples: n.clamp(3, 20),
        }
    }
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn chat_of(call: &Call) -> Option<i64> {
    match call.param("chat_id") {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The successful `sendMessage` calls into chats `chats`.
fn sends(bot: &FakeTelegram, chats: std::ops::Range<i64>) -> Vec<Call> {
    bot.calls_of("sendMessage")
        .into_iter()
        .filter(|c| c.status == Some(200) && chat_of(c).is_some_and(|id| chats.contains(&id)))
        .collect()
}

/// The job name a delivered message names (`Cronjob Response: <name>` on its first line).
fn job_named(text: &str) -> Option<&str> {
    text.lines()
        .next()?
        .strip_prefix("Cronjob Response: ")
        .map(str::trim)
}

/// A wall-clock time as the `Instant` it was, given one moment known on both clocks.
fn instant_of(at: DateTime<Utc>, base: (DateTime<Utc>, Instant)) -> Instant {
    let ahead = (at - base.0).to_std().unwrap_or_default();
    base.1 + ahead
}

fn job(name: String, schedule: String, deliver: String) -> pb::AddCronJobRequest {
    pb::AddCronJobRequest {
        job: Some(pb::CronJob {
            name,
            schedule,
            prompt: "Report anything that needs attention.".into(),
            deliver,
            ..pb::CronJob::default()
        }),
    }
}

#[tokio::main]
async fn main() {
    let size = Size::from_arg(
        std::env::args()
            .nth(1)
            .and_then(|a| a.parse().ok())
            .unwrap_or(DEFAULT_SIZE),
    );
    let load_chats = LOAD_CHATS..LOAD_CHATS + size.chats as i64;
    let llm = FakeLlm::start(Vec::new()).await;
    let bot = FakeTelegram::start().await;
    let allowed: Vec<String> = std::iter::once(LATENCY_CHAT)
        .chain(load_chats.clone())
        .map(|id| id.to_string())
        .collect();
    for id in std::iter::once(LATENCY_CHAT).chain(load_chats.clone()) {
        bot.add_chat(&Chat::private(id));
    }
    let home = TestHome::new();
    let stop = StopOnDrop(&home);
    // Deliveries go only to chats the gateway knows: the chats are allowed users' direct chats.
    telegram_home::configure(
        &home,
        &llm,
        &bot,
        &format!(
            "cron: {{max_parallel_jobs: {PARALLEL}}}\n\
             memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n"
        ),
        &format!("TELEGRAM_ALLOWED_USERS={}\n", allowed.join(",")),
    );
    home.ctl_async(&["status"]).await.ok();
    tokio::time::timeout(WAIT, telegram_home::wait_state(&home, "connected"))
        .await
        .expect("the gateway connects to the fake Bot API");
    let mut cron = pb::cron_client::CronClient::new(connect(&home.socket()).await);
    let mut rows = Vec::new();

    // 1. Latency: one job run again and again, each run's record closed before the next.
    let latency_job = cron
        .add(job(
            "latency".into(),
            "every 1h".into(),
            format!("telegram:{LATENCY_CHAT}"),
        ))
        .await
        .expect("add the latency job")
        .into_inner()
        .job
        .expect("the added job");
    let mut to_delivery = Vec::new();
    let mut whole_run = Vec::new();
    for i in 0..size.samples {
        llm.push(Reply::text(ANSWER));
        let asked = Instant::now();
        let run = cron
            .run_now(pb::RunCronJobNowRequest {
                id: latency_job.id.clone(),
                wait: true,
            })
            .await
            .expect("Cron.RunNow")
            .into_inner()
            .run
            .expect("the finished run");
        assert!(
            run.delivery
                .starts_with(&format!("delivered to telegram:{LATENCY_CHAT}")),
            "latency sample {i}: {run:?}"
        );
        let sent = sends(&bot, LATENCY_CHAT..LATENCY_CHAT + 1);
        assert_eq!(sent.len(), i + 1, "one message per run: {sent:?}");
        let delivered = sent[i].at;
        let answered = llm
            .chat_requests()
            .into_iter()
            .map(|r| r.received_at)
            .filter(|&at| at >= asked && at <= delivered)
            .max()
            .expect("the run's model request");
        to_delivery.push(delivered - answered);
        whole_run.push(delivered - asked);
    }
    let n = size.samples;
    rows.push(Row::with_p95(
        format!(
            "run end (its model request at the fake model) → `sendMessage` at the fake Bot API ({n} runs)"
        ),
        &mut to_delivery,
        "median < 20 ms",
    ));
    rows.push(Row::with_p95(
        "`Cron.RunNow` sent → `sendMessage` at the fake Bot API (whole run, model answers at once)"
            .into(),
        &mut whole_run,
        "",
    ));

    // 2. The load: one-shots due at the same second, after the time it takes to add them.
    for _ in 0..size.jobs {
        llm.push(Reply::text(ANSWER));
    }
    let peak_reset = home.reset_daemon_peak();
    let rss_before = home.daemon_status_mib("VmRSS:");
    let base = (Utc::now(), Instant::now());
    let lead = TimeDelta::milliseconds(2_000 + 10 * size.jobs as i64);
    let due_at = DateTime::from_timestamp((base.0 + lead).timestamp() + 1, 0).expect("a time");
    let due = instant_of(due_at, base);
    let schedule = due_at.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let mut ids = BTreeMap::new();
    for i in 0..size.jobs {
        let name = format!("load-{i:05}");
        let chat = LOAD_CHATS + (i % size.chats) as i64;
        let made = cron
            .add(job(
                name.clone(),
                schedule.clone(),
                format!("telegram:{chat}"),
            ))
            .await
            .expect("add a load job")
            .into_inner()
            .job
            .expect("the added job");
        ids.insert(made.id, (name, chat));
    }
    let added = Instant::now();
    let adds_took = added - base.1;
    let mut rss_peak_sampled = home.daemon_status_mib("VmRSS:");
    let db = rusqlite::Connection::open_with_flags(
        home.path().join("hermesd.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open the daemon's database");
    let closed_runs = || -> usize {
        let count: i64 = db
            .query_row(
                "SELECT count(*) FROM cron_runs WHERE job_id <> ?1 AND status <> 'running'",
                [&latency_job.id],
                |r| r.get(0),
            )
            .unwrap_or(0);
        count as usize
    };
    let mut timed_out = false;
    loop {
        rss_peak_sampled = rss_peak_sampled.max(home.daemon_status_mib("VmRSS:"));
        let shown: usize = bot.view(|v| load_chats.clone().map(|id| v.messages(id).len()).sum());
        if shown >= size.jobs && closed_runs() >= size.jobs {
            break;
        }
        if added.elapsed() > WAIT {
            timed_out = true;
            break;
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
    let peak_hwm = home.daemon_status_mib("VmHWM:");
    let rss_after = home.daemon_status_mib("VmRSS:");

    // What arrived: each job's messages, by the name on their first line.
    let mut copies: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut unnamed = 0;
    let mut wrong_text = 0;
    bot.view(|v| {
        for chat in load_chats.clone() {
            for message in v.messages(chat) {
                match job_named(&message.text) {
                    Some(name) => {
                        if !message.text.contains(ANSWER) {
                            wrong_text += 1;
                        }
                        copies.entry(name.to_string()).or_default().push(chat);
                    }
                    None => unnamed += 1,
                }
            }
        }
    });
    let mut missing = Vec::new();
    let mut duplicated = Vec::new();
    let mut wrong_chat = Vec::new();
    for (name, chat) in ids.values() {
        match copies.get(name).map(Vec::as_slice) {
            None | Some([]) => missing.push(name.clone()),
            Some(chats) => {
                if chats.len() > 1 {
                    duplicated.push(format!("{name} ×{} in {chats:?}", chats.len()));
                }
                if chats.iter().any(|c| c != chat) {
                    wrong_chat.push(format!("{name} (for {chat}) in {chats:?}"));
                }
            }
        }
    }
    let unknown: Vec<&String> = copies
        .keys()
        .filter(|name| !ids.values().any(|(n, _)| n == *name))
        .collect();
    let load_sends = sends(&bot, load_chats.clone());
    let failed_sends = bot
        .calls_of("sendMessage")
        .iter()
        .filter(|c| c.status != Some(200))
        .count();
    let delivered_count = load_sends.len();
    let first_sent = load_sends.iter().map(|c| c.at).min();
    let last_sent = load_sends.iter().map(|c| c.at).max();
    let since_due = |at: Option<Instant>| at.map_or("-".to_string(), |at| secs(at - due));
    // The runs' records: when they started and ended, and what they say of the delivery.
    let (runs, ok_runs, said_delivered, first_start, last_end): (i64, i64, i64, i64, i64) = db
        .query_row(
            "SELECT count(*), coalesce(sum(status = 'ok'), 0), \
             coalesce(sum(delivery LIKE 'delivered to telegram:%'), 0), \
             coalesce(min(started_at), 0), coalesce(max(ended_at), 0) \
             FROM cron_runs WHERE job_id <> ?1",
            [&latency_job.id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .expect("read the runs' records");
    let due_ms = due_at.timestamp_millis();
    let model_requests = llm.chat_requests().len();

    let (jobs, chats) = (size.jobs, size.chats);
    rows.push(value_row(
        format!("{jobs} one-shot jobs added over the socket (`Cron.Add`), due at {schedule}"),
        format!(
            "{} ({})",
            secs(adds_took),
            if added <= due {
                format!("done {} before due", secs(due - added))
            } else {
                format!(
                    "done {} after due: the last ran as added",
                    secs(added - due)
                )
            }
        ),
        "",
    ));
    rows.push(value_row(
        format!(
            "first due → last message at the fake Bot API ({jobs} jobs, {chats} chats, max_parallel_jobs {PARALLEL})"
        ),
        format!(
            "{}{}",
            since_due(last_sent),
            if timed_out { " (timed out!)" } else { "" }
        ),
        "< 60 s",
    ));
    rows.push(value_row(
        "first due → first message at the fake Bot API".into(),
        since_due(first_sent),
        "",
    ));
    rows.push(value_row(
        "first due → first run started / last run record closed (records, ms)".into(),
        format!(
            "{:.2} s / {:.2} s",
            (first_start - due_ms) as f64 / 1000.0,
            (last_end - due_ms) as f64 / 1000.0
        ),
        "",
    ));
    rows.push(value_row(
        "messages delivered (successful `sendMessage`s into the load's chats) / expected".into(),
        format!("{delivered_count} / {jobs}"),
        "all",
    ));
    rows.push(value_row(
        "jobs whose message is missing / duplicated / in a wrong chat".into(),
        format!(
            "{} / {} / {}",
            missing.len(),
            duplicated.len(),
            wrong_chat.len()
        ),
        "0 / 0 / 0",
    ));
    rows.push(value_row(
        "messages naming no job / an unknown job / without the answer; failed `sendMessage`s"
            .into(),
        format!(
            "{unnamed} / {} / {wrong_text}; {failed_sends}",
            unknown.len()
        ),
        "0",
    ));
    rows.push(value_row(
        "run records: all / ok / saying `delivered to telegram:…`".into(),
        format!("{runs} / {ok_runs} / {said_delivered}"),
        "",
    ));
    rows.push(value_row(
        format!("model requests in the whole run (expected {})", n + jobs),
        model_requests.to_string(),
        "",
    ));
    rows.push(value_row(
        format!(
            "hermesd peak RSS during the load: the larger of VmHWM ({peak_hwm:.1} MiB{}) and \
             VmRSS sampled every {} ms while the runs went ({rss_peak_sampled:.1} MiB)",
            if peak_reset {
                ", reset before the adds"
            } else {
                ", since start"
            },
            LOOK_EVERY.as_millis(),
        ),
        format!("{:.1} MiB", peak_hwm.max(rss_peak_sampled)),
        "< 40 MiB",
    ));
    rows.push(value_row(
        "hermesd RSS before the adds / after the last delivery".into(),
        format!("{rss_before:.1} MiB / {rss_after:.1} MiB"),
        "",
    ));
    print(
        "Cron delivery to Telegram (fake Bot API and fake model on loopback)",
        &rows,
    );
    let bad = !missing.is_empty() || !duplicated.is_empty() || !wrong_chat.is_empty();
    if bad || timed_out {
        println!();
        for (what, list) in [
            ("missing", &missing),
            ("duplicated", &duplicated),
            ("in a wrong chat", &wrong_chat),
        ] {
            if !list.is_empty() {
                let shown: Vec<&String> = list.iter().take(20).collect();
                println!("{what} ({}): {shown:?}", list.len());
            }
        }
        drop(stop);
        std::process::exit(1);
    }
}
