//! `hermesctl chat` driven through tmux (a real terminal): send and stream, a tool line, an
//! inline approval, Ctrl-C interrupting a turn, slash commands, and Ctrl-D detaching (at the
//! prompt and mid-turn).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::{os::unix::fs::OpenOptionsExt, process::Command, time::Duration};

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fifo::{Drained, Fifo},
    home::StopOnDrop,
};

/// A tmux server of its own running `hermesctl chat` for `home`, copying the pane's output
/// into a FIFO so a test can wait for the screen to change.
struct Tmux {
    socket: String,
    output: Drained,
    /// The pane's terminal, to see whether the line editor has it (raw mode).
    tty: std::fs::File,
}

impl Tmux {
    fn start(home: &TestHome, args: &str) -> Self {
        let socket = format!("hermes-chat-{}-{}", std::process::id(), fastrand_suffix());
        // The pane stays after the client exits, so its last words can be read.
        let line = format!(
            "env -i PATH={} HOME={} HERMES_HOME={} TERM=xterm {} chat {args}; echo EXIT=$?; sleep 600",
            std::env::var("PATH").unwrap(),
            home.user_home().display(),
            home.path().display(),
            hermes_tests::binary("hermesctl").display()
        );
        let dir = home.user_home().display().to_string();
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "new-session",
                "-d",
                "-c",
                &dir,
                "-x",
                "120",
                "-y",
                "50",
                &line,
            ])
            .status()
            .expect("tmux must be installed");
        assert!(status.success());
        // From here on every byte the pane gets is also written to the FIFO; what came before
        // is on the screen already.
        let fifo = Fifo::create(&home.path().join(format!("{socket}.out")), true);
        let copy = format!("cat >> {}", fifo.path().display());
        let status = Command::new("tmux")
            .args(["-L", &socket, "pipe-pane", "-t", "0", &copy])
            .status()
            .unwrap();
        assert!(status.success());
        let out = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "display-message",
                "-p",
                "-t",
                "0",
                "#{pane_tty}",
            ])
            .output()
            .unwrap();
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NOCTTY.bits())
            .open(String::from_utf8_lossy(&out.stdout).trim())
            .unwrap();
        Self {
            socket,
            output: fifo.drain(),
            tty,
        }
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["-L", &self.socket, "send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        assert!(Command::new("tmux").args(&args).status().unwrap().success());
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args([
                "-L",
                &self.socket,
                "capture-pane",
                "-p",
                "-t",
                "0",
                "-S",
                "-200",
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Wait until the screen shows `text` (10 s at most).
    async fn wait_for(&mut self, text: &str) -> String {
        self.wait_until(&format!("the screen shows {text:?}"), |tmux| {
            let screen = tmux.screen();
            screen.contains(text).then_some(screen)
        })
        .await
    }

    /// Type `text` and Enter at a prompt, once the line editor reads the terminal. (Keys typed
    /// while a turn is still ending are kept for the next prompt without their Enter.)
    async fn line(&mut self, text: &str) {
        self.wait_until("the line editor reads the terminal", |tmux| {
            tmux.editing().then_some(())
        })
        .await;
        self.keys(&[text, "Enter"]);
    }

    /// Whether rustyline has the terminal: its raw mode turns off ICRNL, which the chat's
    /// reader of keys during a turn leaves on. (It switches before drawing the prompt, so
    /// pane output follows the switch.)
    fn editing(&self) -> bool {
        use nix::sys::termios::{InputFlags, LocalFlags, tcgetattr};
        let mode = tcgetattr(&self.tty).unwrap();
        !mode.input_flags.contains(InputFlags::ICRNL)
            && !mode.local_flags.contains(LocalFlags::ICANON)
    }

    /// Look at the pane until `check` yields (10 s at most), again each time the pane gets
    /// output. tmux parses what it reads into the screen before serving a later command, so
    /// output counted on the FIFO is on the screen when it is looked at.
    async fn wait_until<T>(&mut self, what: &str, check: impl Fn(&Self) -> Option<T>) -> T {
        let looked = async {
            loop {
                self.output.mark_seen();
                if let Some(found) = check(self) {
                    return found;
                }
                self.output.arrived().await;
            }
        };
        match tokio::time::timeout(Duration::from_secs(10), looked).await {
            Ok(found) => found,
            Err(_) => panic!("waited in vain until {what}:\n{}", self.screen()),
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

fn fastrand_suffix() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos()
}

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
    let mut tmux = Tmux::start(&home, "");
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
    let mut tmux = Tmux::start(&home, "");
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
    let mut first = Tmux::start(&home, "");
    let screen = first.wait_for("/help for commands").await;
    let id = screen
        .split("session ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let mut second = Tmux::start(&home, &id);
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
    let mut chunks = vec!["tick "; 300];
    chunks.push("THE END");
    let server = FakeLlm::start(vec![Reply::text_chunks(&chunks).with_delay_ms(10)]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    std::fs::create_dir_all(home.user_home()).unwrap();
    home.ctl_async(&["status"]).await.ok();
    let mut first = Tmux::start(&home, "");
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

    let mut second = Tmux::start(&home, &id);
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
    let mut tmux = Tmux::start(&home, "");
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
