//! `hermesctl chat` driven through tmux (a real terminal): send and stream, a tool line, an
//! inline approval, Ctrl-C interrupting a turn, slash commands, and Ctrl-D detaching (at the
//! prompt and mid-turn).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    tmux::Tmux,
};

#[tokio::test(flavor = "multi_thread")]
async fn chat_streams_asks_interrupts_and_detaches() {
    let server = FakeLlm::start(vec![
        Reply::text_chunks(&[
            "Hello ",
            "**there**\n",
            "```rust\nfn main() {}\n```\n",
            "all done",
        ]),
        Reply::tool_call("terminal", r#"{"command": "rm -rf victim"}"#),
        Reply::text("removed it"),
        Reply::text_chunks(&["slow "; 400]).with_delay_ms(20),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    std::fs::create_dir_all(home.user_home()).unwrap();
    let victim = home.user_home().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    home.ctl_async(&["status"]).await.ok();
    let mut tmux = Tmux::start(&home, "chat");
    tmux.wait_for("/help for commands").await;

    tmux.line("hi there").await;
    let screen = tmux.wait_for("model calls").await;
    assert!(
        screen.contains("Hello there"),
        "bold markers are rendered away:\n{screen}"
    );
    assert!(screen.contains("all done"));
    assert!(
        screen.contains("fn main() {}"),
        "the code block is shown:\n{screen}"
    );

    tmux.line("/detahc").await;
    tmux.wait_for("did you mean /detach?").await;

    tmux.line("clean up").await;
    tmux.wait_for("Allow? [o]nce").await;
    tmux.line("o").await;
    tmux.wait_for("removed it").await;
    assert!(!victim.exists(), "approved inline, so it ran");

    tmux.line("tell a long story").await;
    tmux.wait_for("slow slow").await;
    tmux.keys(&["typed ", "ahead"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("— interrupted").await;
    tmux.wait_for("› typed ahead").await;

    tmux.keys(&["C-u", "C-d"]);
    let screen = tmux.wait_for("EXIT=").await;
    assert!(screen.contains("detached; the session goes on"), "{screen}");
    assert!(screen.contains("EXIT=0"), "{screen}");
    let id = screen
        .split("hermesctl chat ")
        .last()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let shown = home
        .ctl_async(&["sessions", "show", &id, "--json"])
        .await
        .json();
    let first = &shown["messages"][0];
    assert_eq!(first["content"], "hi there");
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_survives_a_daemon_restart_and_sends_input_once() {
    let server = FakeLlm::start(vec![
        Reply::text("before"),
        Reply::text("after the restart"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    std::fs::create_dir_all(home.user_home()).unwrap();
    home.ctl_async(&["status"]).await.ok();
    let mut tmux = Tmux::start(&home, "chat");
    tmux.wait_for("/help for commands").await;
    tmux.line("one").await;
    tmux.wait_for("before").await;
    tmux.wait_for("model calls").await;
    home.ctl_async(&["daemon", "restart"]).await.ok();
    tmux.line("two").await;
    let screen = tmux.wait_for("after the restart").await;
    assert!(screen.contains("re-attaching from seq"), "{screen}");
    assert_eq!(server.requests().len(), 2, "the input went out once");
    assert_eq!(
        screen.matches("before").count(),
        1,
        "no event shown twice:\n{screen}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_terminals_watch_one_session_at_once() {
    let server = FakeLlm::start(vec![Reply::text_chunks(&["seen ", "by both"])]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    std::fs::create_dir_all(home.user_home()).unwrap();
    home.ctl_async(&["status"]).await.ok();
    let mut first = Tmux::start(&home, "chat");
    let screen = first.wait_for("/help for commands").await;
    let id = screen
        .split("session ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let mut second = Tmux::start(&home, &format!("chat {id}"));
    second.wait_for("/help for commands").await;
    first.line("hello from one").await;
    first.wait_for("seen by both").await;
    let other = second.wait_for("seen by both").await;
    assert!(
        other.contains("› hello from one"),
        "the other client shows the input:\n{other}"
    );
    let listed = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    assert_eq!(listed[0]["clients"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_d_mid_turn_detaches_and_the_turn_goes_on() {
    // The answer stops halfway until released, so Ctrl-D surely lands mid-turn.
    let before = vec!["tick "; 150];
    let mut after = vec!["tick "; 150];
    after.push("THE END");
    let server = FakeLlm::start(vec![Reply::held(&before, &after)]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    std::fs::create_dir_all(home.user_home()).unwrap();
    home.ctl_async(&["status"]).await.ok();
    let mut first = Tmux::start(&home, "chat");
    first.wait_for("/help for commands").await;
    first.line("count for me").await;
    first.wait_for("tick tick").await;
    first.keys(&["C-d"]);
    let screen = first.wait_for("EXIT=").await;
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(
        !screen.contains("THE END"),
        "detached before the end:\n{screen}"
    );
    server.release();
    first.keys(&["echo-is-back"]);
    first.wait_for("echo-is-back").await; // the terminal was put back as it was
    let id = screen
        .split("hermesctl chat ")
        .last()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();

    let mut second = Tmux::start(&home, &format!("chat {id}"));
    let screen = second.wait_for("THE END").await;
    assert!(
        screen.contains("› count for me"),
        "the re-attached client shows the same turn:\n{screen}"
    );
    // The screen shows the streamed text; the stored answer follows it by a commit.
    let answer =
        hermes_tests::wait::until("the answer is stored", Duration::from_secs(20), || async {
            let shown = home
                .ctl_async(&["sessions", "show", &id, "--json"])
                .await
                .json();
            shown["messages"][1]["content"].as_str().map(str::to_string)
        })
        .await;
    assert!(answer.ends_with("THE END"), "the turn finished: {answer}");
    assert_eq!(answer.matches("tick").count(), 300);
}

#[tokio::test(flavor = "multi_thread")]
async fn history_slash_commands_title_undo_retry_branch_compress_and_resume() {
    let server = FakeLlm::start(vec![
        Reply::text("answer one"),
        Reply::text("answer two"),
        Reply::text("answer two, retried"),
        Reply::text("answer three"),
        Reply::text("answer four"),
        Reply::text("answer five"),
        Reply::text("a summary of it all"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &server,
        "compression:\n  protect_first_n: 1\n  protect_last_n: 1\n",
    );
    std::fs::create_dir_all(home.user_home()).unwrap();
    home.ctl_async(&["status"]).await.ok();
    let mut tmux = Tmux::start(&home, "chat");
    tmux.wait_for("/help for commands").await;

    tmux.line("first question").await;
    tmux.wait_for("answer one").await;
    tmux.line("/title Chat history test").await;
    tmux.wait_for("title: Chat history test").await;
    tmux.line("second question").await;
    tmux.wait_for("answer two").await;
    tmux.line("/undo").await;
    tmux.wait_for("removed the last exchange (2 messages)")
        .await;
    tmux.line("/retry").await;
    tmux.wait_for("retrying: first question").await;
    tmux.wait_for("answer two, retried").await;
    let padding = " and some detail to make it worth summarising".repeat(8);
    for (question, answer) in [
        ("three?", "answer three"),
        ("four?", "answer four"),
        ("five?", "answer five"),
    ] {
        tmux.line(&format!("{question}{padding}")).await;
        tmux.wait_for(answer).await;
    }
    tmux.line("/compress").await;
    tmux.wait_for("compressed: ~").await;
    tmux.line("/branch side quest").await;
    tmux.wait_for("branched: now in").await;
    tmux.line("/resume Chat history test").await;
    tmux.wait_for("(Chat history test)").await;
    tmux.line("/detach").await;
    tmux.wait_for("EXIT=0").await;

    let listed = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    let titles: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap_or(""))
        .collect();
    assert!(titles.contains(&"side quest"), "{titles:?}");
    assert!(titles.contains(&"Chat history test"), "{titles:?}");
    let summary = &server.chat_requests()[6];
    assert!(
        summary.tool_names().is_empty(),
        "the 7th call is the summary"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subagents_approval_is_answered_at_the_idle_prompt() {
    let goal = "clear-the-cache";
    let server = FakeLlm::start(vec![
        Reply::tool_call("delegate_task", &format!(r#"{{"goal": "{goal}"}}"#)),
        Reply::text("handed it over"),
        Reply::text("the cache is clear"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    std::fs::create_dir_all(home.user_home()).unwrap();
    let victim = home.user_home().join("cache-dir");
    std::fs::create_dir_all(victim.join("inside")).unwrap();
    server.route(
        &format!("YOUR TASK:\n{goal}"),
        vec![
            Reply::tool_call("terminal", r#"{"command": "rm -rf cache-dir"}"#),
            Reply::text("removed cache-dir"),
        ],
    );
    home.ctl_async(&["status"]).await.ok();
    let mut tmux = Tmux::start(&home, "chat");
    tmux.wait_for("/help for commands").await;
    tmux.line("clear the cache").await;
    // The parent's turn is over and the prompt is open when the child asks.
    tmux.wait_for("handed it over").await;
    let screen = tmux.wait_for("Allow? type [o]nce").await;
    assert!(
        screen.contains(&format!("[subagent 1/1: {goal}]")),
        "{screen}"
    );
    assert!(victim.exists(), "nothing runs before the answer");
    tmux.line("o").await;
    tmux.wait_for("the cache is clear").await;
    assert!(!victim.exists(), "approved at the prompt, so it ran");
}
