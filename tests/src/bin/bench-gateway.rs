//! Benchmarks of the Telegram gateway against the fake Bot API and the fake model, both on
//! loopback: the daemon's idle RSS with Telegram connected; its peak RSS while 1,000 messages
//! across 100 private chats are answered, and its RSS once their live sessions are evicted;
//! the delay from an inbound message to the first outbound `sendMessage` and to the first
//! `editMessageText` of its streamed answer (median and p95).
//!
//! `cargo build --release -p hermesd -p hermesctl --bins && cargo build --release -p hermes-tests
//! --bin bench-gateway && target/release/bench-gateway [SCALE]`. SCALE 1 (the default) is the
//! full run: 100 chats × 10 messages and 50 latency samples; SCALE n > 1 multiplies the chats
//! and the samples by n; SCALE 0 is the smoke run CI makes (5 chats × 2 messages, 3 samples).
//!
//! The daemon runs with `poll_timeout: 1` (an idle poll every second, so waits are paced by the
//! polls), `streaming.edit_interval: 0.3` (its minimum), `sessions.evict_after: 1` (idle live
//! sessions go after a second) and no background reviews. Its log level is
//! `info,hermesd=debug,hermesd::=info`: debug for the crate root only, whose one debug line says
//! when the start-up memory was released — the idle RSS is read after that line and two polls.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_telegram::{Call, Chat, FakeTelegram, User},
    home::StopOnDrop,
    report::{Row, print, value_row},
    telegram_home,
};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(300);
/// What the model answers each message of the load (one chunk).
const ANSWER: &str = "noted";
/// The streamed answer of a latency sample, and what its message shows at the end.
const CHUNKS: [&str; 3] = ["a", "b", "c"];
/// `streaming.edit_interval` as `telegram_home::configure` sets it.
const EDIT_INTERVAL: &str = "0.3";
/// Chat (and user) ids of the load's chats and of the latency samples' chats.
const LOAD_CHATS: i64 = 1_000_000;
const SAMPLE_CHATS: i64 = 2_000_000;

struct Scale {
    chats: i64,
    per_chat: usize,
    samples: usize,
}

impl Scale {
    fn from_arg(n: usize) -> Self {
        match n {
            0 => Self {
                chats: 5,
                per_chat: 2,
                samples: 3,
            },
            n => Self {
                chats: 100 * n as i64,
                per_chat: 10,
                samples: 50 * n,
            },
        }
    }
}

fn mib(value: f64) -> String {
    format!("{value:.1} MiB")
}

fn log_says(home: &TestHome, line: &str) -> bool {
    std::fs::read_to_string(home.path().join("logs/hermesd.log"))
        .is_ok_and(|log| log.contains(line))
}

fn is_chat(call: &Call, chat_id: i64) -> bool {
    match call.param("chat_id") {
        Value::Number(n) => n.as_i64() == Some(chat_id),
        Value::String(s) => s.parse::<i64>().ok() == Some(chat_id),
        _ => false,
    }
}

/// When the first call of `method` in `chat_id` at or after `since` arrived.
fn first_call(bot: &FakeTelegram, method: &str, chat_id: i64, since: Instant) -> Instant {
    bot.calls_of(method)
        .into_iter()
        .find(|c| c.at >= since && is_chat(c, chat_id))
        .unwrap_or_else(|| panic!("no {method} in chat {chat_id} after the push"))
        .at
}

/// Waits until chat `chat_id` shows `n` bot messages, all with the text `text`.
async fn wait_answers(bot: &FakeTelegram, chat_id: i64, n: usize, text: &str) {
    let what = format!("{n} answers `{text}` in chat {chat_id}");
    bot.wait_until(&what, WAIT, |view| {
        let messages = view.messages(chat_id);
        (messages.len() == n && messages.iter().all(|m| !m.deleted && m.text == text)).then_some(())
    })
    .await;
}

/// One latency sample: push into `chat` once a long poll waits, wait until its `n`th answer is
/// final; the delays to the first `sendMessage` and `editMessageText` of that answer.
async fn sample(bot: &FakeTelegram, chat_id: i64, n: usize) -> (Duration, Duration) {
    bot.wait_for(|view| view.polling(), WAIT).await;
    let user = User::new(chat_id, "Sam");
    let pushed = Instant::now();
    bot.push_text(&Chat::private(chat_id), &user, "ping");
    wait_answers(bot, chat_id, n, &CHUNKS.concat()).await;
    let sent = first_call(bot, "sendMessage", chat_id, pushed);
    let edited = first_call(bot, "editMessageText", chat_id, pushed);
    (sent - pushed, edited - pushed)
}

#[tokio::main]
async fn main() {
    let scale = Scale::from_arg(
        std::env::args()
            .nth(1)
            .and_then(|a| a.parse().ok())
            .unwrap_or(1),
    );
    let messages = scale.chats as usize * scale.per_chat;
    let llm = FakeLlm::start(Vec::new()).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    // Edits as fast as allowed, idle sessions evicted after a second, no background reviews, and
    // the crate root's debug lines (its start-up memory release) in the log.
    telegram_home::configure(
        &home,
        &llm,
        &bot,
        "sessions:\n  evict_after: 1\n\
         memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n\
         logging:\n  level: \"info,hermesd=debug,hermesd::=info\"\n",
        "TELEGRAM_ALLOW_ALL_USERS=true\n",
    );
    let mut rows = Vec::new();

    // 1. Idle with Telegram connected: the menu is set, two polls came, and once the daemon
    //    said it released its start-up memory, two more (the polls pace the wait).
    home.ctl_async(&["status"]).await.ok();
    bot.wait_call("setMyCommands", WAIT).await;
    bot.wait_polls(2, WAIT).await;
    let mut changes = bot.changes();
    let released = tokio::time::timeout(WAIT, async {
        loop {
            changes.borrow_and_update();
            if log_says(&home, "start-up memory released") {
                return bot.view(|v| v.polls());
            }
            changes.changed().await.expect("the fake Bot API runs");
        }
    })
    .await
    .expect("the daemon logs that it released its start-up memory");
    bot.wait_polls(released + 2, WAIT).await;
    rows.push(value_row(
        "hermesd idle RSS, Telegram connected (start-up memory released, 2 polls later)".into(),
        mib(home.daemon_rss_mib()),
        "< 12 MiB (Python gateway: 94 MiB)",
    ));

    // 2. The load: every chat's messages pushed at once, round by round.
    for _ in 0..messages {
        llm.push(Reply::text(ANSWER));
    }
    let peak_reset = home.reset_daemon_peak();
    let began = Instant::now();
    for round in 0..scale.per_chat {
        for i in 0..scale.chats {
            let id = LOAD_CHATS + i;
            let user = User::new(id, "User");
            bot.push_text(&Chat::private(id), &user, &format!("message {round}"));
        }
    }
    let mut waiting: Vec<i64> = (0..scale.chats).map(|i| LOAD_CHATS + i).collect();
    let per_chat = scale.per_chat;
    bot.wait_until("every chat's answers", WAIT, |view| {
        waiting.retain(|&id| {
            let shown = view.messages(id);
            !(shown.len() == per_chat && shown.iter().all(|m| !m.deleted && m.text == ANSWER))
        });
        waiting.is_empty().then_some(())
    })
    .await;
    let took = began.elapsed();
    let peak = home.daemon_status_mib("VmHWM:");
    let answered_rss = home.daemon_rss_mib();
    let model_calls = llm.chat_requests().len();
    rows.push(value_row(
        format!(
            "{messages} messages across {} chats: all answered (final edit shown)",
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
            "hermesd peak RSS during the load ({})",
            if peak_reset {
                "VmHWM reset before it"
            } else {
                "VmHWM since start"
            }
        ),
        mib(peak),
        "< 40 MiB",
    ));
    rows.push(value_row(
        "hermesd RSS when the last answer shows".into(),
        mib(answered_rss),
        "",
    ));
    // Eviction: hermesctl status until no session is live (its own run time paces the loop).
    let idle_from = Instant::now();
    let mut status_calls = 0;
    loop {
        let status = home.ctl_async(&["status", "--json"]).await.json();
        status_calls += 1;
        if status["live_sessions"] == 0 {
            break;
        }
        assert!(
            idle_from.elapsed() < WAIT,
            "live sessions never evicted: {status}"
        );
    }
    // The release that follows the last eviction is logged; the polls pace the wait for it.
    let mut changes = bot.changes();
    tokio::time::timeout(WAIT, async {
        loop {
            changes.borrow_and_update();
            if log_says(&home, "no live session left: unused memory released") {
                return;
            }
            changes.changed().await.expect("the fake Bot API runs");
        }
    })
    .await
    .expect("the daemon logs that it released unused memory after the last eviction");
    rows.push(value_row(
        format!(
            "hermesd RSS after eviction (evict_after 1 s; 0 live after {:.2} s, {status_calls} status calls; memory released)",
            idle_from.elapsed().as_secs_f64()
        ),
        mib(home.daemon_rss_mib()),
        "< 20 MiB",
    ));

    // 3. Latency, one new chat per sample, each answer final before the next push; then a
    //    second message in the same chat (its session just used, still live).
    let mut first_sent = Vec::new();
    let mut first_edit = Vec::new();
    let mut again_sent = Vec::new();
    let mut again_edit = Vec::new();
    for i in 0..scale.samples {
        let id = SAMPLE_CHATS + i as i64;
        llm.push(Reply::text_chunks(&CHUNKS));
        let (sent, edited) = sample(&bot, id, 1).await;
        first_sent.push(sent);
        first_edit.push(edited);
        llm.push(Reply::text_chunks(&CHUNKS));
        let (sent, edited) = sample(&bot, id, 2).await;
        again_sent.push(sent);
        again_edit.push(edited);
    }
    let n = scale.samples;
    rows.push(Row::with_p95(
        format!("inbound → first sendMessage, new chat ({n} samples)"),
        &mut first_sent,
        "median < 20 ms",
    ));
    rows.push(Row::with_p95(
        format!(
            "inbound → first editMessageText, new chat (edit_interval {EDIT_INTERVAL} s; 3 chunks at once, so it is the final edit)"
        ),
        &mut first_edit,
        "",
    ));
    rows.push(Row::with_p95(
        format!("inbound → first sendMessage, chat with a live session ({n} samples)"),
        &mut again_sent,
        "median < 20 ms",
    ));
    rows.push(Row::with_p95(
        "inbound → first editMessageText, chat with a live session".into(),
        &mut again_edit,
        "",
    ));

    let expected_calls = messages + 2 * scale.samples;
    let model_calls_all = llm.chat_requests().len();
    rows.push(value_row(
        "getUpdates calls in the whole run (poll_timeout 1 s)".into(),
        bot.view(|v| v.polls()).to_string(),
        "",
    ));
    rows.push(value_row(
        format!("model requests: load / whole run (expected {messages} / {expected_calls})"),
        format!("{model_calls} / {model_calls_all}"),
        "",
    ));
    rows.push(value_row(
        "hermesd RSS at the end".into(),
        mib(home.daemon_rss_mib()),
        "",
    ));
    print(
        "Telegram gateway (fake Bot API and fake model on loopback)",
        &rows,
    );
}
