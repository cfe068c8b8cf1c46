//! `delegate_task` through the real daemon with the fake model, each child answered from a script
//! of its own (routed by its prompt): a batch of four runs three at once while the fourth waits,
//! the parent turn answers at once and the summaries come back in task order as one new turn;
//! an interrupt of the parent stops every child, the queued one included, and nothing comes
//! back; a child's dangerous command is asked of the parent's client, labelled with the child.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_proto::pb::{self, client_frame, session_event::Kind, sessions_client::SessionsClient};
use hermes_tests::{
    TestHome,
    events::{Attached, kind_name},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    wait,
};
use serde_json::{Value, json};

const GOALS: [&str; 4] = ["count-alpha", "count-beta", "count-gamma", "count-delta"];

/// The text a child's system prompt holds (what routes its requests).
fn task_marker(goal: &str) -> String {
    format!("YOUR TASK:\n{goal}")
}

fn terminal(command: &str) -> Reply {
    Reply::tool_call("terminal", &json!({ "command": command }).to_string())
}

fn delegate_all() -> Reply {
    let tasks: Vec<Value> = GOALS.iter().map(|g| json!({ "goal": g })).collect();
    Reply::tool_call("delegate_task", &json!({ "tasks": tasks }).to_string())
}

/// A command that returns once `gate` exists.
fn wait_for(gate: &std::path::Path) -> String {
    format!(
        "until [ -e {} ]; do sleep 0.02; done; echo released",
        gate.display()
    )
}

async fn send(home: &TestHome, text: &str) -> Value {
    let cwd = home.path().to_str().unwrap().to_string();
    home.ctl_async(&["send", "--json", "--cwd", &cwd, text])
        .await
        .json()
}

/// Notices of `kind` among the events read so far and those that come, until there are `n`.
async fn notices(attached: &mut Attached, seen: &mut Vec<pb::Notice>, kind: &str, n: usize) {
    while seen.iter().filter(|n| n.kind == kind).count() < n {
        let event = attached.next().await;
        if let Some(Kind::Notice(notice)) = event.kind {
            seen.push(notice);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_runs_three_at_once_the_fourth_waits_and_summaries_return_in_order() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let gate = home.path().join("gate");
    let server = FakeLlm::start(vec![
        delegate_all(),
        Reply::text("dispatched"),
        Reply::text("all four reported"),
    ])
    .await;
    for goal in &GOALS[..3] {
        server.route(
            &task_marker(goal),
            vec![
                terminal(&wait_for(&gate)),
                Reply::text(&format!("summary of {goal}")),
            ],
        );
    }
    server.route(
        &task_marker(GOALS[3]),
        vec![Reply::text(&format!("summary of {}", GOALS[3]))],
    );
    home.use_fake_model(&server, "");

    // The parent's turn ends at once: the children run in the background.
    let out = send(&home, "count everything").await;
    assert_eq!(out["answer"], "dispatched", "{out}");
    let parent = out["session_id"].as_str().unwrap().to_string();
    // The children start as the parent's second request goes out: pick the parent's by content.
    let parents_second = server
        .chat_requests()
        .into_iter()
        .find_map(|r| {
            r.tool_results()
                .into_iter()
                .find(|t| t.contains("\"dispatched\""))
        })
        .unwrap();
    let dispatched: Value = serde_json::from_str(&parents_second).unwrap();
    assert_eq!(dispatched["status"], "dispatched", "{dispatched}");
    assert_eq!(dispatched["count"], 4, "{dispatched}");

    // Three children start and wait at the gate together; the fourth does not start.
    let mut attached = Attached::open(&home.socket(), &parent, 0, true).await;
    let mut seen = Vec::new();
    notices(&mut attached, &mut seen, "subagent_started", 3).await;
    wait::until(
        "three children wait at the gate",
        Duration::from_secs(20),
        || {
            let waiting = GOALS[..3]
                .iter()
                .all(|g| server.requests_with_system(&task_marker(g)).len() == 1);
            async move { waiting.then_some(()) }
        },
    )
    .await;
    assert!(
        seen.iter().all(|n| n.kind == "subagent_started"),
        "no child ended before the gate opened: {seen:?}"
    );
    assert!(
        server
            .requests_with_system(&task_marker(GOALS[3]))
            .is_empty(),
        "the fourth child waits for a free place"
    );
    assert!(!seen.iter().any(|n| n.text.contains("4/4")), "{seen:?}");

    // Open the gate: every child finishes, the fourth runs, and the results come back as one
    // turn of the parent, in task order.
    std::fs::write(&gate, "").unwrap();
    notices(&mut attached, &mut seen, "subagent_finished", 4).await;
    assert!(
        seen.iter()
            .any(|n| n.kind == "subagent_started" && n.text.contains("4/4"))
    );
    wait::until(
        "the results reach the parent",
        Duration::from_secs(20),
        || {
            let done = server.remaining() == 0;
            async move { done.then_some(()) }
        },
    )
    .await;
    let requests = server.chat_requests();
    let last = requests.last().unwrap();
    let text = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    let positions: Vec<usize> = GOALS
        .iter()
        .map(|g| {
            text.find(&format!("summary of {g}"))
                .unwrap_or_else(|| panic!("no summary of {g} in {text}"))
        })
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(text.contains("TASK 1/4: count-alpha"), "{text}");
    assert!(text.contains("status=completed"), "{text}");

    // The children are sessions of their own, linked to the parent, listed with --all only.
    let all = home
        .ctl_async(&["sessions", "list", "--all", "--json"])
        .await
        .json();
    let children: Vec<&Value> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["source"] == "subagent")
        .collect();
    assert_eq!(children.len(), 4, "{all}");
    let plain = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    assert!(
        !plain
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["source"] == "subagent"),
        "{plain}"
    );
    // A child takes no input of its own: it answers to its parent.
    let child = children[0]["id"].as_str().unwrap();
    let refused = home
        .ctl_async(&["send", "--session", child, "do something else"])
        .await
        .err();
    assert!(refused.contains("takes no input"), "{refused}");
    // …and goes with its parent.
    home.ctl_async(&["sessions", "rm", &parent]).await.ok();
    let after = home
        .ctl_async(&["sessions", "list", "--all", "--json"])
        .await
        .json();
    assert!(
        !after
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["source"] == "subagent"),
        "{after}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupt_of_the_parent_stops_every_child_and_the_queued_one_never_starts() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let never = home.path().join("never");
    let server = FakeLlm::start(vec![
        delegate_all(),
        Reply::text("dispatched"),
        Reply::text("must not be asked"),
    ])
    .await;
    for goal in GOALS {
        server.route(
            &task_marker(goal),
            vec![terminal(&wait_for(&never)), Reply::text("stopped")],
        );
    }
    home.use_fake_model(&server, "");
    let out = send(&home, "count everything").await;
    let parent = out["session_id"].as_str().unwrap().to_string();
    let mut attached = Attached::open(&home.socket(), &parent, 0, true).await;
    let mut seen = Vec::new();
    notices(&mut attached, &mut seen, "subagent_started", 3).await;

    let channel = hermes_proto::client::connect(&home.socket()).await.unwrap();
    let reply = SessionsClient::new(channel)
        .interrupt(pb::InterruptSessionRequest { id: parent.clone() })
        .await
        .unwrap()
        .into_inner();
    assert!(
        reply.was_running,
        "the background children count as running"
    );

    notices(&mut attached, &mut seen, "delegation_stopped", 1).await;
    let finished: Vec<&pb::Notice> = seen
        .iter()
        .filter(|n| n.kind == "subagent_finished")
        .collect();
    assert_eq!(finished.len(), 3, "{seen:?}");
    assert!(
        finished.iter().all(|n| n.text.contains("interrupted")),
        "{seen:?}"
    );
    assert!(
        server
            .requests_with_system(&task_marker(GOALS[3]))
            .is_empty(),
        "the queued child never started"
    );
    assert_eq!(server.remaining(), 1, "no results turn after a stop");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_childs_dangerous_command_is_asked_of_the_parents_client() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let doomed = home.work_dir().join("doomed");
    std::fs::create_dir_all(doomed.join("inside")).unwrap();
    let goal = "tidy-the-scratch-dir";
    let server = FakeLlm::start(vec![
        Reply::tool_call("delegate_task", &json!({ "goal": goal }).to_string()),
        Reply::text("dispatched"),
        Reply::text("tidied"),
    ])
    .await;
    server.route(
        &task_marker(goal),
        vec![
            terminal(&format!("rm -rf {}", doomed.display())),
            Reply::text("removed it"),
        ],
    );
    home.use_fake_model(&server, "");
    home.ctl_async(&["status"]).await.ok();
    let session = hermes_tests::events::create_session(&home.socket(), &home.work_dir()).await;
    let mut client = Attached::open(&home.socket(), &session.id, 0, false).await;
    client.until("replay_done").await;
    client
        .send(client_frame::Kind::UserInput(pb::UserInput {
            text: "tidy up".into(),
            ..pb::UserInput::default()
        }))
        .await;
    let events = client.until("approval_requested").await;
    let Some(Kind::ApprovalRequested(asked)) = &events.last().unwrap().kind else {
        unreachable!()
    };
    assert!(
        asked.reason.starts_with(&format!("[subagent 1/1: {goal}]")),
        "labelled with the child: {asked:?}"
    );
    assert!(asked.command.contains("rm -rf"), "{asked:?}");
    assert!(doomed.exists(), "nothing runs before the answer");
    client
        .send(client_frame::Kind::ApprovalResponse(pb::ApprovalResponse {
            id: asked.id.clone(),
            decision: "once".into(),
        }))
        .await;
    let events = client.until("approval_resolved").await;
    assert_eq!(kind_name(events.last().unwrap()), "approval_resolved");
    // The child runs it, ends, and its summary comes back as the parent's next turn.
    wait::until(
        "the results reach the parent",
        Duration::from_secs(20),
        || {
            let done = server.remaining() == 0;
            async move { done.then_some(()) }
        },
    )
    .await;
    assert!(!doomed.exists(), "the approved command ran");
    let last = server.chat_requests().pop().unwrap();
    assert!(
        last.body.to_string().contains("removed it"),
        "the child's summary reached the parent"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_orchestrator_waits_for_its_own_workers_who_cannot_delegate() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let server = FakeLlm::start(vec![
        Reply::tool_call(
            "delegate_task",
            &json!({ "goal": "plan-the-survey", "role": "orchestrator" }).to_string(),
        ),
        Reply::text("dispatched"),
        Reply::text("the survey is planned"),
    ])
    .await;
    server.route(
        &task_marker("plan-the-survey"),
        vec![
            Reply::tool_call(
                "delegate_task",
                &json!({ "goal": "list-the-rooms" }).to_string(),
            ),
            Reply::text("orchestrated: rooms listed"),
        ],
    );
    server.route(
        &task_marker("list-the-rooms"),
        vec![Reply::text("three rooms")],
    );
    home.use_fake_model(&server, "");
    send(&home, "plan it").await;
    wait::until(
        "the results reach the parent",
        Duration::from_secs(20),
        || {
            let done = server.remaining() == 0;
            async move { done.then_some(()) }
        },
    )
    .await;
    let orchestrator = server.requests_with_system(&task_marker("plan-the-survey"));
    let worker = server.requests_with_system(&task_marker("list-the-rooms"));
    assert!(
        orchestrator[0]
            .tool_names()
            .contains(&"delegate_task".to_string())
    );
    assert!(
        !worker[0]
            .tool_names()
            .contains(&"delegate_task".to_string())
    );
    assert!(!worker[0].tool_names().contains(&"memory".to_string()));
    // The orchestrator's call waited: its result holds the worker's summary.
    let result: Value = serde_json::from_str(&orchestrator[1].tool_results()[0]).unwrap();
    assert_eq!(result["results"][0]["summary"], "three rooms", "{result}");
    assert_eq!(result["results"][0]["status"], "completed", "{result}");
    let last = server.chat_requests().pop().unwrap();
    assert!(last.body.to_string().contains("orchestrated: rooms listed"));
}
