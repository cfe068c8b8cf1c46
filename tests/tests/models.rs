//! Choosing and inspecting models through hermesctl and the daemon: `model set|list|show|test`,
//! context windows from the endpoint, the catalog or the floor, local-server discovery, cost.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, FakeModel, Reply},
    home::StopOnDrop,
};

#[tokio::test(flavor = "multi_thread")]
async fn model_set_then_list_show_and_test() {
    let server = FakeLlm::start(vec![Reply::text("ok"), Reply::unauthorized()])
        .await
        .with_models(vec![
            FakeModel::new("fake-model").with_context_length(32_768),
        ]);
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.write(
        "config.yaml",
        "# my config\nmodel:\n  default: old  # was here\n",
    );
    home.write(".env", "FAKE_KEY=sk-models\n");
    let base = server.openai_base();
    let out = home
        .ctl_async(&[
            "model",
            "set",
            "custom:fake-model",
            "--base-url",
            &base,
            "--key-env",
            "FAKE_KEY",
        ])
        .await;
    assert!(
        out.ok().contains("model set to custom:fake-model"),
        "{}",
        out.stdout()
    );
    let config = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    assert!(
        config.starts_with("# my config\nmodel:\n  default: fake-model  # was here\n"),
        "{config}"
    );
    assert!(config.contains("api_key: ${FAKE_KEY}"), "{config}");

    let shown = home.ctl_async(&["model", "show", "--json"]).await.json();
    assert_eq!(shown["provider"], "custom");
    assert_eq!(shown["model"], "fake-model");
    assert_eq!(shown["context_length"], 32_768);
    assert_eq!(shown["context_source"], "endpoint");
    assert!(
        shown["input_price_per_mtok"].is_null(),
        "unknown prices stay unknown"
    );
    let models_request = server
        .lookups()
        .into_iter()
        .find(|r| r.path == "/v1/models")
        .unwrap();
    assert_eq!(
        models_request.header("authorization"),
        Some("Bearer sk-models")
    );
    let human = home.ctl_async(&["model", "show"]).await.ok();
    assert!(
        human.contains("32768 tokens (endpoint)") && human.contains("prices    unknown"),
        "{human}"
    );

    let test = home.ctl_async(&["model", "test"]).await.ok();
    assert!(test.starts_with("default: ok in "), "{test}");
    let sent = server
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/chat/completions")
        .unwrap();
    assert_eq!(sent.body["max_tokens"], 1);

    // A fallback that refuses the key: `test --all` reports it and fails.
    let mut config = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    config.push_str(&format!(
        "fallback_providers:\n  - {{provider: custom, model: backup, base_url: '{base}'}}\n"
    ));
    home.write("config.yaml", &config);
    home.ctl_async(&["config", "set", "model.stale_timeout", "30"])
        .await
        .ok();
    let list = home.ctl_async(&["model", "list", "--json"]).await.json();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fake-model", "backup"]);
    assert_eq!(list[1]["context_source"], "floor");
    assert_eq!(list[1]["context_length"], 8192);
    let table = home.ctl_async(&["model", "list"]).await.ok();
    assert!(
        table
            .lines()
            .nth(2)
            .unwrap()
            .starts_with("fallback1 custom"),
        "{table}"
    );
    server.push(Reply::text("ok"));
    // Replies are consumed in order: the default gets the 401, the fallback the "ok".
    let all = home.ctl_async(&["model", "test", "--all"]).await;
    assert_eq!(all.code(), Some(1));
    assert!(
        all.stdout().contains("custom:fake-model: ") && all.stdout().contains("(auth)"),
        "{}",
        all.stdout()
    );
    assert!(
        all.stdout().contains("custom:backup: ok in "),
        "{}",
        all.stdout()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn context_window_sources() {
    let server = FakeLlm::start(vec![]).await.with_models(vec![
        FakeModel::new("served-by-vllm").with_max_model_len(65_536),
        FakeModel::ollama("qwen3:8b", "qwen3", 40_960),
    ]);
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let base = server.openai_base();
    for (model, override_line, context, source) in [
        ("served-by-vllm", "", 65_536, "endpoint"),
        ("qwen3:8b", "", 40_960, "endpoint"),
        ("openai/gpt-4o", "", 128_000, "table"),
        (
            "openai/gpt-4o",
            "  context_length: 50000\n",
            50_000,
            "override",
        ),
    ] {
        home.write(
            "config.yaml",
            &format!("model:\n  provider: custom\n  default: '{model}'\n  base_url: '{base}'\n{override_line}"),
        );
        home.ctl_async(&["daemon", "restart"]).await.ok();
        let shown = home.ctl_async(&["model", "show", "--json"]).await.json();
        assert_eq!(
            (
                shown["context_length"].as_u64().unwrap(),
                shown["context_source"].as_str().unwrap()
            ),
            (context, source),
            "{model}"
        );
    }
    let asked_ollama = server
        .lookups()
        .into_iter()
        .any(|r| r.path == "/api/show" && r.body["model"] == "qwen3:8b");
    assert!(asked_ollama);
}

#[tokio::test(flavor = "multi_thread")]
async fn known_prices_give_a_cost_and_unknown_stays_null() {
    let server = FakeLlm::start(vec![
        Reply::text("priced").with_usage(1_000, 1_000),
        Reply::text("unpriced").with_usage(1_000, 1_000),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let base = server.openai_base();
    home.write(
        "config.yaml",
        &format!(
            "model:\n  provider: custom\n  default: openai/gpt-4o\n  base_url: '{base}'\n{}",
            hermes_tests::home::QUIET_AUXILIARY
        ),
    );
    let priced = home.ctl_async(&["send", "--json", "hi"]).await.json();
    let cost = priced["usage"]["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.0125).abs() < 1e-9, "{cost}");
    home.ctl_async(&["model", "set", "custom:my-finetune"])
        .await
        .ok();
    let unpriced = home.ctl_async(&["send", "--json", "hi"]).await.json();
    assert!(unpriced["usage"]["cost_usd"].is_null());
}

#[tokio::test(flavor = "multi_thread")]
async fn with_nothing_configured_a_local_ollama_is_found() {
    let server = FakeLlm::start_on_port(11434, vec![Reply::text("hello from the local model")])
        .await
        .expect("port 11434 (Ollama's) must be free for this test")
        .with_models(vec![FakeModel::new("llama3.2:3b")]);
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let out = home.ctl_async(&["send", "hi"]).await.ok();
    assert_eq!(out.trim(), "hello from the local model");
    let chat = server
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/chat/completions")
        .unwrap();
    assert_eq!(chat.body["model"], "llama3.2:3b");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_models_service_sets_the_default_and_the_fallbacks_in_config_yaml() {
    use hermes_proto::pb::{self, models_client::ModelsClient};
    let server = FakeLlm::start(Vec::new()).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.write("config.yaml", "# mine\nmodel:\n  default: old  # keep me\n");
    home.ctl_async(&["status"]).await.ok();
    let channel = hermes_proto::client::connect(&home.socket()).await.unwrap();
    let mut models = ModelsClient::new(channel);
    let set = models
        .set_default(pb::SetDefaultModelRequest {
            r#ref: Some(pb::ModelRef {
                provider: "custom".into(),
                model: "fake-model".into(),
                base_url: server.openai_base(),
                api_key_env: "FAKE_KEY".into(),
                api_mode: String::new(),
            }),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(set.model.unwrap().r#ref.unwrap().model, "fake-model");
    let text = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    assert!(text.starts_with("# mine\n"), "{text}");
    assert!(text.contains("default: fake-model  # keep me"), "{text}");
    assert!(text.contains("api_key: ${FAKE_KEY}"), "{text}");

    let fallbacks = models
        .set_fallbacks(pb::SetFallbacksRequest {
            fallbacks: vec![pb::ModelRef {
                provider: "custom".into(),
                model: "backup".into(),
                base_url: server.openai_base(),
                ..pb::ModelRef::default()
            }],
        })
        .await
        .unwrap()
        .into_inner()
        .fallbacks;
    assert_eq!(fallbacks.len(), 1);
    assert_eq!(fallbacks[0].model, "backup");
    let got = models
        .get_fallbacks(pb::GetFallbacksRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.fallbacks[0].model, "backup");

    let bad = models
        .set_default(pb::SetDefaultModelRequest {
            r#ref: Some(pb::ModelRef {
                model: "x".into(),
                api_key_env: "NOT A NAME".into(),
                ..pb::ModelRef::default()
            }),
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
    let unknown = models
        .set_default(pb::SetDefaultModelRequest {
            r#ref: Some(pb::ModelRef {
                model: "x".into(),
                api_mode: "telepathy".into(),
                ..pb::ModelRef::default()
            }),
        })
        .await
        .unwrap_err();
    assert_eq!(
        unknown.code(),
        tonic::Code::InvalidArgument,
        "{}",
        unknown.message()
    );
    let after = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    assert!(
        after.contains("default: fake-model"),
        "a rejected change is undone: {after}"
    );
}
