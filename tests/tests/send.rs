//! `hermesctl send` through the real daemon to the fake model server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};

fn configure(home: &TestHome, server: &FakeLlm) {
    home.write(
        "config.yaml",
        &format!(
            "model:\n  provider: custom\n  default: fake-model\n  base_url: {}\n  api_key: ${{FAKE_KEY}}\n{}",
            server.openai_base(),
            hermes_tests::home::QUIET_AUXILIARY
        ),
    );
    home.write(".env", "FAKE_KEY=sk-e2e\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn send_answers_stores_the_exchange_and_continues_a_session() {
    let server = FakeLlm::start(vec![
        Reply::text_chunks(&["Hello", " human"]).with_usage(20, 2),
        Reply::text("Again"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server);

    let out = home
        .ctl_async(&["send", "--json", "hello", "there"])
        .await
        .json();
    assert_eq!(out["answer"], "Hello human");
    assert_eq!(out["iterations"], 1);
    assert_eq!(out["usage"]["input_tokens"], 20);
    let id = out["session_id"].as_str().unwrap().to_string();
    let first = &server.requests()[0];
    assert_eq!(
        first.header("authorization"),
        Some("Bearer sk-e2e"),
        "key from .env via ${{FAKE_KEY}}"
    );
    assert_eq!(first.body["messages"][1]["content"], "hello there");
    assert!(
        first.body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are Hermes Agent")
    );

    let plain = home
        .ctl_async(&["send", "--session", &id, "and", "again"])
        .await
        .ok();
    assert_eq!(plain.trim(), "Again");
    let second = &server.requests()[1];
    let roles: Vec<&str> = second.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(
        first.body["messages"][0], second.body["messages"][0],
        "the system prompt is stored with the session and reused byte for byte"
    );

    let shown = home
        .ctl_async(&["sessions", "show", &id, "--json"])
        .await
        .json();
    let contents: Vec<&str> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        contents,
        ["hello there", "Hello human", "and again", "Again"]
    );
    assert_eq!(shown["model"], "custom:fake-model");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_model_configured_is_one_line_with_the_fix() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let err = home.ctl_async(&["send", "hi"]).await.err();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "no model is configured: run e.g. `hermesctl model set openrouter:anthropic/claude-sonnet-4 --key-env OPENROUTER_API_KEY`"
        ),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_model_keeps_the_message_and_says_where() {
    let server = FakeLlm::start(vec![Reply::unauthorized()]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    configure(&home, &server);
    let err = home.ctl_async(&["send", "remember this"]).await.err();
    assert!(err.contains("the model failed (auth)"), "{err}");
    let id = err
        .split("saved in session ")
        .nth(1)
        .unwrap()
        .trim()
        .trim_end_matches(')')
        .to_string();
    let shown = home
        .ctl_async(&["sessions", "show", &id, "--json"])
        .await
        .json();
    assert_eq!(shown["messages"][0]["content"], "remember this");
}
