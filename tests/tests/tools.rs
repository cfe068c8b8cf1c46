//! Tools beyond the terminal through the real daemon: `patch` in both modes, `clarify`, toolsets,
//! `session_search`, and what the file tools refuse.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_proto::pb::{self, client_frame, session_event::Kind};
use hermes_tests::{
    TestHome,
    events::{self, Attached},
    fake_llm::{FakeLlm, RecordedRequest, Reply},
    home::StopOnDrop,
};

fn tool_results(request: &RecordedRequest) -> Vec<serde_json::Value> {
    request
        .tool_results()
        .iter()
        .map(|content| serde_json::from_str(content).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn patch_replaces_fuzzily_and_applies_v4a_patches_with_diffs() {
    let v4a = "*** Begin Patch\n*** Update File: b.txt\n@@\n one\n-two\n+TWO\n*** Add File: c.txt\n+new file\n*** End Patch";
    let server = FakeLlm::start(vec![
        Reply::tool_call(
            "patch",
            &serde_json::json!({"path": "a.py", "old_string": "def f():\n  return 1", "new_string": "def f():\n    return 2"}).to_string(),
        ),
        Reply::tool_call("patch", &serde_json::json!({"mode": "patch", "patch": v4a}).to_string()),
        Reply::text("patched"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.py"), "def f():\n    return 1\n").unwrap();
    std::fs::write(work.path().join("b.txt"), "one\ntwo\nthree\n").unwrap();
    let out = home
        .ctl_async(&[
            "send",
            "--json",
            "--cwd",
            work.path().to_str().unwrap(),
            "fix",
        ])
        .await
        .json();
    assert_eq!(out["answer"], "patched");
    assert_eq!(
        std::fs::read_to_string(work.path().join("a.py")).unwrap(),
        "def f():\n    return 2\n",
        "indentation-flexible match"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("b.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );
    assert!(work.path().join("c.txt").exists());
    let results = tool_results(&server.requests()[2]);
    assert_eq!(results[0]["success"], true, "{}", results[0]);
    assert!(
        results[0]["diff"]
            .as_str()
            .unwrap()
            .contains("+    return 2")
    );
    assert!(
        results[1]["diff"].as_str().unwrap().contains("+TWO"),
        "{}",
        results[1]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn clarify_asks_the_attached_user_and_says_so_when_nobody_is_there() {
    let server = FakeLlm::start(vec![
        Reply::tool_call(
            "clarify",
            r#"{"question": "Which target?", "choices": ["staging", "prod"]}"#,
        ),
        Reply::text("deploying to prod"),
        Reply::tool_call("clarify", r#"{"question": "Anyone?"}"#),
        Reply::text("nobody answered"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    home.ctl_async(&["status"]).await.ok();
    let session = events::create_session(&home.socket(), home.path()).await;
    let mut client = Attached::open(&home.socket(), &session.id, 0, false).await;
    client.until("replay_done").await;
    client
        .send(client_frame::Kind::UserInput(pb::UserInput {
            text: "deploy".into(),
            ..pb::UserInput::default()
        }))
        .await;
    let seen = client.until("clarify_requested").await;
    let Some(Kind::ClarifyRequested(question)) = seen.last().unwrap().kind.clone() else {
        unreachable!()
    };
    assert_eq!(question.choices, ["staging", "prod"]);
    client
        .send(client_frame::Kind::ClarifyResponse(pb::ClarifyResponse {
            id: question.id,
            answer: "prod".into(),
        }))
        .await;
    client.until("turn_finished").await;
    let answered = &tool_results(&server.requests()[1])[0];
    assert_eq!(answered["user_response"], "prod");
    drop(client);
    // The daemon sees the client go on its own task: wait until it has.
    hermes_tests::wait::until(
        "the client is gone",
        std::time::Duration::from_secs(20),
        || async {
            let listed = home.ctl_async(&["sessions", "list", "--json"]).await.json();
            listed
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["clients"] == 0)
                .then_some(())
        },
    )
    .await;

    let out = home
        .ctl_async(&["send", "--json", "--session", &session.id, "again"])
        .await
        .json();
    assert_eq!(out["answer"], "nobody answered");
    let refused = tool_results(&server.requests()[3]);
    assert!(
        refused.last().unwrap()["error"]
            .as_str()
            .unwrap()
            .contains("no user is attached"),
        "{refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn toolsets_are_enabled_and_disabled_from_config() {
    let server = FakeLlm::start(vec![Reply::text("a"), Reply::text("b")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.write(
        "config.yaml",
        &format!(
            "model:\n  provider: custom\n  default: fake-model\n  base_url: {}\n  api_key: k\n\
             agent:\n  disabled_toolsets: [terminal, clarify]\n{}",
            server.openai_base(),
            hermes_tests::home::QUIET_AUXILIARY
        ),
    );
    home.ctl_async(&["send", "hi"]).await.ok();
    let names = server.requests()[0].tool_names();
    assert!(names.contains(&"read_file".to_string()), "{names:?}");
    for gone in ["terminal", "process", "clarify"] {
        assert!(!names.contains(&gone.to_string()), "{gone} in {names:?}");
    }
    home.write(
        "config.yaml",
        &format!(
            "model:\n  provider: custom\n  default: fake-model\n  base_url: {}\n  api_key: k\n\
             toolsets: [todo]\n{}",
            server.openai_base(),
            hermes_tests::home::QUIET_AUXILIARY
        ),
    );
    home.ctl_async(&["daemon", "restart"]).await.ok();
    home.ctl_async(&["send", "hi"]).await.ok();
    assert_eq!(server.requests()[1].tool_names(), ["todo"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn session_search_finds_earlier_conversations() {
    let server = FakeLlm::start(vec![
        Reply::text("Noted: the quokka is called Pip."),
        Reply::tool_call("session_search", r#"{"query": "quokka"}"#),
        Reply::text("Pip."),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    let first = home
        .ctl_async(&["send", "--json", "my quokka is called Pip"])
        .await
        .json();
    let out = home
        .ctl_async(&["send", "--json", "what is my quokka called?"])
        .await
        .json();
    assert_eq!(out["answer"], "Pip.");
    let found = &tool_results(&server.requests()[2])[0];
    assert_eq!(found["count"], 1, "{found}");
    assert_eq!(found["results"][0]["session_id"], first["session_id"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn file_tools_refuse_the_daemon_config_and_system_paths() {
    let home = TestHome::new();
    let config = home.path().join("config.yaml");
    let server = FakeLlm::start(vec![
        Reply::tool_calls(vec![
            hermes_tests::fake_llm::ToolCall::new(
                "write_file",
                &serde_json::json!({"path": config, "content": "approvals:\n  mode: off\n"})
                    .to_string(),
            )
            .with_id("w1"),
            hermes_tests::fake_llm::ToolCall::new(
                "write_file",
                r#"{"path": "/etc/hermes-test-file", "content": "x"}"#,
            )
            .with_id("w2"),
            hermes_tests::fake_llm::ToolCall::new(
                "read_file",
                &serde_json::json!({"path": home.path().join(".env")}).to_string(),
            )
            .with_id("r1"),
        ]),
        Reply::text("refused"),
    ])
    .await;
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    home.write(".env", "OPENAI_API_KEY=sk-never-shown\n");
    let before = std::fs::read_to_string(&config).unwrap();
    home.ctl_async(&["send", "change your settings"]).await.ok();
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0]["error"]
            .as_str()
            .unwrap()
            .contains("Hermes configuration")
    );
    assert!(
        results[1]["error"]
            .as_str()
            .unwrap()
            .contains("sensitive system path")
    );
    assert!(!std::path::Path::new("/etc/hermes-test-file").exists());
    let denied = results[2]["error"].as_str().unwrap();
    assert!(denied.contains("holds credentials"), "{denied}");
    assert!(
        !denied.contains("sk-"),
        "the key itself never reaches the model"
    );
}

/// `read_file` on an image says what is true: it is an image and read_file returns text only; it
/// points to a tool only when the session has it (`vision_analyze`, else `terminal`).
#[tokio::test(flavor = "multi_thread")]
async fn read_file_on_an_image_names_only_tools_the_session_has() {
    let work = tempfile::tempdir().unwrap();
    let image = work.path().join("photo.png");
    std::fs::write(&image, b"\x89PNG\r\n\x1a\n").unwrap();
    let read = serde_json::json!({"path": image}).to_string();
    let server = FakeLlm::start(vec![
        Reply::tool_call("read_file", &read),
        Reply::text("an image"),
        Reply::tool_call("read_file", &read),
        Reply::text("an image"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    let cwd = work.path().to_str().unwrap();
    home.ctl_async(&["send", "--cwd", cwd, "look"]).await.ok();
    let requests = server.requests();
    assert!(
        requests[0]
            .tool_names()
            .contains(&"vision_analyze".to_string())
    );
    let error = tool_results(&requests[1])[0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        error.contains("it is an image, and read_file returns text only"),
        "{error}"
    );
    assert!(error.contains("Use vision_analyze"), "{error}");

    // Without the vision and terminal toolsets there is nothing to suggest.
    home.use_fake_model(&server, "agent:\n  disabled_toolsets: [terminal, vision]\n");
    home.ctl_async(&["daemon", "restart"]).await.ok();
    home.ctl_async(&["send", "--cwd", cwd, "look"]).await.ok();
    let requests = server.requests();
    assert!(!requests[2].tool_names().contains(&"terminal".to_string()));
    assert!(
        !requests[2]
            .tool_names()
            .contains(&"vision_analyze".to_string())
    );
    let error = tool_results(&requests[3])[0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(error.contains("it is an image"), "{error}");
    assert!(!error.contains("Use "), "{error}");
}
