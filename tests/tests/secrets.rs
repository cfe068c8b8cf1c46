//! Secrets out of reach, through the real daemon: keys from `$HERMES_HOME/.env` (a key-shaped
//! one and one of no known shape) printed by a command, read from a file, printed by a
//! background process, streamed to an attached client or written to the log are masked
//! everywhere; a 7-character value is not; `security.redact_secrets: false` turns it off; a key
//! added to `.env` is masked after a reload.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_proto::pb::{self, client_frame, session_event::Kind};
use hermes_tests::{
    TestHome,
    events::{self, Attached},
    fake_llm::{FakeLlm, RecordedRequest, Reply},
    home::StopOnDrop,
};
use serde_json::json;

const CANARY_KEY: &str = "sk-canary-7f3a9c2e4b1d6a8f";
const CANARY_TOKEN: &str = "zzcanaryvalue123";
/// Seven characters: too short to mask.
const SHORT: &str = "seven77";

/// A home whose `.env` holds the canaries, and a directory outside it with a file of them.
fn setup(server: &FakeLlm, extra: &str) -> (TestHome, tempfile::TempDir) {
    let home = TestHome::new();
    home.use_fake_model(
        server,
        &format!("logging:\n  level: info,hermesd=debug\n{extra}"),
    );
    home.write(
        ".env",
        &format!(
            "CANARY_API_KEY={CANARY_KEY}\nMY_SERVICE_TOKEN={CANARY_TOKEN}\nSHORT_TOKEN={SHORT}\n"
        ),
    );
    let work = tempfile::tempdir_in("/tmp").unwrap();
    std::fs::write(
        work.path().join("keys.txt"),
        format!("api={CANARY_KEY}\ntoken={CANARY_TOKEN}\nshort={SHORT}\n"),
    )
    .unwrap();
    (home, work)
}

fn call(name: &str, args: serde_json::Value) -> Reply {
    Reply::tool_call(name, &args.to_string())
}

/// A command printing both canaries without either appearing whole in its text.
const PRINT_SPLIT: &str =
    "printf '%s%s %s%s\\n' 'zzcanary' 'value123' 'sk-canary-' '7f3a9c2e4b1d6a8f'";

fn assert_no_canary(what: &str, text: &str) {
    for canary in [CANARY_KEY, CANARY_TOKEN] {
        assert!(
            !text.contains(canary),
            "{canary} leaked into {what}: {text}"
        );
    }
}

fn bodies(requests: &[RecordedRequest]) -> Vec<String> {
    requests.iter().map(|r| r.body.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_printed_or_read_by_tools_never_reach_the_model() {
    let server = FakeLlm::start(vec![]).await;
    let (home, work) = setup(&server, "");
    let _stop = StopOnDrop(&home);
    let keys = work.path().join("keys.txt").display().to_string();
    let dir = work.path().display().to_string();
    for reply in [
        call("terminal", json!({"command": "env"})),
        call("terminal", json!({"command": format!("cat {keys}")})),
        call("terminal", json!({"command": PRINT_SPLIT})),
        call("read_file", json!({"path": keys})),
        call("search_files", json!({"pattern": "canary", "path": dir})),
        Reply::text("done"),
    ] {
        server.push(reply);
    }
    let out = home.ctl_async(&["send", "--json", "look"]).await.json();
    assert_eq!(out["answer"], "done");
    let requests = server.chat_requests();
    for body in bodies(&requests) {
        assert_no_canary("a model request", &body);
    }
    let results = requests.last().unwrap().tool_results();
    let (cat, printed, read, found) = (&results[1], &results[2], &results[3], &results[4]);
    assert!(
        cat.contains("sk-can...6a8f") && cat.contains("token=***"),
        "{cat}"
    );
    assert!(
        cat.contains(SHORT),
        "a 7-character value is left alone: {cat}"
    );
    assert!(printed.contains("*** sk-can...6a8f"), "{printed}");
    assert!(
        read.contains("«redacted:sk-…»") && read.contains("«redacted-secret»"),
        "{read}"
    );
    assert!(found.contains("«redacted"), "{found}");
    assert_no_canary("search results", found);
    // The transcript a client reads back is the masked one too.
    let id = out["session_id"].as_str().unwrap();
    let shown = home
        .ctl_async(&["sessions", "show", id, "--json"])
        .await
        .ok();
    assert!(shown.contains("sk-can...6a8f"), "{shown}");
    assert_no_canary("the transcript", &shown);
    let stored = events::stored(&home.socket(), id).await;
    assert_no_canary("the stored events", &format!("{stored:?}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_process_printing_a_key_is_masked_when_read() {
    let server = FakeLlm::start(vec![
        call(
            "terminal",
            json!({"command": PRINT_SPLIT, "background": true}),
        ),
        Reply::text("started"),
    ])
    .await;
    let (home, _work) = setup(&server, "");
    let _stop = StopOnDrop(&home);
    let out = home.ctl_async(&["send", "--json", "start it"]).await.json();
    let id = out["session_id"].as_str().unwrap().to_string();
    let started: serde_json::Value =
        serde_json::from_str(&server.requests()[1].tool_results()[0]).unwrap();
    let proc_id = started["session_id"].as_str().unwrap().to_string();
    for args in [
        json!({"action": "wait", "session_id": proc_id, "timeout": 20}),
        json!({"action": "log", "session_id": proc_id}),
        json!({"action": "poll", "session_id": proc_id}),
    ] {
        server.push(call("process", args));
        server.push(Reply::text("next"));
        home.ctl_async(&["send", "--session", &id, "next"])
            .await
            .ok();
    }
    let requests = server.chat_requests();
    let results = requests.last().unwrap().tool_results();
    assert_eq!(results.len(), 4, "{results:?}");
    for result in &results[1..] {
        assert!(result.contains("sk-can...6a8f"), "{result}");
        assert_no_canary("a process result", result);
    }
    for body in bodies(&requests) {
        assert_no_canary("a model request", &body);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn streamed_output_is_masked_even_when_a_key_is_split_between_reads() {
    // The token's two halves are printed half a second apart: two reads, two chunks.
    let command = format!("printf 'zzcanary'; sleep 0.5; printf 'value123\\n'; {PRINT_SPLIT}");
    let server = FakeLlm::start(vec![
        call("terminal", json!({"command": command})),
        Reply::text("printed"),
    ])
    .await;
    let (home, work) = setup(&server, "");
    let _stop = StopOnDrop(&home);
    home.ctl_async(&["status"]).await.ok();
    let session = events::create_session(&home.socket(), work.path()).await;
    let mut client = Attached::open(&home.socket(), &session.id, 0, false).await;
    client.until("replay_done").await;
    client
        .send(client_frame::Kind::UserInput(pb::UserInput {
            text: "print".into(),
            ..pb::UserInput::default()
        }))
        .await;
    let seen = client.until("turn_finished").await;
    let streamed: String = seen
        .iter()
        .filter_map(|e| match &e.kind {
            Some(Kind::ToolOutput(o)) => Some(o.chunk.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "***\n*** sk-can...6a8f\n", "{seen:?}");
    assert_no_canary("the client's events", &format!("{seen:?}"));
}

/// The log once it holds `needle` `count` times (the writer is a background thread).
async fn log_with(home: &TestHome, needle: &str, count: usize) -> String {
    let path = home.path().join("logs").join("hermesd.log");
    let what = format!("the log holds {count} × {needle:?}");
    hermes_tests::wait::until(&what, std::time::Duration::from_secs(10), || {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let found = text.matches(needle).count() >= count;
        async move { found.then_some(text) }
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_log_never_holds_a_key() {
    let server = FakeLlm::start(vec![]).await;
    let (home, work) = setup(&server, "");
    let _stop = StopOnDrop(&home);
    let keys = work.path().join("keys.txt").display().to_string();
    // The second call's arguments carry the token itself: logged as the model wrote them,
    // masked by the log writer.
    for reply in [
        call("terminal", json!({"command": format!("cat {keys}")})),
        call(
            "terminal",
            json!({"command": format!("echo {CANARY_TOKEN} > /dev/null")}),
        ),
        Reply::text("done"),
    ] {
        server.push(reply);
    }
    home.ctl_async(&["send", "look"]).await.ok();
    let log = log_with(&home, "tool result", 2).await;
    assert!(
        log.contains("tool call") && log.contains("echo *** > /dev/null"),
        "{log}"
    );
    assert_no_canary("the log", &log);
}

#[tokio::test(flavor = "multi_thread")]
async fn redact_secrets_false_turns_masking_off() {
    let server = FakeLlm::start(vec![]).await;
    let (home, work) = setup(&server, "security:\n  redact_secrets: false\n");
    let _stop = StopOnDrop(&home);
    let keys = work.path().join("keys.txt").display().to_string();
    server.push(call("terminal", json!({"command": format!("cat {keys}")})));
    server.push(Reply::text("done"));
    home.ctl_async(&["send", "look"]).await.ok();
    let result = server.chat_requests()[1].tool_results().pop().unwrap();
    assert!(
        result.contains(CANARY_KEY) && result.contains(CANARY_TOKEN),
        "{result}"
    );
    log_with(&home, "redact_secrets is off", 1).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_added_to_env_is_masked_after_a_reload() {
    let server = FakeLlm::start(vec![Reply::text("hello")]).await;
    let (home, work) = setup(&server, "");
    let _stop = StopOnDrop(&home);
    home.ctl_async(&["send", "hi"]).await.ok();
    let added = "freshly-added-secret-42";
    std::fs::write(work.path().join("new.txt"), format!("new={added}\n")).unwrap();
    home.write(".env", &format!("NEW_SECRET={added}\n"));
    let pid: i32 = std::fs::read_to_string(home.path().join("hermesd.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    log_with(&home, "configuration reloaded", 1).await;
    let new = work.path().join("new.txt").display().to_string();
    server.push(call("terminal", json!({"command": format!("cat {new}")})));
    server.push(Reply::text("done"));
    home.ctl_async(&["send", "look"]).await.ok();
    let result = server
        .chat_requests()
        .last()
        .unwrap()
        .tool_results()
        .pop()
        .unwrap();
    assert!(result.contains("new=freshl...t-42"), "{result}");
}
