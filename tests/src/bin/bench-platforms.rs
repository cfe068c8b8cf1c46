//! Benchmarks of the three chat platforms at once — Telegram, Discord and Slack, each against
//! its fake on loopback, with the fake model: the daemon's idle RSS with all three connected;
//! per platform, the delay from an inbound direct message to the first outbound message of its
//! answer and to the first edit of it (median and p95); and per platform, 1,000 messages across
//! 100 chats answered once each, with the daemon's peak RSS during that load (each load starts
//! once the sessions before it were evicted and their memory released). With `BENCH_SMAPS` set,
//! stderr gets the daemon's largest mappings when idle and before and after each load, and the
//! anon/file split of each load's peak (sampled every 10 ms): where the memory is.
//!
//! `cargo build --release -p hermesd -p hermesctl --bins && cargo build --release -p hermes-tests
//! --bin bench-platforms && target/release/bench-platforms [SCALE]`. SCALE 1 (the default) is
//! the full run: 100 chats × 10 messages per platform and 30 latency samples each; SCALE 0 is
//! the smoke run CI makes (3 chats × 2 messages, 3 samples).
//!
//! The daemon runs with `poll_timeout: 1` on Telegram, `streaming.edit_interval: 0.3` (its
//! minimum), `sessions.evict_after: 1`, no background reviews, and Slack's client-side tier
//! pacing off (`platforms.slack.extra.pace_calls: false`; the fake enforces no tiers): with it
//! on, as against Slack itself, a single workspace's `chat.update` is held to 50 a minute, so
//! 1,000 streamed answers there take 20 minutes whatever the daemon does. Discord's REST
//! buckets come from the fake's headers and are obeyed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hermes_tests::{
    TestHome,
    fake_discord::{FakeDiscord, Post, User as DiscordUser},
    fake_llm::{FakeLlm, Reply},
    fake_slack::{FakeSlack, UserMessage},
    fake_telegram::{Chat, FakeTelegram, User},
    home::StopOnDrop,
    report::{Row, print, value_row},
};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(600);
/// What the model answers each message of the load (one chunk).
const ANSWER: &str = "noted";
/// The streamed answer of a latency sample, and what its message shows at the end.
const CHUNKS: [&str; 3] = ["a", "b", "c"];

struct Scale {
    chats: usize,
    per_chat: usize,
    samples: usize,
}

impl Scale {
    fn from_arg(n: usize) -> Self {
        match n {
            0 => Self {
                chats: 3,
                per_chat: 2,
                samples: 3,
            },
            n => Self {
                chats: 100 * n,
                per_chat: 10,
                samples: 30 * n,
            },
        }
    }
}

fn mib(value: f64) -> String {
    format!("{value:.1} MiB")
}

fn log_says(home: &TestHome, line: &str) -> bool {
    log_count(home, line) > 0
}

fn log_count(home: &TestHome, line: &str) -> usize {
    std::fs::read_to_string(home.path().join("logs/hermesd.log"))
        .map(|log| log.matches(line).count())
        .unwrap_or(0)
}

/// Waits until no live session is left and the daemon logged that it released the memory of
/// the work before (`hermesctl status` paces the first wait, Telegram's polls the second).
async fn wait_released(home: &TestHome, fakes: &Fakes) {
    const RELEASED: &str = "no live session left: unused memory released";
    let before = log_count(home, RELEASED);
    let deadline = Instant::now() + WAIT;
    loop {
        let status = home.ctl_async(&["status", "--json"]).await.json();
        if status["live_sessions"] == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "live sessions never evicted: {status}"
        );
    }
    let mut changes = fakes.telegram.changes();
    tokio::time::timeout(WAIT, async {
        loop {
            changes.borrow_and_update();
            if log_count(home, RELEASED) > before {
                return;
            }
            changes.changed().await.expect("the fake Bot API runs");
        }
    })
    .await
    .expect("the daemon logs that it released unused memory after the last eviction");
}

/// The three fakes.
struct Fakes {
    telegram: FakeTelegram,
    discord: FakeDiscord,
    slack: FakeSlack,
}

#[derive(Clone, Copy, Debug)]
enum Platform {
    Telegram,
    Discord,
    Slack,
}

const PLATFORMS: [Platform; 3] = [Platform::Telegram, Platform::Discord, Platform::Slack];

/// A direct chat with one user: its chat id and the user's.
#[derive(Clone)]
struct Place {
    chat: String,
    user: String,
}

impl Platform {
    fn name(self) -> &'static str {
        match self {
            Self::Telegram => "Telegram",
            Self::Discord => "Discord",
            Self::Slack => "Slack",
        }
    }

    /// The send and the edit of a message, as the platform's API names them.
    fn verbs(self) -> (&'static str, &'static str) {
        match self {
            Self::Telegram => ("sendMessage", "editMessageText"),
            Self::Discord => ("POST …/messages", "PATCH …/messages/…"),
            Self::Slack => ("chat.postMessage", "chat.update"),
        }
    }

    /// The direct chat of user number `n` (made on the fake when it needs one).
    fn place(self, fakes: &Fakes, n: usize) -> Place {
        match self {
            Self::Telegram => {
                let id = (1_000_000 + n).to_string();
                Place {
                    chat: id.clone(),
                    user: id,
                }
            }
            Self::Discord => {
                let user = (7_000_000_000u64 + n as u64).to_string();
                let chat = fakes.discord.dm(&DiscordUser::new(&user, "User"));
                Place { chat, user }
            }
            Self::Slack => {
                let user = format!("U{n:08}");
                fakes.slack.add_user(&user, "User");
                Place {
                    chat: format!("D{n:08}"),
                    user,
                }
            }
        }
    }

    fn push(self, fakes: &Fakes, place: &Place, text: &str) {
        match self {
            Self::Telegram => {
                let id: i64 = place.chat.parse().unwrap();
                fakes
                    .telegram
                    .push_text(&Chat::private(id), &User::new(id, "User"), text);
            }
            Self::Discord => {
                let author = DiscordUser::new(&place.user, "User");
                fakes.discord.push(&Post::new(&place.chat, &author, text));
            }
            Self::Slack => {
                fakes
                    .slack
                    .push(&UserMessage::new(&place.chat, &place.user, text));
            }
        }
    }

    /// The texts of the bot's messages in `place`, oldest first.
    fn answers(self, fakes: &Fakes, place: &Place) -> Vec<String> {
        match self {
            Self::Telegram => {
                let id: i64 = place.chat.parse().unwrap();
                fakes.telegram.view(|v| {
                    v.messages(id)
                        .into_iter()
                        .filter(|m| !m.deleted)
                        .map(|m| m.text)
                        .collect()
                })
            }
            Self::Discord => fakes.discord.view(|v| {
                v.messages(&place.chat)
                    .into_iter()
                    .filter(|m| !m.deleted)
                    .map(|m| m.content)
                    .collect()
            }),
            Self::Slack => fakes
                .slack
                .bot_messages(&place.chat)
                .into_iter()
                .map(|m| m.text)
                .collect(),
        }
    }

    /// When the first send and the first edit in `place` at or after `since` arrived.
    fn first_calls(self, fakes: &Fakes, place: &Place, since: Instant) -> (Instant, Instant) {
        let first = |times: Vec<Instant>, what: &str| {
            times
                .into_iter()
                .filter(|at| *at >= since)
                .min()
                .unwrap_or_else(|| panic!("no {what} in {} after the push", place.chat))
        };
        match self {
            Self::Telegram => {
                let times = |method: &str| {
                    fakes
                        .telegram
                        .calls_of(method)
                        .into_iter()
                        .filter(|c| param_is(c.param("chat_id"), &place.chat))
                        .map(|c| c.at)
                        .collect::<Vec<_>>()
                };
                (
                    first(times("sendMessage"), "send"),
                    first(times("editMessageText"), "edit"),
                )
            }
            Self::Discord => {
                let path = format!("/channels/{}/messages", place.chat);
                let times = |method: &str| {
                    fakes
                        .discord
                        .calls_to(method, &path)
                        .into_iter()
                        .map(|c| c.at)
                        .collect::<Vec<_>>()
                };
                (first(times("POST"), "send"), first(times("PATCH"), "edit"))
            }
            Self::Slack => {
                let times = |method: &str| {
                    fakes
                        .slack
                        .calls_of(method)
                        .into_iter()
                        .filter(|c| param_is(&c.params["channel"], &place.chat))
                        .map(|c| c.at)
                        .collect::<Vec<_>>()
                };
                (
                    first(times("chat.postMessage"), "send"),
                    first(times("chat.update"), "edit"),
                )
            }
        }
    }

    /// Waits until every place of `places` shows `n` answers, all with the text `text`.
    async fn wait_answers(self, fakes: &Fakes, places: &[Place], n: usize, text: &str) {
        let what = format!("{n} answers `{text}` in each of {} chats", places.len());
        let mut waiting: Vec<Place> = places.to_vec();
        let mut done = |fakes: &Fakes| {
            waiting.retain(|place| {
                let shown = self.answers(fakes, place);
                !(shown.len() == n && shown.iter().all(|t| t == text))
            });
            waiting.is_empty()
        };
        // Each fake's change counter wakes the check; the three are raced.
        let deadline = Instant::now() + WAIT;
        let mut telegram = fakes.telegram.changes();
        let mut discord = fakes.discord.changes();
        let mut slack = fakes.slack.changes();
        while !done(fakes) {
            assert!(
                Instant::now() < deadline,
                "waited {WAIT:?} in vain for {what}"
            );
            tokio::select! {
                _ = telegram.changed() => {}
                _ = discord.changed() => {}
                _ = slack.changed() => {}
                () = tokio::time::sleep_until(deadline.into()) => {}
            }
        }
    }
}

/// With `BENCH_SMAPS` set: the idle daemon's largest resident mappings, on stderr (where its
/// idle memory is).
fn print_largest_mappings(pid: &str) {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let mut mappings: Vec<(u64, String)> = Vec::new();
    let mut name = String::new();
    for line in smaps.lines() {
        if let Some(kib) = line.strip_prefix("Rss:") {
            let kib: u64 = kib
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .unwrap_or(0);
            mappings.push((kib, name.clone()));
        } else if line
            .split_whitespace()
            .next()
            .is_some_and(|f| f.contains('-'))
        {
            name = line
                .split_whitespace()
                .skip(5)
                .collect::<Vec<_>>()
                .join(" ");
            let range = line
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            if name.is_empty() {
                name = format!("[anon {range}]");
            }
        }
    }
    mappings.sort_by_key(|m| std::cmp::Reverse(m.0));
    for (kib, name) in mappings.iter().take(12) {
        eprintln!("{kib:>8} kB  {name}");
    }
}

/// With `BENCH_SMAPS` set: samples the daemon's `RssAnon` and `RssFile` every 10 ms until
/// `stop` is set and prints, on stderr, what they were when the RSS peaked (where the peak is).
fn sample_peak(
    pid: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let field = |status: &str, name: &str| -> u64 {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        let mut peak = (0, 0, 0);
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let rss = field(&status, "VmRSS:");
            if rss > peak.0 {
                peak = (rss, field(&status, "RssAnon:"), field(&status, "RssFile:"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        eprintln!(
            "peak: VmRSS {} kB = anon {} kB + file {} kB",
            peak.0, peak.1, peak.2
        );
    })
}

/// Whether a JSON parameter (a number or a string) is `id`.
fn param_is(value: &Value, id: &str) -> bool {
    match value {
        Value::Number(n) => n.to_string() == id,
        Value::String(s) => s == id,
        _ => false,
    }
}

/// The configuration and `.env` for all three fakes, everyone allowed.
fn configure(home: &TestHome, llm: &FakeLlm, fakes: &Fakes) {
    home.use_fake_model(
        llm,
        &format!(
            "platforms:\n  telegram:\n    extra:\n      base_url: {}\n      poll_timeout: 1\n\
             \x20 discord:\n    extra:\n      api_base: {}\n\
             \x20 slack:\n    extra:\n      api_base: {}\n      pace_calls: false\n\
             streaming:\n  edit_interval: 0.3\n\
             sessions:\n  evict_after: 1\n\
             memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n\
             logging:\n  level: \"info,hermesd=debug,hermesd::=info\"\n",
            fakes.telegram.base_url(),
            fakes.discord.api_base(),
            fakes.slack.api_base(),
        ),
    );
    let telegram = hermes_tests::telegram_home::unique_token(&fakes.telegram);
    let discord = hermes_tests::discord_home::unique_token(&fakes.discord);
    home.write(
        ".env",
        &format!(
            "TELEGRAM_BOT_TOKEN={telegram}\nTELEGRAM_ALLOW_ALL_USERS=true\n\
             DISCORD_BOT_TOKEN={discord}\nDISCORD_ALLOW_ALL_USERS=true\n\
             SLACK_BOT_TOKEN={}\nSLACK_APP_TOKEN={}\nSLACK_ALLOW_ALL_USERS=true\n",
            fakes.slack.first_team().bot_token,
            fakes.slack.app_token(),
        ),
    );
}

/// Waits until `hermesctl gateway status --json` shows every platform connected (the
/// command's own run time paces the loop).
async fn wait_connected(home: &TestHome) {
    let deadline = Instant::now() + WAIT;
    loop {
        let status = home
            .ctl_async(&["gateway", "status", "--json"])
            .await
            .json();
        let rows = status.as_array().cloned().unwrap_or_default();
        if rows.len() == 3 && rows.iter().all(|r| r["state"] == "connected") {
            return;
        }
        assert!(Instant::now() < deadline, "not all connected: {status}");
    }
}

#[tokio::main]
async fn main() {
    let scale = Scale::from_arg(
        std::env::args()
            .nth(1)
            .and_then(|a| a.parse().ok())
            .unwrap_or(1),
    );
    let llm = FakeLlm::start(Vec::new()).await;
    let fakes = Fakes {
        telegram: FakeTelegram::start().await,
        discord: FakeDiscord::start().await,
        slack: FakeSlack::start().await,
    };
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &llm, &fakes);
    let mut rows = Vec::new();

    // 1. Idle with all three connected, once the daemon said it released its memory a second
    //    time after start-up (20 s later) and two more Telegram polls came (the polls pace the
    //    wait).
    home.ctl_async(&["status"]).await.ok();
    wait_connected(&home).await;
    fakes.discord.wait_ready(WAIT).await;
    let mut changes = fakes.telegram.changes();
    let released = tokio::time::timeout(WAIT, async {
        loop {
            changes.borrow_and_update();
            if log_says(&home, "settled: unused memory released") {
                return fakes.telegram.view(|v| v.polls());
            }
            changes.changed().await.expect("the fake Bot API runs");
        }
    })
    .await
    .expect("the daemon logs that it released its start-up memory");
    fakes.telegram.wait_polls(released + 2, WAIT).await;
    rows.push(value_row(
        "hermesd idle RSS, Telegram + Discord + Slack connected (settled, memory released)".into(),
        mib(home.daemon_rss_mib()),
        "< 14 MiB",
    ));
    if std::env::var_os("BENCH_SMAPS").is_some() {
        print_largest_mappings(&home.daemon_pid());
    }

    // 2. Latency per platform: one new direct chat per sample, each answer final before the
    //    next push.
    for platform in PLATFORMS {
        let (send, edit) = platform.verbs();
        let mut to_send = Vec::new();
        let mut to_edit = Vec::new();
        for i in 0..scale.samples {
            let place = platform.place(&fakes, 500_000 + i);
            llm.push(Reply::text_chunks(&CHUNKS));
            let pushed = Instant::now();
            platform.push(&fakes, &place, "ping");
            platform
                .wait_answers(&fakes, std::slice::from_ref(&place), 1, &CHUNKS.concat())
                .await;
            let (sent, edited) = platform.first_calls(&fakes, &place, pushed);
            to_send.push(sent - pushed);
            to_edit.push(edited - pushed);
        }
        let n = scale.samples;
        let name = platform.name();
        rows.push(Row::with_p95(
            format!("{name}: inbound → first {send}, new chat ({n} samples)"),
            &mut to_send,
            "median < 20 ms",
        ));
        rows.push(Row::with_p95(
            format!("{name}: inbound → first {edit} (3 chunks at once: the final edit)"),
            &mut to_edit,
            "median < 20 ms",
        ));
    }

    // 3. The load, platform by platform: every chat's messages pushed at once, round by round.
    let messages = scale.chats * scale.per_chat;
    for (index, platform) in PLATFORMS.into_iter().enumerate() {
        let places: Vec<Place> = (0..scale.chats)
            .map(|i| platform.place(&fakes, 1_000_000 * (index + 2) + i))
            .collect();
        for _ in 0..messages {
            llm.push(Reply::text(ANSWER));
        }
        wait_released(&home, &fakes).await;
        let before = home.daemon_rss_mib();
        if std::env::var_os("BENCH_SMAPS").is_some() {
            eprintln!("before the {} load ({}):", platform.name(), mib(before));
            print_largest_mappings(&home.daemon_pid());
        }
        let peak_reset = home.reset_daemon_peak();
        let sampling = std::env::var_os("BENCH_SMAPS").map(|_| {
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            (sample_peak(home.daemon_pid(), stop.clone()), stop)
        });
        let began = Instant::now();
        for round in 0..scale.per_chat {
            for place in &places {
                platform.push(&fakes, place, &format!("message {round}"));
            }
        }
        platform
            .wait_answers(&fakes, &places, scale.per_chat, ANSWER)
            .await;
        let took = began.elapsed();
        if let Some((sampler, stop)) = sampling {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            sampler.join().unwrap();
            eprintln!("{} load over:", platform.name());
            print_largest_mappings(&home.daemon_pid());
        }
        let name = platform.name();
        rows.push(value_row(
            format!(
                "{name}: {messages} messages across {} chats, each answered once",
                scale.chats
            ),
            format!(
                "{:.2} s ({:.0} msg/s)",
                took.as_secs_f64(),
                messages as f64 / took.as_secs_f64()
            ),
            "",
        ));
        rows.push(value_row(
            format!(
                "{name}: hermesd peak RSS during its load ({})",
                if peak_reset {
                    "VmHWM reset before it"
                } else {
                    "VmHWM since start"
                }
            ),
            format!(
                "{} (from {})",
                mib(home.daemon_status_mib("VmHWM:")),
                mib(before)
            ),
            "< 48 MiB",
        ));
    }
    let expected = 3 * (messages + scale.samples);
    rows.push(value_row(
        format!("model requests in the whole run (expected {expected})"),
        llm.chat_requests().len().to_string(),
        "",
    ));
    rows.push(value_row(
        "hermesd RSS at the end".into(),
        mib(home.daemon_rss_mib()),
        "",
    ));
    print(
        "Telegram, Discord and Slack at once (fakes and the fake model on loopback)",
        &rows,
    );
}
