//! The agent core in process, without the daemon or its socket: a `TurnRunner` on a temporary
//! home and store, driven through `agent::send` / `agent::submit` against the scripted fake
//! model. Each test waits on what it checks (a stored event, a finished turn, a request the
//! model received), never on time.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;
use hermes_proto::{
    env::Env,
    pb::{self, session_event::Kind},
    place::Home,
};
use hermes_tests::fake_llm::{FakeLlm, Reply};
use hermesd::{
    agent::{self, Target, TurnEnd, TurnInput, TurnRunner},
    config::{Config, FlagOverrides},
    store::{self, Store},
    tools::{CronHandle, CronOrigin, ToolError, ToolServices},
};
use prost::Message;
use serde_json::Value;

/// Cron is not part of these tests.
struct NoCron;

#[async_trait]
impl CronHandle for NoCron {
    async fn cronjob(&self, _: Value, _: CronOrigin) -> Result<Value, ToolError> {
        Err(ToolError::Failed("no cron in this test".into()))
    }
}

/// A runner on a fresh home whose model is `server`, with `extra` YAML in config.yaml.
fn runner(server: &FakeLlm, extra: &str) -> (tempfile::TempDir, Arc<TurnRunner>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.yaml"),
        format!(
            "model:\n  provider: custom\n  default: fake-model\n  base_url: {}\n  api_key: k\n  \
             context_length: 128000\n\
             auxiliary:\n  title_generation:\n    enabled: false\n\
             memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n{extra}",
            server.openai_base()
        ),
    )
    .unwrap();
    let home = Home {
        dir: dir.path().to_path_buf(),
        profile: None,
    };
    let env = Env::from_pairs([("HOME", dir.path().display().to_string())]);
    let config = Config::load(&home, &env, &FlagOverrides::default()).unwrap();
    let store = Store::open(&home.db_file()).unwrap();
    let services = Arc::new(ToolServices::new(
        store.clone(),
        hermesd::policy::paths::PathPolicy::new(&home.dir, None),
        Arc::new(NoCron),
    ));
    services.apply_config(&config.settings);
    let runner = TurnRunner::new(
        home,
        store,
        Arc::new(hermesd::config::SharedConfig::new(config)),
        services,
        tokio_util::sync::CancellationToken::new(),
    );
    (dir, Arc::new(runner))
}

fn input(text: &str) -> TurnInput {
    TurnInput {
        text: text.into(),
        source_client: "test".into(),
        yolo: false,
        busy: None,
        toolsets: Vec::new(),
        context_from: None,
        turn_id: None,
        stop: None,
        delegated: None,
    }
}

fn new_session(dir: &tempfile::TempDir) -> Target {
    Target {
        session_id: None,
        cwd: dir.path().display().to_string(),
        source: "cli".into(),
    }
}

/// Every stored event of the conversation `id`, in seq order.
async fn stored(runner: &TurnRunner, id: &str) -> Vec<pb::SessionEvent> {
    let id = id.to_string();
    runner
        .store
        .read(move |conn| store::events_after(conn, &id, 0, 0))
        .await
        .unwrap()
        .into_iter()
        .map(|e| pb::SessionEvent::decode(e.payload.as_slice()).unwrap())
        .collect()
}

fn kinds(events: &[pb::SessionEvent]) -> Vec<&'static str> {
    events
        .iter()
        .map(|e| {
            e.kind
                .as_ref()
                .map_or("none", hermes_proto::events::kind_name)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_step_of_a_tool_turn_is_an_event_in_order() {
    let server = FakeLlm::start(vec![
        Reply::tool_call(
            "todo",
            r#"{"todos": [{"id": "1", "content": "x", "status": "pending"}]}"#,
        ),
        Reply::text("done"),
    ])
    .await;
    let (dir, runner) = runner(&server, "");
    let outcome = agent::send(&runner, new_session(&dir), input("plan it"))
        .await
        .unwrap();
    assert_eq!(outcome.end, TurnEnd::Finished);
    assert_eq!(outcome.answer, "done");
    assert_eq!(outcome.tool_calls, 1);
    let events = stored(&runner, &outcome.session_id).await;
    assert_eq!(
        kinds(&events),
        [
            "turn_started",
            "user_message",
            "assistant_message",
            "tool_started",
            "tool_finished",
            "assistant_message",
            "turn_finished"
        ]
    );
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    // The todo list belongs to the conversation: a second turn reads it back.
    let server_reply = Reply::tool_call("todo", "{}");
    server.push(server_reply);
    server.push(Reply::text("read"));
    let again = agent::send(
        &runner,
        Target {
            session_id: Some(outcome.session_id.clone()),
            ..Target::default()
        },
        input("what was the plan?"),
    )
    .await
    .unwrap();
    assert_eq!(again.answer, "read");
    let requests = server.requests();
    let read: Value = serde_json::from_str(&requests[3].tool_results()[0]).unwrap();
    assert_eq!(read["todos"][0]["content"], "x", "{read}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_safe_batch_runs_together_and_its_results_are_stored_in_call_order() {
    let work = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt"] {
        std::fs::write(work.path().join(name), format!("content of {name}\n")).unwrap();
    }
    let path = |name: &str| work.path().join(name).display().to_string();
    let server = FakeLlm::start(vec![
        Reply::tool_calls(vec![
            hermes_tests::fake_llm::ToolCall::new(
                "read_file",
                &serde_json::json!({"path": path("a.txt")}).to_string(),
            )
            .with_id("call_a"),
            hermes_tests::fake_llm::ToolCall::new(
                "read_file",
                &serde_json::json!({"path": path("b.txt")}).to_string(),
            )
            .with_id("call_b"),
        ]),
        Reply::text("both read"),
    ])
    .await;
    let (dir, runner) = runner(&server, "");
    let outcome = agent::send(&runner, new_session(&dir), input("read both"))
        .await
        .unwrap();
    assert_eq!(outcome.answer, "both read");
    let results = server.requests()[1].tool_results();
    assert!(results[0].contains("content of a.txt"), "{results:?}");
    assert!(results[1].contains("content of b.txt"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dangerous_command_with_nobody_to_ask_is_denied_and_the_model_is_told() {
    let server = FakeLlm::start(vec![
        Reply::tool_call(
            "terminal",
            r#"{"command": "rm -rf /tmp/nothing-here-at-all"}"#,
        ),
        Reply::text("could not"),
    ])
    .await;
    let (dir, runner) = runner(&server, "");
    let outcome = agent::send(&runner, new_session(&dir), input("clean up"))
        .await
        .unwrap();
    assert_eq!(outcome.answer, "could not");
    let result = &server.requests()[1].tool_results()[0];
    assert!(
        result.to_lowercase().contains("denied") || result.contains("BLOCKED"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn stopping_the_hub_interrupts_a_turn_waiting_on_the_model_and_stores_why() {
    let server = FakeLlm::start(vec![Reply::stall_before_headers(120_000)]).await;
    let (dir, runner) = runner(&server, "");
    let (session, chain) = agent::prepare(&runner, new_session(&dir), "hello?")
        .await
        .unwrap();
    let agent::Submitted::Turn(turn) =
        agent::submit(&runner, session.clone(), chain, input("hello?"))
    else {
        panic!("a new session's input is a turn of its own");
    };
    server.wait_for_requests(1, Duration::from_secs(20)).await;
    let still_running = runner.hub.stop(Duration::from_secs(5)).await;
    assert_eq!(still_running, 0, "the turn ended within the bound");
    let outcome = turn.await.unwrap().unwrap();
    assert_eq!(outcome.end, TurnEnd::Interrupted);
    let events = stored(&runner, &session.id).await;
    let by = events.iter().find_map(|e| match &e.kind {
        Some(Kind::TurnInterrupted(t)) => Some(t.by.clone()),
        _ => None,
    });
    assert_eq!(by.as_deref(), Some(hermesd::hub::STOPPING));
    // Nothing new starts once the hub is stopping.
    let (session, chain) = agent::prepare(
        &runner,
        Target {
            session_id: Some(session.id.clone()),
            ..Target::default()
        },
        "again",
    )
    .await
    .unwrap();
    let agent::Submitted::Turn(turn) = agent::submit(&runner, session, chain, input("again"))
    else {
        panic!("input is a turn of its own");
    };
    assert!(matches!(
        turn.await.unwrap(),
        Err(agent::TurnError::Stopping)
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn input_steered_into_a_running_turn_joins_it() {
    // The turn's tool waits on a FIFO the test opens only after it has steered.
    let work = tempfile::tempdir().unwrap();
    let fifo = work.path().join("go");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let command = serde_json::json!({"command": format!("cat {}", fifo.display())}).to_string();
    let server = FakeLlm::start(vec![
        Reply::tool_call("terminal", &command),
        Reply::text("took both"),
    ])
    .await;
    let (dir, runner) = runner(&server, "");
    let (session, chain) = agent::prepare(&runner, new_session(&dir), "first")
        .await
        .unwrap();
    let agent::Submitted::Turn(turn) =
        agent::submit(&runner, session.clone(), chain.clone(), input("first"))
    else {
        panic!("a turn of its own");
    };
    server.wait_for_requests(1, Duration::from_secs(20)).await;
    let steer = TurnInput {
        busy: Some(agent::BusyPolicy::Steer),
        ..input("and also this")
    };
    assert!(matches!(
        agent::submit(&runner, session.clone(), chain, steer),
        agent::Submitted::Steered
    ));
    let release = fifo.clone();
    tokio::task::spawn_blocking(move || std::fs::write(release, "go\n"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(turn.await.unwrap().unwrap().answer, "took both");
    let second = server.requests()[1].body["messages"].to_string();
    assert!(second.contains("and also this"), "{second}");
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_conversation_stops_the_running_turn_and_the_ones_queued_behind_it() {
    let work = tempfile::tempdir().unwrap();
    let fifo = work.path().join("hold");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let command = serde_json::json!({"command": format!("cat {}", fifo.display())}).to_string();
    let server = FakeLlm::start(vec![
        Reply::tool_call("terminal", &command),
        Reply::text("the queued turn ran"),
        Reply::text("and again"),
    ])
    .await;
    let (dir, runner) = runner(&server, "");
    let (session, chain) = agent::prepare(&runner, new_session(&dir), "first")
        .await
        .unwrap();
    let agent::Submitted::Turn(first) =
        agent::submit(&runner, session.clone(), chain.clone(), input("first"))
    else {
        panic!("a turn of its own");
    };
    server.wait_for_requests(1, Duration::from_secs(20)).await;
    // A second message waits behind the running turn.
    let queued = TurnInput {
        busy: Some(agent::BusyPolicy::Queue),
        ..input("second")
    };
    let agent::Submitted::Turn(second) = agent::submit(&runner, session.clone(), chain, queued)
    else {
        panic!("queued input is a turn of its own");
    };
    let removed = agent::ending::delete_conversations(
        &runner,
        vec![session.id.clone()],
        "the session was deleted",
    )
    .await
    .unwrap();
    assert_eq!(removed, vec![session.id.clone()]);
    let first = first.await.unwrap();
    assert!(
        matches!(&first, Ok(o) if o.end == TurnEnd::Interrupted) || first.is_err(),
        "{first:?}"
    );
    let second = second.await.unwrap();
    assert!(
        !matches!(&second, Ok(o) if o.end == TurnEnd::Finished),
        "the queued turn must not run: {second:?}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "no model call after the delete began"
    );
}
