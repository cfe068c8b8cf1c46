//! The OpenAI-compatible API server, driven by the official `openai` Python SDK
//! (`tests/py/api_client.py`) against the real daemon and the fake model: chat completions with
//! a tool call inside the turn, streamed and not; a conversation continued by header and one
//! continued by resending its history; a run whose dangerous command is approved through
//! `/approval` while its events stream; the errors in OpenAI's shape; the run limit; a client
//! that hangs up mid-stream.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::{path::Path, process::Stdio, time::Duration};

use hermes_tests::{
    DaemonProcess, TestHome,
    fake_llm::{FakeLlm, Reply},
    http, wait,
};
use serde_json::Value;
use tokio::io::AsyncWriteExt;

const KEY: &str = "test-key-0123456789abcdef";
const WAIT: Duration = Duration::from_secs(30);

/// A home whose daemon serves the API on a free port; its base URL.
async fn serve(llm: &FakeLlm, extra: &str) -> (TestHome, DaemonProcess, String) {
    let home = TestHome::new();
    home.use_fake_model(llm, &format!("model:\n  context_length: 200000\n{extra}"));
    let port = http::free_port();
    home.write(
        ".env",
        &format!("API_SERVER_ENABLED=true\nAPI_SERVER_PORT={port}\nAPI_SERVER_KEY={KEY}\n"),
    );
    let daemon = DaemonProcess::start(&home, &[]);
    http::listening("the API server listens", port).await;
    (home, daemon, format!("http://127.0.0.1:{port}"))
}

/// Run a scenario of the SDK client; its JSON.
async fn client(base: &str, scenario: &str) -> Value {
    let output = sdk_client(base, scenario)
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap_or_else(|e| panic!("cannot run Python ({e}): {}", hermes_tests::PYTHON_HINT));
    client_json(output)
}

/// Run a scenario that calls `wait_for_go()`: it is told to go once `llm` has a model request,
/// so the scenario knows which run the first scripted reply went to.
async fn client_gated_on_model(base: &str, scenario: &str, llm: &FakeLlm) -> Value {
    let mut child = sdk_client(base, scenario)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run Python ({e}): {}", hermes_tests::PYTHON_HINT));
    let mut go = child.stdin.take().unwrap();
    let asked = llm.wait_for_requests(1, Duration::from_secs(30)).await;
    assert!(
        asked.iter().any(|r| r.path.ends_with("/chat/completions")),
        "the first run never reached the model: {asked:?}"
    );
    go.write_all(b"go\n").await.unwrap();
    drop(go);
    client_json(child.wait_with_output().await.unwrap())
}

fn sdk_client(base: &str, scenario: &str) -> tokio::process::Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("py/api_client.py");
    let mut command = hermes_tests::python();
    command.arg(script).arg(base).arg(KEY).arg(scenario);
    tokio::process::Command::from(command)
}

fn client_json(output: std::process::Output) -> Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the SDK client failed ({}):\n{stderr}",
        hermes_tests::PYTHON_HINT
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn tool_results(llm: &FakeLlm) -> Vec<String> {
    llm.chat_requests()
        .iter()
        .flat_map(|r| r.tool_results())
        .collect()
}

fn sessions(home: &TestHome) -> Vec<Value> {
    home.ctl(&["sessions", "list", "--json"])
        .json()
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sdk_chats_streams_and_keeps_conversations() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call("terminal", r#"{"command": "echo hi-from-shell"}"#),
        Reply::text("the shell said hi").with_usage(11, 5),
        Reply::text_chunks(&["streamed ", "again"]),
        Reply::text("first answer"),
        Reply::text("second answer"),
    ])
    .await;
    let (home, _daemon, base) = serve(&llm, "").await;
    let out = client(&base, "chat").await;

    let plain = &out["plain"];
    assert_eq!(plain["text"], "the shell said hi", "{out}");
    assert_eq!(plain["finish"], "stop");
    assert_eq!(plain["object"], "chat.completion");
    assert!(plain["id"].as_str().unwrap().starts_with("chatcmpl-"));
    // Both model calls of the turn count; the last one alone is 16.
    assert!(plain["usage"].as_u64().unwrap() >= 16, "{plain}");
    // The tool ran inside the turn: its output went back to the model.
    assert!(
        tool_results(&llm)
            .iter()
            .any(|r| r.contains("hi-from-shell")),
        "{:?}",
        tool_results(&llm)
    );
    let session = plain["session"].as_str().unwrap();
    assert!(session.starts_with("api-"), "{session}");

    let stream = &out["stream"];
    assert_eq!(stream["session"], session, "continued by header");
    assert_eq!(stream["roles"], serde_json::json!(["assistant"]));
    assert_eq!(stream["text"], "streamed again");
    assert_eq!(stream["finish"], serde_json::json!(["stop"]));
    assert_eq!(stream["usage_last"], true);
    assert_eq!(
        stream["objects"],
        serde_json::json!(["chat.completion.chunk"])
    );
    // The second request of the header-continued conversation carried the first exchange.
    let third = &llm.chat_requests()[2].body["messages"];
    let said: Vec<&str> = third
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        said.iter().any(|t| t.contains("say hi from the shell")),
        "{said:?}"
    );

    let resend = out["resend"].as_array().unwrap();
    assert_eq!(
        resend[0], resend[1],
        "one conversation for the resent history"
    );
    assert_eq!(resend[2], "second answer");
    assert_ne!(resend[0], session);
    // The resent conversation's second turn saw its first exchange once, not twice.
    let last = &llm.chat_requests()[4].body["messages"];
    let firsts = last
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["content"]
                .as_str()
                .is_some_and(|t| t.contains("first question"))
        })
        .count();
    assert_eq!(firsts, 1, "{last}");
    assert_eq!(out["models"], serde_json::json!(["hermes-agent"]));

    // Both conversations are sessions of source api_server.
    let listed = sessions(&home);
    for id in [session, resend[0].as_str().unwrap()] {
        let row = listed
            .iter()
            .find(|s| s["id"] == id)
            .unwrap_or_else(|| panic!("{id} not listed: {listed:?}"));
        assert_eq!(row["source"], "api_server", "{row}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_get_openai_shaped_errors() {
    let llm = FakeLlm::start(vec![]).await;
    let (_home, _daemon, base) = serve(&llm, "").await;
    let out = client(&base, "errors").await;
    assert_eq!(
        out["wrong_key"],
        serde_json::json!([401, "invalid_api_key"]),
        "{out}"
    );
    assert_eq!(
        out["missing_key"],
        serde_json::json!([401, "invalid_request_error"])
    );
    assert_eq!(out["bad_json"][0], 400);
    assert!(
        out["bad_json"][1]
            .as_str()
            .unwrap()
            .contains("Invalid JSON"),
        "{out}"
    );
    assert_eq!(out["no_messages"], serde_json::json!([400, "messages"]));
    assert_eq!(out["too_large"], serde_json::json!([413, true]));
    assert_eq!(out["not_found"], serde_json::json!([404, "not_found"]));
    assert_eq!(out["health"], serde_json::json!([200, "ok"]));
    assert_eq!(out["capabilities"], "hermes.api_server.capabilities");
    assert!(
        llm.chat_requests().is_empty(),
        "no request reached the model"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_beyond_the_limit_get_429_until_one_ends() {
    let llm = FakeLlm::start(vec![
        Reply::stall_before_headers(60_000),
        Reply::text("third is fine"),
    ])
    .await;
    let (_home, _daemon, base) = serve(
        &llm,
        "gateway:\n  api_server:\n    max_concurrent_runs: 1\n",
    )
    .await;
    let out = client_gated_on_model(&base, "busy", &llm).await;
    assert_eq!(out["status"], 429, "{out}");
    assert_eq!(out["retry_after"], "1");
    assert_eq!(out["type"], "rate_limit_error");
    assert_eq!(out["ended"], "run.cancelled");
    assert_eq!(out["after"], "third is fine");
}

#[tokio::test(flavor = "multi_thread")]
async fn stopping_a_queued_run_stops_that_run_alone_before_it_reaches_the_model() {
    let llm = FakeLlm::start(vec![
        Reply::stall_before_headers(60_000),
        Reply::text("the second run answered"),
    ])
    .await;
    let (_home, _daemon, base) = serve(&llm, "").await;
    let out = client(&base, "stop_queued").await;
    assert_eq!(out["first"], "run.cancelled", "{out}");
    assert_eq!(out["second"], "run.cancelled", "{out}");
    let asked: Vec<String> = llm
        .chat_requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        asked.iter().all(|body| !body.contains("second run")),
        "the stopped run reached the model: {asked:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_runs_dangerous_command_is_approved_while_its_events_stream() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call("terminal", r#"{"command": "rm -rf scratch-dir"}"#),
        Reply::text("cleaned up"),
    ])
    .await;
    let (home, _daemon, base) = serve(&llm, "").await;
    std::fs::create_dir_all(home.user_home().join("scratch-dir")).unwrap();
    let out = client(&base, "run_approval").await;
    let names: Vec<&str> = out["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    let at = |name: &str| {
        names
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("no {name}: {names:?}"))
    };
    assert!(at("approval.request") < at("(answered)"), "{names:?}");
    assert!(at("(answered)") < at("approval.responded"), "{names:?}");
    assert!(at("tool.started") < at("tool.completed"), "{names:?}");
    assert!(at("tool.completed") < at("run.completed"), "{names:?}");
    let request = &out["events"][at("approval.request")];
    assert!(
        request["command"]
            .as_str()
            .unwrap()
            .contains("rm -rf scratch-dir"),
        "{request}"
    );
    assert_eq!(out["events"][at("(answered)")]["status"], 200);
    assert_eq!(out["status"]["status"], "completed", "{out}");
    assert_eq!(out["status"]["output"], "cleaned up");
    assert_eq!(
        out["late_approval"],
        serde_json::json!([409, "approval_not_pending"])
    );
    // Approved once: the command ran.
    assert!(
        !home.user_home().join("scratch-dir").exists(),
        "{:?}",
        tool_results(&llm)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_hangs_up_mid_stream_leaves_the_turn_to_finish() {
    let llm = FakeLlm::start(vec![
        Reply::text_chunks(&["once ", "upon ", "a ", "time"]).with_delay_ms(200),
    ])
    .await;
    let (home, _daemon, base) = serve(&llm, "").await;
    let out = client(&base, "disconnect").await;
    assert!(!out["seen"].as_str().unwrap().is_empty(), "{out}");
    // The turn finished without its client and its answer is stored.
    let session = wait::until("the answer is stored", WAIT, || {
        let listed = sessions(&home);
        async move {
            listed
                .into_iter()
                .find(|s| s["source"] == "api_server" && s["message_count"].as_u64() >= Some(2))
        }
    })
    .await;
    let id = session["id"].as_str().unwrap();
    let shown = home.ctl(&["sessions", "show", id, "--json"]).json();
    assert!(shown.to_string().contains("once upon a time"), "{shown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn responses_chain_by_previous_response_id_and_can_be_fetched_and_deleted() {
    let llm = FakeLlm::start(vec![Reply::text("noted"), Reply::text("tangerine")]).await;
    let (home, _daemon, base) = serve(&llm, "").await;
    let out = client(&base, "responses").await;
    let first = out["first"].as_array().unwrap();
    assert!(first[0].as_str().unwrap().starts_with("resp_"), "{out}");
    assert_eq!(first[1], "response");
    assert_eq!(first[2], "completed");
    assert_eq!(first[3], "noted");
    assert_eq!(out["second"], serde_json::json!(["tangerine", first[0]]));
    assert_eq!(out["fetched"], "noted");
    assert_eq!(out["gone"], 404);
    assert_eq!(out["unknown_previous"], 404);
    // The second turn continued the first's conversation.
    let second = llm.chat_requests()[1].body["messages"].to_string();
    assert!(second.contains("remember the word tangerine"), "{second}");
    let api_sessions = sessions(&home)
        .into_iter()
        .filter(|s| s["source"] == "api_server")
        .count();
    assert_eq!(api_sessions, 1);
}

/// A process the agent runs that found the key (here it is given it) still cannot use the API:
/// its connection carries the agent's mark and is refused with 403, while the owner's client
/// with the same key is served.
#[tokio::test(flavor = "multi_thread")]
async fn the_agents_own_processes_are_refused_whatever_key_they_hold() {
    let probe = format!(
        "python3 -c \"import urllib.request as u, urllib.error as e\n\
         r = u.Request('BASE/v1/models', headers={{'Authorization': 'Bearer {KEY}'}})\n\
         try:\n    print('status', u.urlopen(r).status)\n\
         except e.HTTPError as x:\n    print('status', x.code)\""
    );
    let llm = FakeLlm::start(vec![]).await;
    let (home, _daemon, base) = serve(&llm, "").await;
    let probe = probe.replace("BASE", &base);
    llm.push(Reply::tool_call(
        "terminal",
        &serde_json::json!({ "command": probe }).to_string(),
    ));
    llm.push(Reply::text("tried"));
    let work = home.work_dir();
    let out = home
        .ctl_async(&[
            "send",
            "--json",
            "--yolo",
            "--cwd",
            work.to_str().unwrap(),
            "try the API",
        ])
        .await
        .json();
    assert_eq!(out["answer"], "tried", "{out}");
    let results = tool_results(&llm);
    assert!(
        results.iter().any(|r| r.contains("status 403")),
        "the agent's process is refused: {results:?}"
    );
    let owner = reqwest_free_status(&format!("{base}/v1/models")).await;
    assert_eq!(owner, 200, "the owner's client with the same key is served");
}

/// The status of a GET with the key, from the test process itself (the owner).
async fn reqwest_free_status(url: &str) -> u16 {
    let script = format!(
        "import urllib.request as u\nr = u.Request('{url}', headers={{'Authorization': 'Bearer {KEY}'}})\nprint(u.urlopen(r).status)"
    );
    let out = tokio::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .await
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}
