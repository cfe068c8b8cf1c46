//! Benchmarks of hermes-tui: a frame of a 1,000-message conversation while an answer streams
//! (in process, on ratatui's TestBackend); and the real binary on a pseudo-terminal against the
//! real daemon with 1,000 stored sessions — start to first frame; then, once a turn of 499 tool
//! calls (~1,000 messages) has arrived live, keystroke to screen while 100 deltas a second stream
//! into the same conversation, and the client's RSS.
//!
//! `cargo build --release --workspace --bins && target/release/bench-tui [RUNS]` (RUNS:
//! keystrokes, default 100; frames are ten times that).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{
    io::{Read, Write},
    os::fd::OwnedFd,
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use hermes_proto::pb::{self, session_event::Kind};
use hermes_tests::{
    TestHome, binary,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    report::{Row, print, value_row},
    seed,
};
use hermes_tui::{
    app::{App, Msg},
    config::TuiConfig,
    view::{BlockCache, draw},
};
use ratatui::{Terminal, backend::TestBackend};

const MESSAGES: u64 = 1_000;
const SESSIONS: usize = 1_000;
const WIDTH: u16 = 120;
const HEIGHT: u16 = 50;

fn event(seq: u64, kind: Kind) -> Msg {
    Msg::Event(pb::SessionEvent {
        session_id: "bench".into(),
        seq,
        turn_id: "t".into(),
        kind: Some(kind),
        ..pb::SessionEvent::default()
    })
}

/// A conversation of 1,000 messages (Markdown answers, a tool call every tenth) and an answer
/// streaming into it.
fn conversation() -> (App, u64) {
    let mut app = App::new(TuiConfig::default(), Vec::new(), 0);
    app.update(Msg::Created(pb::Session {
        id: "bench".into(),
        title: "bench".into(),
        ..pb::Session::default()
    }));
    app.update(Msg::Attached {
        session_id: "bench".into(),
    });
    let mut seq = 0;
    for m in 0..MESSAGES {
        seq += 1;
        let kind = if m % 2 == 0 {
            Kind::UserMessage(pb::UserMessage {
                message_id: m,
                text: format!("question {m}: what does `run_{m}` do with the queue?"),
            })
        } else {
            Kind::AssistantMessage(pb::AssistantMessage {
                message_id: m,
                text: format!(
                    "## Answer {m}\n\nIt **drains** the queue and then:\n\n- reads `config.yaml`\n- writes [the log](https://example.com/{m})\n\n```rust\nfn run_{m}() -> usize {{ 42 }}\n```\n"
                ),
                ..pb::AssistantMessage::default()
            })
        };
        app.update(event(seq, kind));
        if m % 10 == 5 {
            seq += 1;
            app.update(event(
                seq,
                Kind::ToolStarted(pb::ToolStarted {
                    call_id: format!("c{m}"),
                    name: "terminal".into(),
                    arguments: format!(r#"{{"command":"ls /srv/{m}"}}"#),
                }),
            ));
            seq += 1;
            app.update(event(
                seq,
                Kind::ToolFinished(pb::ToolFinished {
                    call_id: format!("c{m}"),
                    ok: true,
                    summary: "3 lines".into(),
                    duration_ms: 12,
                }),
            ));
        }
    }
    (app, seq)
}

fn render_rows(frames: usize, rows: &mut Vec<Row>) {
    let (mut app, mut seq) = conversation();
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    let mut cache = BlockCache::default();
    let started = Instant::now();
    terminal
        .draw(|frame| draw(frame, &mut app, &mut cache))
        .unwrap();
    let cold = started.elapsed();
    let mut samples = Vec::with_capacity(frames);
    for i in 0..frames {
        seq += 1;
        let text = if i % 20 == 19 {
            "\n\n".to_string()
        } else {
            format!("word{i} ")
        };
        app.update(event(seq, Kind::TextDelta(pb::TextDelta { text })));
        let started = Instant::now();
        terminal
            .draw(|frame| draw(frame, &mut app, &mut cache))
            .unwrap();
        samples.push(started.elapsed());
    }
    rows.push(value_row(
        format!("first frame of a {MESSAGES}-message conversation (every block rendered)"),
        hermes_tests::report::ms(cold),
        "",
    ));
    rows.push(Row::with_p95(
        format!("frame while an answer streams into it, {WIDTH}×{HEIGHT} ({frames} frames)"),
        &mut samples,
        "< 2 ms",
    ));
}

/// The TUI on a pseudo-terminal: what it writes arrives on a channel.
struct Pty {
    child: Child,
    master: std::fs::File,
    output: mpsc::Receiver<Vec<u8>>,
    seen: Vec<u8>,
}

impl Pty {
    fn spawn(home: &TestHome, args: &[&str]) -> (Self, Instant) {
        let size = nix::pty::Winsize {
            ws_row: HEIGHT,
            ws_col: WIDTH,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = nix::pty::openpty(Some(&size), None).unwrap();
        let slave: OwnedFd = pty.slave;
        let mut command = Command::new(binary("hermes-tui"));
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.user_home())
            .env("HERMES_HOME", home.path())
            .env("TERM", "xterm-256color")
            .args(["--socket", &home.socket().display().to_string()])
            .args(args)
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        let started = Instant::now();
        let child = command.spawn().unwrap();
        let master = std::fs::File::from(pty.master);
        let mut reader = master.try_clone().unwrap();
        let (tx, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 65_536];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    return;
                }
            }
        });
        (
            Self {
                child,
                master,
                output,
                seen: Vec::new(),
            },
            started,
        )
    }

    /// Read until `needle` appears in output written after this call; the time it appeared.
    /// ratatui skips cells that did not change, so a needle holds no spaces.
    fn wait_for(&mut self, needle: &[u8]) -> Instant {
        self.seen.clear();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let chunk = self
                .output
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| {
                    let tail = &self.seen[self.seen.len().saturating_sub(600)..];
                    panic!(
                        "the TUI never wrote {:?}; its last output: {:?}",
                        String::from_utf8_lossy(needle),
                        String::from_utf8_lossy(tail)
                    )
                });
            let at = Instant::now();
            self.seen.extend_from_slice(&chunk);
            if self.seen.windows(needle.len()).any(|w| w == needle) {
                return at;
            }
            if self.seen.len() > 1 << 20 {
                let keep = self.seen.len() - needle.len();
                self.seen.drain(..keep);
            }
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Instant {
        self.master.write_all(bytes).unwrap();
        Instant::now()
    }

    fn status_kib(&self, field: &str) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find(|l| l.starts_with(field))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
    }
}

#[tokio::main]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100)
        .max(1);
    let mut rows = Vec::new();
    render_rows(runs * 10, &mut rows);
    eprintln!("bench-tui: frames measured");

    // 100 deltas a second, for longer than the keystrokes take.
    let chunks: Vec<String> = (0..(runs * 10 + 500)).map(|i| format!("t{i} ")).collect();
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    // One turn of tool calls first, so the client holds a conversation of ~1,000 messages.
    let mut replies: Vec<Reply> = (0..MESSAGES / 2 - 1)
        .map(|i| {
            // Distinct arguments, or the loop guard stops a run of identical calls.
            let todos =
                format!(r#"{{"todos":[{{"id":"{i}","content":"step {i}","status":"pending"}}]}}"#);
            Reply::tool_call("todo", &todos)
        })
        .collect();
    replies.push(Reply::text("tools-finished"));
    replies.push(Reply::text_chunks(&refs).with_delay_ms(10));
    let server = FakeLlm::start(replies).await;
    let home = std::sync::Arc::new(TestHome::new());
    let _stop = StopOnDrop(&home);
    let seeded = home.path().to_path_buf();
    tokio::task::spawn_blocking(move || seed::sessions(&seeded, SESSIONS, "cli", 4))
        .await
        .unwrap();
    home.use_fake_model(
        &server,
        "agent:\n  max_turns: 2000\nmemory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n",
    );
    home.ctl_async(&["status"]).await.ok();
    eprintln!("bench-tui: {SESSIONS} sessions seeded, daemon up");

    let pty_home = home.clone();
    let bench = tokio::task::spawn_blocking(move || {
        let home = pty_home;
        let mut rows = Vec::new();
        let mut first = Vec::new();
        let mut listed = Vec::new();
        for _ in 0..runs.clamp(1, 10) {
            let (mut pty, started) = Pty::spawn(&home, &[]);
            first.push(pty.wait_for(b"sessions").duration_since(started));
            listed.push(pty.wait_for(b"idle").duration_since(started));
        }
        rows.push(Row::from_samples(
            format!("start to first frame, {SESSIONS} sessions in the store"),
            &mut first,
            "< 50 ms",
        ));
        rows.push(Row::from_samples(
            "start to the frame with the session list".into(),
            &mut listed,
            "",
        ));

        // A conversation of ~1,000 messages arriving live, then an answer streaming into it.
        let (mut pty, _) = Pty::spawn(&home, &["--new"]);
        pty.wait_for(b"connected");
        pty.write(b"tools\r");
        pty.wait_for(b"tools-finished");
        pty.write(b"go\r");
        pty.wait_for(b"t20");
        let mut keys = Vec::with_capacity(runs);
        for i in 0..runs {
            let key = [b"QZXK"[i % 4]];
            let sent = pty.write(&key);
            keys.push(pty.wait_for(&key).duration_since(sent));
        }
        rows.push(Row::with_p95(
            format!("keystroke to screen while 100 deltas/s arrive ({runs} keys)"),
            &mut keys,
            "< 16 ms",
        ));
        rows.push(value_row(
            format!("client RSS after, {MESSAGES}-message session (peak)"),
            format!(
                "{:.1} MiB ({:.1} MiB)",
                pty.status_kib("VmRSS:") / 1024.0,
                pty.status_kib("VmHWM:") / 1024.0
            ),
            "< 15 MiB",
        ));
        rows
    });
    rows.extend(bench.await.unwrap());
    print("hermes-tui", &rows);
}
