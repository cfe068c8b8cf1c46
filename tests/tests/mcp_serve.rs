//! `hermesctl mcp serve` driven by the official `mcp` Python SDK (tests/py/mcp_serve_client.py)
//! over stdio, as Claude Code or another agent drives it: the real daemon with the fake model
//! behind it. A missing Python or SDK fails the test with the way to provision it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::path::Path;

use hermes_proto::pb;
use hermes_tests::{
    DaemonProcess, TestHome,
    daemon::connect,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};
use serde_json::Value;

const HINT: &str = "the MCP serve test needs Python with the official `mcp` SDK \
    (tests/requirements.txt): run it with `scripts/test`, which provisions a venv, or set \
    HERMESD_TEST_PYTHON to such an interpreter";

/// Run the SDK client in `mode` with `args`; its JSON report.
async fn client(home: &TestHome, mode: &str, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("py/mcp_serve_client.py");
    let hermesctl = hermes_tests::binary("hermesctl");
    let mut command = hermes_tests::python();
    command
        .arg(script)
        .arg(mode)
        .arg(hermesctl)
        .args(args)
        .env("HERMES_HOME", home.path())
        .env("HOME", home.user_home());
    let output = tokio::process::Command::from(command)
        .output()
        .await
        .unwrap_or_else(|e| panic!("cannot run Python ({e}): {HINT}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the SDK client failed ({HINT}):\n{stderr}"
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

fn body<'a>(report: &'a Value, call: &str) -> &'a Value {
    assert_eq!(report[call]["is_error"], false, "{call}: {}", report[call]);
    &report[call]["body"]
}

fn error(report: &Value, call: &str) -> String {
    assert_eq!(report[call]["is_error"], true, "{call}: {}", report[call]);
    report[call]["body"]["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{call}: no error text in {}", report[call]))
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_client_lists_reads_sends_and_searches_through_the_daemon() {
    let llm = FakeLlm::start(vec![
        Reply::tool_call("terminal", r#"{"command": "rm -rf victim"}"#),
        Reply::text("We ship zephyr on Friday."),
        Reply::text("A fresh start."),
    ])
    .await;
    let home = TestHome::new();
    home.use_fake_model(&llm, "");
    let _daemon = DaemonProcess::start(&home, &[]);
    let victim = home.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    let session = pb::sessions_client::SessionsClient::new(connect(&home.socket()).await)
        .create(pb::CreateSessionRequest {
            source: "cli".into(),
            cwd: home.path().display().to_string(),
            title: "Release planning".into(),
            model: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    let id = session.id.as_str();
    let socket = home.socket();
    let cwd = home.path().display().to_string();
    let report = client(&home, "full", &[socket.to_str().unwrap(), id, &cwd]).await;

    assert_eq!(report["server"]["name"], "hermes");
    let tools = report["tools"].as_object().unwrap();
    let mut names: Vec<&str> = tools.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "conversation_get",
            "conversation_send",
            "conversations_list",
            "messages_read",
            "messages_search"
        ]
    );
    assert_eq!(tools["messages_read"]["required"][0], "session_key");
    assert_eq!(tools["conversation_send"]["required"][0], "message");
    assert_eq!(tools["conversations_list"]["read_only"], true);
    assert_eq!(tools["conversation_send"]["read_only"], false);

    let listed = body(&report, "listed");
    assert_eq!(listed["count"], 1, "{listed}");
    let first = &listed["conversations"][0];
    assert_eq!(first["session_key"], id);
    assert_eq!(first["display_name"], "Release planning");
    assert_eq!(first["platform"], "cli");
    assert_eq!(body(&report, "filtered")["count"], 1);

    // The turn ran with the daemon's approval rules: nobody can approve from the bridge.
    let sent = body(&report, "sent");
    assert_eq!(sent["answer"], "We ship zephyr on Friday.", "{sent}");
    assert_eq!(sent["session_key"], id);
    assert_eq!(sent["tool_calls"], 1);
    assert!(victim.exists(), "the dangerous command ran");
    let refused = llm.chat_requests()[1].tool_results().pop().unwrap();
    assert!(refused.contains("no interactive user"), "{refused}");

    let read = body(&report, "read");
    assert_eq!(read["session_key"], id);
    assert_eq!(read["count"], 2, "{read}");
    assert_eq!(read["total_in_session"], 2, "{read}");
    assert_eq!(read["messages"][0]["role"], "user");
    assert_eq!(
        read["messages"][0]["content"],
        "When do we ship the zephyr release?"
    );
    assert_eq!(read["messages"][1]["role"], "assistant");
    assert_eq!(read["messages"][1]["content"], "We ship zephyr on Friday.");
    // A limit keeps the newest messages.
    let last = body(&report, "read_last");
    assert_eq!(last["count"], 1, "{last}");
    assert_eq!(last["total_in_session"], 2, "{last}");
    assert_eq!(last["messages"][0]["content"], "We ship zephyr on Friday.");

    let got = body(&report, "got");
    assert_eq!(got["session_key"], id);
    assert_eq!(got["display_name"], "Release planning");
    assert_eq!(got["message_count"].as_u64().unwrap(), 4, "{got}");

    let search = body(&report, "search");
    assert_eq!(search["results"][0]["session_key"], id, "{search}");
    assert!(
        search["results"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("«zephyr»"),
        "{search}"
    );

    // Without a session key the bridge starts a conversation of its own.
    let new = body(&report, "new");
    assert_eq!(new["answer"], "A fresh start.");
    assert_ne!(new["session_key"], id);
    assert_eq!(body(&report, "new_got")["platform"], "mcp");

    assert_eq!(
        error(&report, "unknown_read"),
        "Conversation not found: no-such-session"
    );
    assert_eq!(
        error(&report, "unknown_send"),
        "Conversation not found: no-such-session"
    );
    assert!(error(&report, "missing_arg").contains("\"session_key\" is required"));
    let oversized = error(&report, "oversized");
    assert!(oversized.contains("the limit is 1000000"), "{oversized}");
    assert!(
        report["unknown_tool"]
            .as_str()
            .unwrap()
            .contains("no_such_tool"),
        "{}",
        report["unknown_tool"]
    );
    assert_eq!(body(&report, "after")["count"], 2);
    assert_eq!(llm.remaining(), 0, "every scripted reply was used");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_daemon_calls_are_tool_errors_and_the_server_lives_on() {
    let home = TestHome::new();
    // No daemon can be started there: its directory cannot be made.
    let socket = "/proc/hermesd-none/hermesd.sock";
    let report = client(&home, "down", &[socket]).await;
    assert_eq!(report["tools"].as_array().unwrap().len(), 5, "{report}");
    for call in ["first", "second"] {
        let text = error(&report, call);
        assert!(
            text.contains("hermesd is not running and could not be started"),
            "{call}: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_call_starts_the_daemon_like_any_hermesctl_command() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let socket = home.socket();
    let report = client(&home, "down", &[socket.to_str().unwrap()]).await;
    assert_eq!(body(&report, "first")["count"], 0, "{report}");
    assert_eq!(body(&report, "second")["count"], 0, "{report}");
    // The daemon it started outlives the MCP session (`daemon status` fails when none runs).
    home.ctl(&["daemon", "status"]).ok();
}
