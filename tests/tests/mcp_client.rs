//! The daemon as an MCP client, against real servers the test command provisions:
//! `@modelcontextprotocol/server-everything` (npm, over stdio and Streamable HTTP),
//! `mcp-server-time` (PyPI) and `tests/py/mcp_changing_server.py` (the official `mcp` SDK: a
//! tool that adds a tool, one that never answers). The fake model calls their tools through a
//! real turn; the requests it receives show what the model saw. A missing peer fails the test
//! with the way to provision it — never a skip.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::{path::PathBuf, time::Duration};

use hermes_proto::pb::{self, client_frame, session_event::Kind};
use hermes_tests::{
    TestHome,
    events::{self, Attached},
    fake_llm::{FakeLlm, Reply, ToolCall},
    fifo::Fifo,
    home::StopOnDrop,
};
use serde_json::Value;

const HINT: &str = "run the tests with scripts/test, which installs the MCP servers \
    (tests/npm with npm ci, mcp-server-time in the test venv)";

/// server-everything's entry point.
fn everything() -> String {
    let modules = std::env::var("HERMESD_TEST_NODE_MODULES")
        .unwrap_or_else(|_| panic!("HERMESD_TEST_NODE_MODULES is not set: {HINT}"));
    let entry =
        PathBuf::from(modules).join("@modelcontextprotocol/server-everything/dist/index.js");
    assert!(entry.exists(), "{} is missing: {HINT}", entry.display());
    entry.display().to_string()
}

/// `mcp-server-time` beside the test venv's Python.
fn time_server() -> String {
    let python = std::env::var("HERMESD_TEST_PYTHON")
        .unwrap_or_else(|_| panic!("HERMESD_TEST_PYTHON is not set: {HINT}"));
    let server = PathBuf::from(python).with_file_name("mcp-server-time");
    assert!(server.exists(), "{} is missing: {HINT}", server.display());
    server.display().to_string()
}

/// `tests/py/mcp_changing_server.py` run by the test venv's Python, as YAML for a server's
/// `command` and `args` (its signal file, if any, after the script).
fn changing_server(signal: Option<&std::path::Path>) -> String {
    let python = std::env::var("HERMESD_TEST_PYTHON")
        .unwrap_or_else(|_| panic!("HERMESD_TEST_PYTHON is not set: {HINT}"));
    assert!(
        PathBuf::from(&python).exists(),
        "{python} is missing: {HINT}"
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("py/mcp_changing_server.py");
    let mut args = vec![script.display().to_string()];
    args.extend(signal.map(|s| s.display().to_string()));
    format!(
        "command: {python}\n    args: {}",
        serde_json::to_string(&args).unwrap()
    )
}

async fn servers(home: &TestHome) -> Vec<Value> {
    home.ctl_async(&["mcp", "list", "--json"])
        .await
        .json()
        .as_array()
        .cloned()
        .unwrap()
}

/// Ask until `server` is in `state` (servers connect in the background), at most 60 s.
async fn wait_for_state(home: &TestHome, server: &str, state: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let listed = servers(home).await;
        if let Some(s) = listed
            .iter()
            .find(|s| s["name"] == server && s["state"] == state)
        {
            return s.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{server} never became {state}: {listed:?} (a server that cannot start: {HINT})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_tools_reach_the_model_and_answer_with_the_servers_own_results() {
    let llm = FakeLlm::start(vec![
        Reply::tool_calls(vec![
            ToolCall::new("mcp__everything__echo", r#"{"message":"hello mcp"}"#),
            ToolCall::new("mcp__everything__get_env", "{}"),
            ToolCall::new("mcp__time__get_current_time", r#"{"timezone":"UTC"}"#),
            ToolCall::new("mcp__everything__get_tiny_image", "{}"),
        ]),
        Reply::text("done"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.write(".env", "OPENROUTER_API_KEY=sk-or-provider-secret-0001\n");
    home.use_fake_model(
        &llm,
        &format!(
            "mcp_servers:\n  everything:\n    command: node\n    args: [{}, stdio]\n  time:\n    command: {}\n    tools:\n      exclude: [convert_time]\n  broken:\n    command: /nonexistent/mcp-server\n",
            everything(),
            time_server()
        ),
    );
    let sent = home.ctl_async(&["send", "use the tools"]).await.ok();
    assert!(sent.contains("done"), "{sent}");

    let requests = llm.requests();
    let tools = tool_names(&requests[0].body);
    for wanted in [
        "mcp__everything__echo",
        "mcp__everything__get_env",
        "mcp__everything__list_resources",
        "mcp__everything__read_resource",
        "mcp__everything__get_prompt",
        "mcp__time__get_current_time",
        "terminal",
    ] {
        assert!(
            tools.iter().any(|t| t == wanted),
            "{wanted} missing from {tools:?}"
        );
    }
    assert!(
        !tools.iter().any(|t| t == "mcp__time__convert_time"),
        "the excluded tool was offered: {tools:?}"
    );
    let results = requests[1].tool_results();
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(results[0].contains("Echo: hello mcp"), "{}", results[0]);
    // The server's environment: the safe base, no provider key, no daemon variable.
    assert!(results[1].contains("PATH"), "{}", results[1]);
    assert!(
        !results[1].contains("sk-or-provider-secret"),
        "{}",
        results[1]
    );
    assert!(!results[1].contains("HERMES_HOME"), "{}", results[1]);
    assert!(results[2].contains("UTC"), "{}", results[2]);
    // The image is saved in the home's cache and named to the model.
    let image: Value = serde_json::from_str(&results[3]).unwrap();
    let text = image["result"].as_str().unwrap();
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("MEDIA:"))
        .unwrap_or_else(|| panic!("no image in {text}"));
    let spill_root = home.path().join("cache/tool-results");
    assert!(path.starts_with(spill_root.to_str().unwrap()), "{path}");
    assert!(
        std::fs::read(path).unwrap().starts_with(b"\x89PNG"),
        "{path}"
    );

    // The broken server is reported and delayed nothing else.
    let broken = wait_for_state(&home, "broken", "failed").await;
    assert!(
        broken["error"].as_str().unwrap().contains("cannot start"),
        "{broken}"
    );
    let status = home.ctl_async(&["status"]).await.ok();
    assert!(status.contains("everything: connected"), "{status}");
}

/// The pid of the process whose working directory is `dir`.
fn pid_with_cwd(dir: &std::path::Path) -> Option<i32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            (cwd == dir).then_some(pid)
        })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_server_is_reported_and_comes_back_and_a_silent_one_times_out() {
    let llm = FakeLlm::start(vec![Reply::text("unused")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let dir = home.path().join("time-server");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    home.use_fake_model(
        &llm,
        &format!(
            "mcp_servers:\n  time:\n    command: {}\n    cwd: {}\n  silent:\n    command: sleep\n    args: ['3600']\n    connect_timeout: 1\n",
            time_server(),
            dir.display()
        ),
    );
    home.ctl_async(&["status"]).await;
    wait_for_state(&home, "time", "connected").await;
    let silent = wait_for_state(&home, "silent", "failed").await;
    assert!(
        silent["error"]
            .as_str()
            .unwrap()
            .contains("connect timeout"),
        "{silent}"
    );

    let pid = pid_with_cwd(&dir).expect("the time server's process");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let failed = wait_for_state(&home, "time", "failed").await;
    assert!(
        failed["error"].as_str().unwrap().contains("ended"),
        "{failed}"
    );
    let back = wait_for_state(&home, "time", "connected").await;
    assert_eq!(back["tools"].as_array().unwrap().len(), 2, "{back}");
    let again = pid_with_cwd(&dir).expect("the restarted server");
    assert_ne!(again, pid);
    // Each start leaves a header in the stderr log (what the server says follows it).
    let log = std::fs::read_to_string(home.path().join("logs/mcp-stderr.log")).unwrap();
    assert!(
        log.matches("starting MCP server 'time'").count() >= 2,
        "{log}"
    );
}

#[test]
fn mcp_add_and_rm_edit_config_yaml_keeping_the_rest() {
    let home = TestHome::new();
    home.write("config.yaml", "# mine\nmodel:\n  default: m\n");
    let added = home.ctl(&[
        "mcp",
        "add",
        "fs",
        "--command",
        "npx",
        "--env",
        "TOKEN=${GH}",
        "--args",
        "-y",
        "server-fs",
        "/tmp",
    ]);
    assert!(added.ok().contains("fs added to"), "{}", added.stdout());
    let text = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    assert!(text.starts_with("# mine\n"), "{text}");
    let tree: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let fs = &tree["mcp_servers"]["fs"];
    assert_eq!(fs["command"], "npx");
    assert_eq!(
        fs["args"],
        serde_yaml::to_value(["-y", "server-fs", "/tmp"]).unwrap()
    );
    assert_eq!(fs["env"]["TOKEN"], "${GH}");
    home.ctl(&["mcp", "rm", "fs"]).ok();
    let text = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    assert!(!text.contains("fs"), "{text}");
    assert!(text.contains("default: m"), "{text}");
    let missing = home.ctl(&["mcp", "rm", "fs"]);
    assert!(
        missing.err().contains("no MCP server"),
        "{}",
        missing.stderr()
    );
}

/// server-everything over Streamable HTTP, through the daemon's own HTTP client, twice: once
/// with `tools.include`, once with `tools.exclude`.
#[tokio::test(flavor = "multi_thread")]
async fn a_streamable_http_server_answers_a_turn() {
    let port = hermes_tests::http::free_port();
    let mut server = tokio::process::Command::new("node")
        .arg(everything())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs server-everything");
    hermes_tests::http::listening("server-everything over HTTP", port).await;
    let llm = FakeLlm::start(vec![
        Reply::tool_call("mcp__web__echo", r#"{"message":"over http"}"#),
        Reply::text("done"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &llm,
        &format!(
            "mcp_servers:\n  web:\n    url: http://127.0.0.1:{port}/mcp\n    tools:\n      include: [echo]\n  webx:\n    url: http://127.0.0.1:{port}/mcp\n    tools:\n      exclude: [echo, get-env]\n"
        ),
    );
    let sent = home.ctl_async(&["send", "echo it"]).await.ok();
    assert!(sent.contains("done"), "{sent}");
    let requests = llm.requests();
    let tools = tool_names(&requests[0].body);
    let mcp: Vec<&String> = tools
        .iter()
        .filter(|t| t.starts_with("mcp__web__"))
        .collect();
    // include keeps echo alone among the server's own tools (its resource and prompt tools stay).
    assert!(mcp.iter().any(|t| *t == "mcp__web__echo"), "{tools:?}");
    assert!(!mcp.iter().any(|t| *t == "mcp__web__get_sum"), "{tools:?}");
    // exclude, over the same transport, drops just the names it gives (the server's own names).
    assert!(tools.iter().any(|t| t == "mcp__webx__get_sum"), "{tools:?}");
    for dropped in ["mcp__webx__echo", "mcp__webx__get_env"] {
        assert!(!tools.iter().any(|t| t == dropped), "{tools:?}");
    }
    let results = requests[1].tool_results();
    assert!(results[0].contains("Echo: over http"), "{results:?}");
    let listed = wait_for_state(&home, "web", "connected").await;
    assert_eq!(listed["transport"], "http");
    server.kill().await.ok();
}

/// The JSON of the tools a request offered, to compare requests byte for byte.
fn tools_json(request: &hermes_tests::fake_llm::RecordedRequest) -> String {
    serde_json::to_string(&request.body["tools"]).unwrap()
}

/// Wait until the daemon lists `tool` among `server`'s tools (it lists them again in the
/// background after the server says they changed).
async fn wait_for_tool(home: &TestHome, server: &str, tool: &str) {
    hermes_tests::wait::until(
        &format!("the daemon lists {server}'s tool {tool}"),
        Duration::from_secs(30),
        || async {
            let listed = servers(home).await;
            let entry = listed.iter().find(|s| s["name"] == server)?;
            entry["tools"]
                .as_array()?
                .iter()
                .any(|t| t == tool)
                .then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_the_server_adds_reaches_later_sessions_while_a_running_turn_keeps_its_tools() {
    let llm = FakeLlm::start(vec![
        // The running turn: `grow` adds the tool `added`; the turn then waits on the user
        // (clarify) until the daemon has listed the new tool, and asks the model once more.
        Reply::tool_call("mcp__changing__grow", "{}"),
        Reply::tool_call("clarify", r#"{"question": "go on?"}"#),
        Reply::text("grown"),
        // A session started after: the new tool is offered and answers.
        Reply::tool_call("mcp__changing__added", "{}"),
        Reply::text("done"),
        // The first conversation's next turn, still loaded: its tools as they were.
        Reply::text("same tools"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &llm,
        &format!(
            "mcp_servers:\n  changing:\n    {}\n    tools:\n      exclude: [hang]\n",
            changing_server(None)
        ),
    );
    home.ctl_async(&["status"]).await.ok();
    wait_for_state(&home, "changing", "connected").await;
    let (session, mut client) = turn_of(&home, home.path()).await;
    let seen = client.until("clarify_requested").await;
    let Some(Kind::ClarifyRequested(question)) = seen.last().unwrap().kind.clone() else {
        unreachable!()
    };
    wait_for_tool(&home, "changing", "added").await;
    client
        .send(client_frame::Kind::ClarifyResponse(pb::ClarifyResponse {
            id: question.id,
            answer: "yes".into(),
        }))
        .await;
    client.until("turn_finished").await;
    let sent = home.ctl_async(&["send", "use the new tool"]).await.ok();
    assert!(sent.contains("done"), "{sent}");
    let again = home
        .ctl_async(&["send", "--session", &session.id, "once more"])
        .await
        .ok();
    assert!(again.contains("same tools"), "{again}");

    let requests = llm.chat_requests();
    assert_eq!(requests.len(), 6, "{requests:?}");
    let before = tool_names(&requests[0].body);
    for offered in ["mcp__changing__grow", "mcp__changing__echo"] {
        assert!(before.iter().any(|t| t == offered), "{before:?}");
    }
    // exclude keeps `hang` out, before the change and after.
    for absent in ["mcp__changing__hang", "mcp__changing__added"] {
        assert!(!before.iter().any(|t| t == absent), "{before:?}");
    }
    // The running turn's tools stay as they were, byte for byte, also in its request made
    // after the daemon knew the new tool.
    assert_eq!(tools_json(&requests[1]), tools_json(&requests[0]));
    assert_eq!(tools_json(&requests[2]), tools_json(&requests[0]));
    let after = tool_names(&requests[3].body);
    assert!(
        after.iter().any(|t| t == "mcp__changing__added"),
        "{after:?}"
    );
    assert!(
        !after.iter().any(|t| t == "mcp__changing__hang"),
        "{after:?}"
    );
    let results = requests[4].tool_results();
    assert!(results[0].contains("added answers"), "{results:?}");
    // A conversation loaded before the change keeps its tools on its next turn too (its
    // requests stay byte-stable for the provider's prompt cache).
    assert_eq!(tools_json(&requests[5]), tools_json(&requests[0]));
}

/// A new session in `cwd` with a turn under way ("go"), attached to read its events.
async fn turn_of(home: &TestHome, cwd: &std::path::Path) -> (pb::Session, Attached) {
    home.ctl_async(&["status"]).await.ok();
    let session = events::create_session(&home.socket(), cwd).await;
    let mut client = Attached::open(&home.socket(), &session.id, 0, false).await;
    client.until("replay_done").await;
    client
        .send(client_frame::Kind::UserInput(pb::UserInput {
            text: "go".into(),
            ..pb::UserInput::default()
        }))
        .await;
    (session, client)
}

fn finished(events: &[pb::SessionEvent]) -> Vec<pb::ToolFinished> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(Kind::ToolFinished(f)) => Some(f.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_that_never_answers_times_out_without_holding_up_the_other_calls_of_its_step() {
    let home = TestHome::new();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("note.txt"), "a fast read\n").unwrap();
    let mut signal = Fifo::create(&home.path().join("signal"), true);
    let llm = FakeLlm::start(vec![
        Reply::tool_calls(vec![
            ToolCall::new("mcp__slow__hang", "{}").with_id("hang"),
            ToolCall::new("mcp__slow__echo", r#"{"message":"beside"}"#).with_id("echo"),
            ToolCall::new("read_file", r#"{"path":"note.txt"}"#).with_id("read"),
        ]),
        Reply::text("done"),
    ])
    .await;
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &llm,
        &format!(
            "mcp_servers:\n  slow:\n    {}\n    timeout: 4\n    tools:\n      include: [hang, echo]\n",
            changing_server(Some(signal.path()))
        ),
    );
    let (_session, mut client) = turn_of(&home, work.path()).await;
    signal.read_until("hang started").await;
    // The echo beside it is answered while the hanging call still waits for its timeout.
    signal.read_until("echo beside").await;
    let seen = String::from_utf8_lossy(&signal.seen).into_owned();
    assert!(
        !seen.contains("hang cancelled"),
        "the sibling call ran only after the hanging one ended: {seen}"
    );
    let events = client.until("turn_finished").await;
    // At the timeout, rmcp tells the server (notifications/cancelled).
    signal.read_until("hang cancelled").await;

    let done = finished(&events);
    assert_eq!(
        done.iter().map(|f| f.call_id.as_str()).collect::<Vec<_>>(),
        ["hang", "echo", "read"]
    );
    // Every call started before any finished: the step ran as one batch.
    let first_finish = events
        .iter()
        .position(|e| matches!(e.kind, Some(Kind::ToolFinished(_))))
        .unwrap();
    let starts = events[..first_finish]
        .iter()
        .filter(|e| matches!(e.kind, Some(Kind::ToolStarted(_))))
        .count();
    assert_eq!(starts, 3, "{events:?}");
    assert!(done[1].ok && done[2].ok, "{done:?}");
    assert!(
        done[1].duration_ms < 4_000 && done[2].duration_ms < 4_000,
        "{done:?}"
    );
    let requests = llm.chat_requests();
    let results = requests[1].tool_results();
    assert!(
        results[0].contains("MCP call timed out")
            && results[0].contains("configured timeout: 4.0s"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("Echo: beside"), "{}", results[1]);
    assert!(results[2].contains("a fast read"), "{}", results[2]);
    // include kept the server's other tools out.
    let offered = tool_names(&requests[0].body);
    assert!(
        !offered.iter().any(|t| t == "mcp__slow__grow"),
        "{offered:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupt_cancels_the_call_in_flight_on_the_server_which_stays_connected() {
    let home = TestHome::new();
    let mut signal = Fifo::create(&home.path().join("signal"), true);
    let llm = FakeLlm::start(vec![
        Reply::tool_call("mcp__slow__hang", "{}"),
        Reply::text("unused"),
    ])
    .await;
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &llm,
        &format!(
            "mcp_servers:\n  slow:\n    {}\n",
            changing_server(Some(signal.path()))
        ),
    );
    let (_session, mut client) = turn_of(&home, home.path()).await;
    signal.read_until("hang started").await;
    client
        .send(client_frame::Kind::Interrupt(pb::InterruptTurn {}))
        .await;
    let events = client.until("turn_interrupted").await;
    let done = finished(&events);
    assert_eq!(done.len(), 1, "{events:?}");
    assert!(!done[0].ok, "{done:?}");
    // The server hears of it (notifications/cancelled) while its connection stays up.
    signal.read_until("hang cancelled").await;
    let slow = wait_for_state(&home, "slow", "connected").await;
    assert_eq!(slow["error"], Value::Null, "{slow}");
    let log = std::fs::read_to_string(home.path().join("logs/mcp-stderr.log")).unwrap();
    assert_eq!(
        log.matches("starting MCP server 'slow'").count(),
        1,
        "the server was not restarted: {log}"
    );
    assert_eq!(
        llm.chat_requests().len(),
        1,
        "no model call after the interrupt"
    );
}
