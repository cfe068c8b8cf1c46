//! Cron jobs with a pre-run script, end to end through the real daemon, the fake Bot API and
//! the fake model: the script's output feeds the prompt (`## Script Output`), a `no_agent` job's
//! output is the message with no model call, empty output and `{"wakeAgent": false}` keep the
//! run silent, a failing script is reported, a script that leaves `scripts/` by a symlink is
//! refused, and one that runs too long is stopped.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_telegram::{Chat, FakeTelegram, User},
    home::StopOnDrop,
    telegram_home,
};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(30);

/// `cron add` of an hourly job `name` with `extra` flags.
fn add(name: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["cron", "add", "--schedule", "every 1h", "--name", name]
        .map(String::from)
        .to_vec();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

async fn run(home: &TestHome, name: &str) -> Value {
    let out = home
        .ctl_async(&["--json", "cron", "run", name, "--wait"])
        .await;
    serde_json::from_str(&out.stdout())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", out.stdout(), out.stderr()))
}

fn texts(bot: &FakeTelegram, chat: i64) -> Vec<String> {
    bot.messages(chat).into_iter().map(|m| m.text).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn scripts_feed_the_agent_or_are_the_job() {
    let llm = FakeLlm::start(vec![Reply::text("3 new issues, none urgent")]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    telegram_home::configure(&home, &llm, &bot, "", "TELEGRAM_ALLOWED_USERS=42\n");
    home.write("scripts/collect.py", "print('issues: 3 new')\n");
    home.write(
        "scripts/watch.sh",
        "echo \"disk at 91% on $(basename \"$PWD\")\"\n",
    );
    home.write(
        "scripts/quiet.sh",
        "echo 'checked 4 feeds'\necho '{\"wakeAgent\": false}'\n",
    );
    home.write("scripts/empty.sh", "true\n");
    home.write("scripts/broken.sh", "echo boom >&2\nexit 2\n");
    home.write("elsewhere.sh", "echo outside\n");
    std::os::unix::fs::symlink(
        home.path().join("elsewhere.sh"),
        home.path().join("scripts/escape.sh"),
    )
    .unwrap();
    home.ctl_async(&["status"]).await.ok();
    let _stop = StopOnDrop(&home);
    bot.wait_call("setMyCommands", WAIT).await;
    bot.add_chat(&Chat::private(42));
    let ann = User::new(42, "Ann");
    bot.push_text(&Chat::private(42), &ann, "/sethome");
    bot.wait_message_text(42, |t| t.starts_with("✅ Home channel set"), WAIT)
        .await;

    let to_chat = ["--deliver", "telegram:42"];
    for (name, flags) in [
        (
            "collector",
            vec!["--script", "collect.py", "--prompt", "Summarise the issues"],
        ),
        ("watchdog", vec!["--script", "watch.sh", "--no-agent"]),
        (
            "quiet",
            vec!["--script", "quiet.sh", "--prompt", "never asked"],
        ),
        ("empty", vec!["--script", "empty.sh", "--no-agent"]),
        ("broken", vec!["--script", "broken.sh", "--no-agent"]),
        ("escape", vec!["--script", "escape.sh", "--no-agent"]),
    ] {
        let mut args = add(name, &flags);
        args.extend(to_chat.map(String::from));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        home.ctl_async(&args).await.ok();
    }
    let refused = home
        .ctl_async(&[
            "cron",
            "add",
            "--schedule",
            "every 1h",
            "--script",
            "../x.sh",
            "--no-agent",
        ])
        .await;
    assert!(
        refused
            .stderr()
            .contains("escapes the scripts directory via traversal"),
        "{}",
        refused.stderr()
    );

    // The script's output is context for the agent, whose answer is delivered.
    let collected = run(&home, "collector").await;
    assert_eq!(collected["status"], "ok", "{collected}");
    let asked = llm.chat_requests()[0].body["messages"].to_string();
    assert!(asked.contains("## Script Output"), "{asked}");
    assert!(asked.contains("issues: 3 new"), "{asked}");
    assert!(asked.contains("Summarise the issues"), "{asked}");
    assert!(
        texts(&bot, 42)
            .iter()
            .any(|t| t.contains("3 new issues, none urgent")),
        "{:?}",
        texts(&bot, 42)
    );

    // No agent: the output is the message, run in the scripts directory.
    let watched = run(&home, "watchdog").await;
    assert_eq!(watched["status"], "ok", "{watched}");
    assert_eq!(watched["delivery"], "delivered to telegram:42", "{watched}");
    let record = std::fs::read_to_string(watched["output_path"].as_str().unwrap()).unwrap();
    assert!(
        record.contains("**Script:** watch.sh\n**Mode:** no_agent (script)"),
        "{record}"
    );
    let disk: Vec<String> = texts(&bot, 42)
        .into_iter()
        .filter(|t| t.contains("disk at 91% on scripts"))
        .collect();
    assert_eq!(disk.len(), 1, "{:?}", texts(&bot, 42));

    // Empty output and the wake gate: silent successes, no model call, nothing sent.
    let before = bot.messages(42).len();
    for name in ["quiet", "empty"] {
        let silent = run(&home, name).await;
        assert_eq!(silent["status"], "ok", "{silent}");
        assert!(
            silent["delivery"]
                .as_str()
                .unwrap_or_default()
                .contains("silent"),
            "{silent}"
        );
    }
    assert_eq!(bot.messages(42).len(), before);
    assert_eq!(
        llm.chat_requests().len(),
        1,
        "only the collector asked the model"
    );

    // A failing script is reported, with its exit code and stderr.
    let broken = run(&home, "broken").await;
    assert_eq!(broken["status"], "failed", "{broken}");
    let alert: Vec<String> = texts(&bot, 42)
        .into_iter()
        .filter(|t| t.contains("⚠️ Cron 'broken' failed: Script exited with code 2 stderr: boom"))
        .collect();
    assert_eq!(alert.len(), 1, "{:?}", texts(&bot, 42));

    // A symlink out of scripts/ is refused, and what it points at never runs.
    let escaped = run(&home, "escape").await;
    assert_eq!(escaped["status"], "failed", "{escaped}");
    assert!(
        escaped["error"]
            .as_str()
            .unwrap_or_default()
            .contains("Blocked: script path resolves outside the scripts directory"),
        "{escaped}"
    );
    let sent = texts(&bot, 42);
    assert!(
        sent.iter()
            .any(|t| t.contains("⚠️ Cron 'escape' failed: Blocked")),
        "{sent:?}"
    );
    assert!(
        !sent
            .iter()
            .any(|t| t.lines().any(|l| l.trim() == "outside")),
        "{sent:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_that_runs_too_long_is_stopped() {
    let llm = FakeLlm::start(vec![]).await;
    let home = TestHome::new();
    home.use_fake_model(&llm, "cron:\n  script_timeout_seconds: 1\n");
    home.write("scripts/slow.sh", "echo started\nsleep 60\n");
    home.ctl_async(&["status"]).await.ok();
    let _stop = StopOnDrop(&home);
    home.ctl_async(&[
        "cron",
        "add",
        "--schedule",
        "every 1h",
        "--name",
        "slow",
        "--script",
        "slow.sh",
        "--no-agent",
    ])
    .await
    .ok();
    let slow = run(&home, "slow").await;
    assert_eq!(slow["status"], "failed", "{slow}");
    assert!(
        slow["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Script timed out after 1s:"),
        "{slow}"
    );
}
