//! `hermesctl tui` driven through tmux against the real daemon and the fake model: start, send,
//! watch the answer stream, approve a command in the modal, switch to a second session that a
//! `hermesctl send` is running in and see its stream, quit — and check that the turn went on and
//! the terminal is as it was (`stty -a` before and after).
//! Also: `/image` attaches a file to the next message, and a `tui.log` past 1 MiB is rotated when
//! the TUI starts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::process::Stdio;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    tmux::Tmux,
};

/// Session ids of `home`, newest first.
async fn session_ids(home: &TestHome) -> Vec<String> {
    let listed = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn tui_streams_approves_switches_to_a_running_session_and_quits_leaving_it_running() {
    let story = "once upon a time ".repeat(60);
    let server = FakeLlm::start(vec![
        Reply::text_chunks(&["Hello ", "**from** ", "the TUI"]),
        Reply::tool_call("terminal", r#"{"command": "rm -rf victim"}"#),
        Reply::text("removed it"),
        Reply::text_chunks(&["once upon a time "; 60]).with_delay_ms(60),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    std::fs::create_dir_all(home.user_home()).unwrap();
    let victim = home.user_home().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    home.ctl_async(&["status"]).await.ok();

    let before = home.path().join("stty.before");
    let after = home.path().join("stty.after");
    let ctl = Tmux::hermesctl(&home, "tui --new");
    let mut tmux = Tmux::start_script(
        &home,
        &format!(
            "stty -a > {}; {ctl}; s=$?; stty -a > {}; echo EXIT=$s; sleep 600",
            before.display(),
            after.display()
        ),
    );
    tmux.wait_for("● connected").await;

    tmux.keys(&["hi there", "Enter"]);
    let screen = tmux.wait_for("Hello from the TUI").await;
    assert!(
        !screen.contains("**from**"),
        "Markdown is rendered:\n{screen}"
    );
    tmux.wait_for("model calls").await;

    tmux.keys(&["clean up", "Enter"]);
    tmux.wait_for("approval needed").await;
    tmux.keys(&["o"]);
    tmux.wait_for("removed it").await;
    assert!(!victim.exists(), "approved in the modal, so it ran");
    let screen = tmux.screen();
    assert!(
        screen.contains("terminal rm -rf victim"),
        "the tool block:\n{screen}"
    );

    let ours = session_ids(&home).await;
    assert_eq!(ours.len(), 1);
    let mut send = home.command(&hermes_tests::binary("hermesctl"));
    send.args(["send", "tell a story"]).stdout(Stdio::piped());
    let send = send.spawn().unwrap();
    let send = tokio::task::spawn_blocking(move || send.wait_with_output());
    let other = loop {
        let ids = session_ids(&home).await;
        if let Some(id) = ids.into_iter().find(|id| *id != ours[0]) {
            break id;
        }
        tokio::task::yield_now().await;
    };
    // Tab to the list, filter by the id, open it.
    tmux.keys(&["Tab", "f"]);
    tmux.keys(&[&other, "Enter"]);
    tmux.wait_for(&format!("sessions /{other}")).await;
    // The list is read every two seconds: wait for the new session to be in it.
    tmux.wait_until("the session is listed", |t| {
        (!t.screen().contains("nothing matches")).then_some(())
    })
    .await;
    tmux.keys(&["Enter"]);
    tmux.wait_for("tell a story").await;
    tmux.wait_for("once upon a time once upon").await;

    // q in the list quits; the send's turn goes on to its end.
    tmux.keys(&["Tab", "q"]);
    let screen = tmux.wait_for("EXIT=").await;
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(screen.contains("the session goes on"), "{screen}");
    let output = send.await.unwrap().unwrap();
    assert!(output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stdout).contains(story.trim_end()),
        "the turn finished after the TUI quit"
    );
    let before = std::fs::read_to_string(before).unwrap();
    let after = std::fs::read_to_string(&after).unwrap();
    assert_eq!(before, after, "the terminal is restored");
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_image_in_the_tui_sends_the_picture_with_the_next_message() {
    let server = FakeLlm::start(vec![Reply::text("a tiny picture")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "model:\n  supports_vision: true\n");
    std::fs::create_dir_all(home.user_home()).unwrap();
    let picture = home.path().join("dot.png");
    let mut png = std::io::Cursor::new(Vec::new());
    image::RgbImage::from_pixel(4, 4, image::Rgb([9, 99, 199]))
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    std::fs::write(&picture, png.get_ref()).unwrap();
    home.ctl_async(&["status"]).await.ok();
    let ctl = Tmux::hermesctl(&home, "tui --new");
    let mut tmux = Tmux::start_script(&home, &format!("{ctl}; echo EXIT=$?; sleep 600"));
    tmux.wait_for("● connected").await;
    tmux.keys(&[&format!("/image {}", picture.display()), "Enter"]);
    tmux.wait_for("attached /").await;
    tmux.keys(&["what is this", "Enter"]);
    tmux.wait_for("a tiny picture").await;
    let body = &server.chat_requests()[0].body;
    let urls: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter_map(|p| p["image_url"]["url"].as_str())
        .collect();
    assert_eq!(urls.len(), 1, "{body}");
    assert!(urls[0].starts_with("data:image/png;base64,"), "{body}");
    tmux.keys(&["Tab", "q"]);
    let screen = tmux.wait_for("EXIT=").await;
    assert!(screen.contains("EXIT=0"), "{screen}");
}

/// The pid of the program the pane's shell runs (hermesctl exec'd into hermes-tui).
fn pane_child(tmux: &Tmux) -> i32 {
    let shell = tmux.pane_pid();
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
    children.split_whitespace().next().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn tui_reconnects_after_the_daemon_is_killed_and_sigterm_restores_the_terminal() {
    let server = FakeLlm::start(vec![
        Reply::text("first answer"),
        Reply::text("second answer"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    std::fs::create_dir_all(home.user_home()).unwrap();
    home.ctl_async(&["status"]).await.ok();
    let before = home.path().join("stty.before");
    let after = home.path().join("stty.after");
    let ctl = Tmux::hermesctl(&home, "tui --new");
    let mut tmux = Tmux::start_script(
        &home,
        &format!(
            "stty -a > {}; {ctl}; s=$?; stty -a > {}; echo EXIT=$s; sleep 600",
            before.display(),
            after.display()
        ),
    );
    tmux.wait_for("● connected").await;
    tmux.keys(&["one", "Enter"]);
    tmux.wait_for("first answer").await;
    tmux.wait_for("model calls").await;

    home.kill_daemon_hard().await;
    tmux.wait_for("○ reconnecting").await;
    home.ctl_async(&["status"]).await.ok();
    tmux.wait_for("● connected").await;
    tmux.keys(&["two", "Enter"]);
    let screen = tmux.wait_for("second answer").await;
    assert_eq!(
        screen.matches("first answer").count(),
        1,
        "nothing repeated:\n{screen}"
    );
    assert_eq!(screen.matches("› one").count(), 1, "{screen}");
    assert_eq!(screen.matches("› two").count(), 1, "{screen}");

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pane_child(&tmux)),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let screen = tmux.wait_for("EXIT=").await;
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(before).unwrap(),
        std::fs::read_to_string(after).unwrap(),
        "the terminal is restored after SIGTERM"
    );
}

#[test]
fn a_tui_log_past_a_mebibyte_is_rotated_when_the_tui_starts() {
    let home = TestHome::new();
    let logs = home.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let big = "x".repeat(1024 * 1024 + 1);
    std::fs::write(logs.join("tui.log"), &big).unwrap();
    // No daemon answers: the TUI says so and exits, having opened its log first.
    let out = std::process::Command::new(hermes_tests::binary("hermes-tui"))
        .env("HERMES_HOME", home.path())
        .arg("--socket")
        .arg(home.path().join("nobody.sock"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("hermesctl daemon start"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(logs.join("tui.log.1")).unwrap(),
        big
    );
    assert!(std::fs::metadata(logs.join("tui.log")).unwrap().len() < 4096);
}
