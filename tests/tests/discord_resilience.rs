//! Discord's connection troubles end to end: a heartbeat ACK that never comes (a zombie
//! connection) is noticed and the session resumed with nothing lost or doubled; RECONNECT and
//! INVALID_SESSION are followed; a SIGKILL mid-stream leaves one notice and no rerun; a 429 is
//! waited out for as long as Discord says; a 4004 close is fatal and not retried; `send_message`
//! and cron reach a channel and a thread.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    discord_home::{self, wait_state},
    fake_discord::{FakeDiscord, Fault, Post, User},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};

const WAIT: Duration = Duration::from_secs(30);

fn ann() -> User {
    User::new("4242", "Ann")
}

async fn start(home: &TestHome, llm: &FakeLlm, discord: &FakeDiscord) {
    discord_home::start(home, llm, discord, "", "DISCORD_ALLOWED_USERS=4242\n").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_zombie_connection_is_resumed_with_nothing_lost_or_doubled() {
    let llm = FakeLlm::start(vec![Reply::text("one"), Reply::text("two")]).await;
    let discord = FakeDiscord::start().await;
    discord.set_heartbeat_interval(400);
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let dm = discord.dm(&ann());
    start(&home, &llm, &discord).await;
    discord.push(&Post::new(&dm, &ann(), "first"));
    discord.wait_message(&dm, |t| t == "one", WAIT).await;

    // The connection goes deaf: no ACKs, and the next message waits in the session.
    discord.zombie();
    discord.push(&Post::new(&dm, &ann(), "second"));
    discord.wait_message(&dm, |t| t == "two", WAIT).await;
    let gateway = discord.gateway();
    assert_eq!(
        gateway.identifies, 1,
        "resumed, not identified again: {gateway:?}"
    );
    assert_eq!(gateway.resumes.len(), 1, "{gateway:?}");
    assert!(gateway.resumes[0].0.starts_with("session-"), "{gateway:?}");
    assert_eq!(llm.requests().len(), 2, "each message once");
    assert_eq!(
        llm.user_texts(1),
        ["first", "second"],
        "nothing lost or doubled"
    );
    assert_eq!(discord.messages(&dm).len(), 2);
    let status = wait_state(&home, "discord", "connected").await;
    assert!(status["reconnects"].as_u64().unwrap() >= 1, "{status}");
}

#[tokio::test(flavor = "multi_thread")]
async fn reconnect_resumes_and_an_invalid_session_identifies_afresh() {
    let llm = FakeLlm::start(vec![Reply::text("a"), Reply::text("b")]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let dm = discord.dm(&ann());
    start(&home, &llm, &discord).await;

    discord.reconnect();
    discord
        .wait_until("a resume after RECONNECT", WAIT, |v| {
            let g = v.gateway();
            (g.resumes.len() == 1 && g.live == 1).then_some(())
        })
        .await;
    discord.push(&Post::new(&dm, &ann(), "after reconnect"));
    discord.wait_message(&dm, |t| t == "a", WAIT).await;

    discord.invalidate(false);
    discord
        .wait_until("a new session after INVALID_SESSION", WAIT, |v| {
            let g = v.gateway();
            (g.identifies == 2 && g.live == 1).then_some(())
        })
        .await;
    discord.push(&Post::new(&dm, &ann(), "after invalid session"));
    discord.wait_message(&dm, |t| t == "b", WAIT).await;
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_mid_stream_leaves_one_notice_and_no_rerun() {
    let llm = FakeLlm::start(vec![
        Reply::stall_after_headers(600_000, &["Thinking about", " it"]),
        Reply::text("second answer"),
    ])
    .await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let dm = discord.dm(&ann());
    start(&home, &llm, &discord).await;
    discord.push(&Post::new(&dm, &ann(), "a long one"));
    discord
        .wait_message(&dm, |t| t.starts_with("Thinking"), WAIT)
        .await;
    home.kill_daemon_hard().await;

    home.ctl_async(&["status"]).await.ok();
    discord
        .wait_message(&dm, |t| t.contains("/retry"), WAIT)
        .await;
    discord
        .wait_until("a second session", WAIT, |v| {
            (v.gateway().sessions >= 2).then_some(())
        })
        .await;
    discord.push(&Post::new(&dm, &ann(), "next"));
    discord
        .wait_message(&dm, |t| t == "second answer", WAIT)
        .await;
    let notices = discord
        .messages(&dm)
        .into_iter()
        .filter(|m| m.content.contains("/retry"))
        .count();
    assert_eq!(notices, 1, "{:?}", discord.messages(&dm));
    assert_eq!(llm.requests().len(), 2, "the cut turn was not run again");
    let users = llm.user_texts(1);
    assert_eq!(
        users.iter().filter(|u| *u == "next").count(),
        1,
        "{users:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_429_is_waited_out_for_as_long_as_discord_says() {
    let llm = FakeLlm::start(vec![Reply::text("patience"), Reply::text("again")]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let dm = discord.dm(&ann());
    start(&home, &llm, &discord).await;
    let path = format!("/channels/{dm}/messages");
    discord.fail_next(
        "POST",
        &path,
        Fault::RateLimited {
            retry_after: 1.2,
            global: false,
        },
    );
    discord.push(&Post::new(&dm, &ann(), "hi"));
    discord.wait_message(&dm, |t| t == "patience", WAIT).await;
    let posts = discord.calls_to("POST", &path);
    assert_eq!(posts[0].status, Some(429), "{posts:?}");
    let retried = posts[1].at.duration_since(posts[0].at);
    assert!(
        retried >= Duration::from_millis(1150),
        "retried after {retried:?}"
    );
    assert_eq!(
        discord.violations(),
        0,
        "nothing went while the bucket was blocked"
    );
    assert_eq!(discord.messages(&dm).len(), 1, "one answer");

    // A global limit holds back every route.
    discord.fail_next(
        "POST",
        "/typing",
        Fault::RateLimited {
            retry_after: 0.5,
            global: true,
        },
    );
    discord.push(&Post::new(&dm, &ann(), "again"));
    discord.wait_message(&dm, |t| t == "again", WAIT).await;
    assert_eq!(discord.messages(&dm).len(), 2);
    assert_eq!(
        discord.violations(),
        0,
        "nothing went during the global limit"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn close_code_4004_is_fatal_and_not_retried() {
    let llm = FakeLlm::start(vec![]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let token = discord_home::configure(&home, &llm, &discord, "", "");
    home.ctl_async(&["status"]).await.ok();
    discord.wait_ready(WAIT).await;
    discord.close_with(4004);
    let status = wait_state(&home, "discord", "fatal").await;
    let error = status["last_error"].as_str().unwrap();
    assert!(error.contains("4004"), "{status}");
    assert!(!error.contains(&token));
    let gateway = discord.gateway();
    assert_eq!(
        (gateway.connections, gateway.identifies),
        (1, 1),
        "not retried: {gateway:?}"
    );
    assert_eq!(discord.calls_to("GET", "/gateway/bot").len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_token_is_fatal_before_the_gateway() {
    let llm = FakeLlm::start(vec![]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let token = discord_home::configure(&home, &llm, &discord, "", "");
    discord.remove_token(&token);
    home.ctl_async(&["status"]).await.ok();
    let status = wait_state(&home, "discord", "fatal").await;
    assert!(
        status["last_error"].as_str().unwrap().contains("401"),
        "{status}"
    );
    assert_eq!(
        discord.calls_to("GET", "/users/@me").len(),
        1,
        "not retried"
    );
    assert_eq!(discord.gateway().connections, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn send_message_and_cron_reach_the_home_channel_and_a_thread() {
    let discord = FakeDiscord::start().await;
    let guild = discord.guild("Friends");
    let general = discord.channel(&guild, "general");
    let thread = discord.thread(&general, "plans");
    let dm = discord.dm(&ann());
    let to_thread =
        format!(r#"{{"target": "discord:{general}:{thread}", "message": "in the thread"}}"#);
    let llm = FakeLlm::start(vec![
        Reply::text("noted"),
        Reply::tool_call(
            "send_message",
            r#"{"target": "discord", "message": "📣 to home"}"#,
        ),
        Reply::tool_call("send_message", &to_thread),
        Reply::text("all sent"),
        Reply::text("the report"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let env = format!("DISCORD_ALLOWED_USERS=4242\nDISCORD_HOME_CHANNEL={general}\n");
    discord_home::configure(&home, &llm, &discord, "", &env);
    home.ctl_async(&["status"]).await.ok();
    discord.wait_ready(WAIT).await;

    let bot = discord.bot();
    discord.push(&Post::new(
        &thread,
        &ann(),
        &format!("{} note this", bot.mention()),
    ));
    discord.wait_message(&thread, |t| t == "noted", WAIT).await;
    discord.push(&Post::new(&dm, &ann(), "tell everyone"));
    discord.wait_message(&dm, |t| t == "all sent", WAIT).await;
    discord
        .wait_message(&general, |t| t == "📣 to home", WAIT)
        .await;
    discord
        .wait_message(&thread, |t| t == "in the thread", WAIT)
        .await;

    let target = format!("discord:{general}");
    let added = home
        .ctl_async(&[
            "--json",
            "cron",
            "add",
            "--schedule",
            "every 1h",
            "--prompt",
            "Report",
            "--name",
            "report",
            "--deliver",
            &target,
        ])
        .await
        .json();
    assert!(added["id"].is_string(), "{added}");
    home.ctl_async(&["--json", "cron", "run", "report", "--wait"])
        .await
        .ok();
    let delivered = discord
        .wait_message(&general, |t| t.contains("the report"), WAIT)
        .await;
    assert!(
        delivered.content.starts_with("Cronjob Response: report"),
        "{}",
        delivered.content
    );
    let homes = home.ctl_async(&["--json", "gateway", "home"]).await.json();
    assert!(homes.to_string().contains(&general), "{homes}");
}
