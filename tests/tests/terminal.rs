//! The `terminal` tool through the real daemon: secrets stay out of children, hanging commands
//! time out, an interrupt stops a running command, and dangerous commands need approval.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_proto::pb::{self, client_frame, session_event::Kind};
use hermes_tests::{
    TestHome,
    events::{self, Attached, kind_name},
    fake_llm::{FakeLlm, RecordedRequest, Reply},
    fifo::Fifo,
    home::StopOnDrop,
};

fn configure(home: &TestHome, server: &FakeLlm, extra: &str) {
    home.write(
        "config.yaml",
        &format!(
            "model:\n  provider: custom\n  default: fake-model\n  base_url: {}\n  api_key: ${{OPENAI_API_KEY}}\n{}{extra}",
            server.openai_base(),
            hermes_tests::home::QUIET_AUXILIARY
        ),
    );
    home.write(
        ".env",
        "OPENAI_API_KEY=sk-live-very-secret\nTELEGRAM_BOT_TOKEN=123:tok-secret\nMY_SERVICE_SECRET=hush\n",
    );
}

fn last_tool_result(request: &RecordedRequest) -> String {
    request.tool_results().pop().unwrap()
}

fn terminal(command: &str) -> Reply {
    Reply::tool_call(
        "terminal",
        &serde_json::json!({ "command": command }).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn terminal_children_never_see_keys_or_tokens() {
    let server = FakeLlm::start(vec![terminal("env; echo done"), Reply::text("ok")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server, "");
    let out = home.ctl_async(&["send", "--json", "show env"]).await.json();
    assert_eq!(out["answer"], "ok");
    let requests = server.requests();
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-live-very-secret")
    );
    let result = last_tool_result(&requests[1]);
    assert!(result.contains("PATH="), "{result}");
    assert!(result.contains("done"), "{result}");
    for secret in [
        "sk-live-very-secret",
        "OPENAI_API_KEY",
        "tok-secret",
        "MY_SERVICE_SECRET",
    ] {
        assert!(!result.contains(secret), "{secret} leaked: {result}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_that_hangs_past_its_timeout_is_killed() {
    let server = FakeLlm::start(vec![
        Reply::tool_call(
            "terminal",
            r#"{"command": "echo started; sleep 30", "timeout": 1}"#,
        ),
        Reply::text("it hung"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server, "");
    let out = home.ctl_async(&["send", "--json", "run it"]).await.json();
    assert_eq!(out["answer"], "it hung");
    let result: serde_json::Value =
        serde_json::from_str(&last_tool_result(&server.requests()[1])).unwrap();
    assert_eq!(result["exit_code"], 124, "{result}");
    assert!(result["output"].as_str().unwrap().contains("started"));
    assert!(
        result["output"].as_str().unwrap().contains("timed out"),
        "{result}"
    );
}

fn process_running(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .map(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(marker)
            })
            .unwrap_or(false)
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupt_stops_a_running_command() {
    // A marker unique to this run, so a leftover of another run cannot confuse the check.
    let marker = format!("sleep 7{}", std::process::id());
    let home = TestHome::new();
    // The shell, and the `sleep` it starts, hold the FIFO's write end: "up" says the command
    // runs, end-of-file that every process of it is gone.
    let mut running = Fifo::create(&home.path().join("running"), false);
    let command = format!("exec 3>{}; echo up >&3; {marker}", running.path().display());
    let server = FakeLlm::start(vec![terminal(&command), Reply::text("unused")]).await;
    let _stop = StopOnDrop(&home);
    configure(&home, &server, "");
    home.ctl_async(&["status"]).await.ok();
    let session = events::create_session(&home.socket(), &home.work_dir()).await;
    let mut client = Attached::open(&home.socket(), &session.id, 0, false).await;
    client.until("replay_done").await;
    client
        .send(client_frame::Kind::UserInput(pb::UserInput {
            text: "sleep please".into(),
            ..pb::UserInput::default()
        }))
        .await;
    client.until("tool_started").await;
    running.read_until("up").await;
    assert!(process_running(&marker), "the command runs");
    client
        .send(client_frame::Kind::Interrupt(pb::InterruptTurn {}))
        .await;
    let seen = client.until("turn_interrupted").await;
    let finished = seen
        .iter()
        .find_map(|e| match &e.kind {
            Some(Kind::ToolFinished(f)) => Some(f.clone()),
            _ => None,
        })
        .unwrap();
    assert!(!finished.ok);
    running.closed().await;
    assert!(!process_running(&marker), "the command is gone");
    assert_eq!(
        server.requests().len(),
        1,
        "no model call after the interrupt"
    );
    let shown = home
        .ctl_async(&["sessions", "show", &session.id, "--json"])
        .await
        .json();
    let roles: Vec<&str> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool"],
        "the interrupted call has its result"
    );
}

/// Run one turn whose model asks for `rm -rf victim`, answering approvals with `answer`.
async fn turn_with_answer(
    home: &TestHome,
    answer: Option<&str>,
) -> (Vec<pb::SessionEvent>, std::path::PathBuf) {
    let session = events::create_session(&home.socket(), &home.work_dir()).await;
    let victim = home.work_dir().join("victim");
    std::fs::create_dir_all(victim.join("inner")).unwrap();
    let mut client = Attached::open(&home.socket(), &session.id, 0, false).await;
    client.until("replay_done").await;
    client
        .send(client_frame::Kind::UserInput(pb::UserInput {
            text: "clean up".into(),
            ..pb::UserInput::default()
        }))
        .await;
    let mut seen = client.until("approval_requested").await;
    let Some(Kind::ApprovalRequested(request)) = seen.last().unwrap().kind.clone() else {
        unreachable!()
    };
    assert!(request.command.contains("rm -rf"));
    assert_eq!(request.choices, ["once", "session", "always", "deny"]);
    if let Some(answer) = answer {
        client
            .send(client_frame::Kind::ApprovalResponse(pb::ApprovalResponse {
                id: request.id.clone(),
                decision: answer.into(),
            }))
            .await;
    }
    seen.extend(client.until("turn_finished").await);
    (seen, victim)
}

fn resolution(events: &[pb::SessionEvent]) -> pb::ApprovalResolved {
    events
        .iter()
        .find_map(|e| match &e.kind {
            Some(Kind::ApprovalResolved(r)) => Some(r.clone()),
            _ => None,
        })
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn approval_granted_once_runs_the_command() {
    let server = FakeLlm::start(vec![terminal("rm -rf victim"), Reply::text("cleaned")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server, "");
    home.ctl_async(&["status"]).await.ok();
    let (seen, victim) = turn_with_answer(&home, Some("once")).await;
    let resolved = resolution(&seen);
    assert_eq!(
        (resolved.decision.as_str(), resolved.by.as_str()),
        ("once", "test")
    );
    assert!(!victim.exists(), "the approved command ran");
    assert!(seen.iter().any(|e| kind_name(e) == "state_changed"));
}

#[tokio::test(flavor = "multi_thread")]
async fn approval_denied_blocks_the_command() {
    let server = FakeLlm::start(vec![
        terminal("rm -rf victim"),
        Reply::text("ok, not deleting"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server, "");
    home.ctl_async(&["status"]).await.ok();
    let (seen, victim) = turn_with_answer(&home, Some("deny")).await;
    assert_eq!(resolution(&seen).decision, "deny");
    assert!(victim.exists());
    let result = last_tool_result(&server.requests()[1]);
    assert!(result.contains("denied by user"), "{result}");
    assert!(result.contains("\"status\":\"blocked\""), "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unanswered_approval_times_out_as_a_deny() {
    let server = FakeLlm::start(vec![terminal("rm -rf victim"), Reply::text("timed out")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server, "approvals:\n  timeout: 1\n");
    home.ctl_async(&["status"]).await.ok();
    let (seen, victim) = turn_with_answer(&home, None).await;
    let resolved = resolution(&seen);
    assert_eq!(
        (resolved.decision.as_str(), resolved.by.as_str()),
        ("deny", "timeout")
    );
    assert!(victim.exists());
    assert!(last_tool_result(&server.requests()[1]).contains("timed out"));
}

#[tokio::test(flavor = "multi_thread")]
async fn without_an_interactive_client_dangerous_commands_are_denied_unless_yolo() {
    let server = FakeLlm::start(vec![
        terminal("rm -rf victim"),
        Reply::text("blocked"),
        terminal("rm -rf victim"),
        Reply::text("removed"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server, "");
    let victim = home.work_dir().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    let work = home.work_dir();
    let cwd = work.to_str().unwrap();
    let out = home
        .ctl_async(&["send", "--json", "--cwd", cwd, "clean"])
        .await
        .json();
    assert_eq!(out["answer"], "blocked");
    assert!(victim.exists());
    let result = last_tool_result(&server.requests()[1]);
    assert!(result.contains("no interactive user"), "{result}");
    let out = home
        .ctl_async(&["send", "--json", "--yolo", "--cwd", cwd, "clean"])
        .await
        .json();
    assert_eq!(out["answer"], "removed");
    assert!(!victim.exists(), "--yolo runs it");
    let id = out["session_id"].as_str().unwrap();
    assert!(
        !events::stored(&home.socket(), id)
            .await
            .iter()
            .any(|e| kind_name(e) == "approval_requested"),
        "--yolo asks nobody"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn hardline_commands_are_refused_even_with_yolo() {
    let server = FakeLlm::start(vec![terminal("rm -rf /"), Reply::text("refused")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server, "approvals:\n  mode: off\n");
    let out = home
        .ctl_async(&["send", "--json", "--yolo", "wipe"])
        .await
        .json();
    assert_eq!(out["answer"], "refused");
    let result = last_tool_result(&server.requests()[1]);
    assert!(result.contains("BLOCKED (hardline)"), "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn approval_for_the_session_covers_the_next_match() {
    let server = FakeLlm::start(vec![
        terminal("rm -rf victim"),
        terminal("rm -rf victim2"),
        Reply::text("both gone"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server, "");
    home.ctl_async(&["status"]).await.ok();
    std::fs::create_dir_all(home.work_dir().join("victim2")).unwrap();
    let (seen, victim) = turn_with_answer(&home, Some("session")).await;
    let asked = seen
        .iter()
        .filter(|e| kind_name(e) == "approval_requested")
        .count();
    assert_eq!(
        asked, 1,
        "the second rm -rf was covered by the session approval"
    );
    assert!(!victim.exists() && !home.work_dir().join("victim2").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn background_processes_are_polled_waited_on_and_listed() {
    let server = FakeLlm::start(vec![
        Reply::tool_call(
            "terminal",
            r#"{"command": "echo bg-start; read line; echo got-$line", "background": true}"#,
        ),
        Reply::text("started"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server, "");
    let out = home.ctl_async(&["send", "--json", "start it"]).await.json();
    let id = out["session_id"].as_str().unwrap().to_string();
    let started: serde_json::Value =
        serde_json::from_str(&last_tool_result(&server.requests()[1])).unwrap();
    let proc_id = started["session_id"].as_str().unwrap().to_string();
    assert!(proc_id.starts_with("proc_"), "{started}");
    for (i, args) in [
        serde_json::json!({"action": "submit", "session_id": proc_id, "data": "hi"}),
        serde_json::json!({"action": "wait", "session_id": proc_id, "timeout": 20}),
        serde_json::json!({"action": "list"}),
    ]
    .iter()
    .enumerate()
    {
        server.push(Reply::tool_call("process", &args.to_string()));
        server.push(Reply::text(&format!("step {i}")));
        home.ctl_async(&["send", "--session", &id, "next"])
            .await
            .ok();
    }
    let requests = server.requests();
    let waited = last_tool_result(&requests[5]);
    assert!(waited.contains("got-hi"), "{waited}");
    let listed = last_tool_result(&requests[7]);
    assert!(listed.contains(&proc_id), "{listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn hermesctl_send_on_a_terminal_asks_inline() {
    let server = FakeLlm::start(vec![
        terminal("rm -rf victim"),
        Reply::text("asked and done"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server, "");
    let victim = home.work_dir().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    let ctl = hermes_tests::binary("hermesctl");
    let line = format!(
        "{} send --cwd {} 'clean up'",
        ctl.display(),
        home.work_dir().display()
    );
    let mut script = home.command(std::path::Path::new("script"));
    script
        .args(["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let output = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = script.spawn().unwrap();
        child.stdin.take().unwrap().write_all(b"o\n").unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{shown}");
    assert!(shown.contains("Allow? [o]nce"), "{shown}");
    assert!(shown.contains("asked and done"), "{shown}");
    assert!(!victim.exists(), "approved inline, so it ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn approval_always_is_remembered_across_sessions_and_restarts() {
    let server = FakeLlm::start(vec![
        terminal("rm -rf victim"),
        Reply::text("first"),
        terminal("rm -rf victim"),
        Reply::text("second"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server, "");
    home.ctl_async(&["status"]).await.ok();
    let (_, victim) = turn_with_answer(&home, Some("always")).await;
    assert!(!victim.exists());
    home.ctl_async(&["daemon", "restart"]).await.ok();
    std::fs::create_dir_all(&victim).unwrap();
    let work = home.work_dir();
    let cwd = work.to_str().unwrap();
    let out = home
        .ctl_async(&["send", "--json", "--cwd", cwd, "again"])
        .await
        .json();
    assert_eq!(out["answer"], "second");
    assert!(
        !victim.exists(),
        "approved forever: runs with nobody attached"
    );
}
