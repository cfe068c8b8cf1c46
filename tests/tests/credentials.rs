//! Credential pools through the real daemon: Hermes' `auth.json` read and never written, keys
//! parked when refused and the next one used within the same turn, `hermesctl auth list|add|rm`,
//! the pool strategies, and `providers:` endpoints.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::{QUIET_AUXILIARY, StopOnDrop},
};

/// Hermes' shape (as `hermes auth add openrouter --api-key …` writes it): three manual keys.
const THREE_KEYS: &str = r#"{
  "version": 1,
  "providers": {},
  "credential_pool": {
    "openrouter": [
      {"id": "aaaaaa", "label": "first", "auth_type": "api_key", "priority": 0, "source": "manual",
       "access_token": "sk-or-first", "last_status": null, "last_status_at": null, "last_error_code": null,
       "last_error_reason": null, "last_error_message": null, "last_error_reset_at": null,
       "base_url": "https://openrouter.ai/api/v1", "request_count": 0},
      {"id": "bbbbbb", "label": "second", "auth_type": "api_key", "priority": 1, "source": "manual",
       "access_token": "sk-or-second", "last_status": null, "last_status_at": null, "last_error_code": null,
       "last_error_reason": null, "last_error_message": null, "last_error_reset_at": null,
       "base_url": "https://openrouter.ai/api/v1", "request_count": 0},
      {"id": "cccccc", "label": "third", "auth_type": "api_key", "priority": 2, "source": "manual",
       "access_token": "sk-or-third", "last_status": null, "last_status_at": null, "last_error_code": null,
       "last_error_reason": null, "last_error_message": null, "last_error_reset_at": null,
       "base_url": "https://openrouter.ai/api/v1", "request_count": 0}
    ]
  },
  "updated_at": "2026-12-08T00:52:03.271224+00:00"
}
"#;

/// OpenRouter, its URL pointed at the fake by Hermes' own variable, no key in the config.
fn openrouter_home(server: &FakeLlm, extra: &str) -> TestHome {
    let home = TestHome::new();
    home.write(
        "config.yaml",
        &format!("model:\n  provider: openrouter\n  default: some/model\n{QUIET_AUXILIARY}{extra}"),
    );
    home.write(
        ".env",
        &format!("OPENROUTER_BASE_URL={}\n", server.openai_base()),
    );
    home
}

fn bearers(server: &FakeLlm) -> Vec<String> {
    server
        .requests()
        .iter()
        .filter_map(|r| r.header("authorization").map(str::to_string))
        .collect()
}

fn quota_exceeded() -> Reply {
    Reply::error(
        429,
        r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_is_parked_and_the_turn_goes_on_with_the_next() {
    let server = FakeLlm::start(vec![
        quota_exceeded(),
        Reply::unauthorized(),
        Reply::text("the third key answered"),
        Reply::text("and again"),
    ])
    .await;
    let home = openrouter_home(&server, "");
    home.write("auth.json", THREE_KEYS);
    let _stop = StopOnDrop(&home);

    let out = home.ctl_async(&["send", "--json", "hello"]).await.json();
    assert_eq!(out["answer"], "the third key answered", "{out}");
    assert_eq!(
        bearers(&server),
        [
            "Bearer sk-or-first",
            "Bearer sk-or-second",
            "Bearer sk-or-third"
        ]
    );

    let listed = home.ctl_async(&["auth", "list", "--json"]).await.json();
    let rows = listed.as_array().unwrap();
    let row = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap().clone();
    let first = row("aaaaaa");
    assert_eq!(first["status"], "parked");
    assert_eq!(first["status_code"], 429);
    assert!(
        first["reason"]
            .as_str()
            .unwrap()
            .contains("exceeded your current quota"),
        "{first}"
    );
    let left = first["seconds_left"].as_u64().unwrap();
    assert!(
        (3500..=3600).contains(&left),
        "parked for Hermes' hour: {left}"
    );
    let second = row("bbbbbb");
    assert_eq!(
        (second["status"].clone(), second["status_code"].clone()),
        ("parked".into(), 401.into())
    );
    let left = second["seconds_left"].as_u64().unwrap();
    assert!(
        (200..=300).contains(&left),
        "a 401 is parked 5 minutes: {left}"
    );
    assert_eq!(row("cccccc")["status"], "ok");
    let human = home.ctl_async(&["auth", "list"]).await.ok();
    assert!(
        human.contains("openrouter (3 credentials, fill_first):"),
        "{human}"
    );
    assert!(
        human.contains("rate-limited: You exceeded your current quota"),
        "{human}"
    );
    assert!(
        human.contains("auth failed: Incorrect API key provided"),
        "{human}"
    );

    // The next turn starts at the third key: the parked ones are not tried again.
    let out = home.ctl_async(&["send", "--json", "again"]).await.json();
    assert_eq!(out["answer"], "and again");
    assert_eq!(bearers(&server).last().unwrap(), "Bearer sk-or-third");
    // Parking survives a restart, and Hermes' file is untouched.
    home.kill_daemon_hard().await;
    let listed = home
        .ctl_async(&["auth", "list", "--json", "openrouter"])
        .await
        .json();
    assert_eq!(listed[0]["status"], "parked", "{listed}");
    assert_eq!(
        std::fs::read_to_string(home.path().join("auth.json")).unwrap(),
        THREE_KEYS
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_key_refused_says_so_and_keeps_nothing_half_done() {
    let server = FakeLlm::start(vec![Reply::error(
        402,
        r#"{"error":{"message":"Insufficient credits"}}"#,
    )])
    .await;
    let home = openrouter_home(&server, "");
    home.write(
        ".env",
        &format!(
            "OPENROUTER_BASE_URL={}\nOPENROUTER_API_KEY=sk-or-env\n",
            server.openai_base()
        ),
    );
    let _stop = StopOnDrop(&home);
    let err = home.ctl_async(&["send", "hello"]).await.err();
    assert!(
        err.contains("billing") && err.contains("Insufficient credits"),
        "{err}"
    );
    assert!(
        err.contains("hermesctl auth add"),
        "the hint says what to do: {err}"
    );
    assert_eq!(bearers(&server), ["Bearer sk-or-env"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_added_listed_rotated_and_removed_through_hermesctl() {
    let server = FakeLlm::start(vec![
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
    ])
    .await;
    let home = openrouter_home(
        &server,
        "credential_pool_strategies:\n  openrouter: round_robin\n",
    );
    let _stop = StopOnDrop(&home);
    let added = home
        .ctl_stdin_async(
            &["auth", "add", "openrouter", "--label", "work"],
            "sk-or-pasted\n",
        )
        .await
        .ok();
    assert!(
        added.contains("Added openrouter credential #1: \"work\""),
        "{added}"
    );
    let added = home
        .ctl_async(&[
            "auth",
            "add",
            "openrouter",
            "--key-env",
            "SECOND_OR_KEY",
            "--json",
        ])
        .await
        .json();
    assert_eq!(added["label"], "api-key-2");
    assert_eq!(added["status"], "no_secret", "the variable is not set yet");
    home.write(
        ".env",
        &format!(
            "OPENROUTER_BASE_URL={}\nSECOND_OR_KEY=sk-or-from-env\n",
            server.openai_base()
        ),
    );
    home.ctl_async(&["daemon", "restart"]).await.ok();
    for text in ["one", "two", "three"] {
        let out = home.ctl_async(&["send", "--json", "hi"]).await.json();
        assert_eq!(out["answer"], text);
    }
    assert_eq!(
        bearers(&server),
        [
            "Bearer sk-or-pasted",
            "Bearer sk-or-from-env",
            "Bearer sk-or-pasted"
        ],
        "round_robin takes turns"
    );
    let stored =
        std::fs::read_to_string(home.path().join("hermesd-auth/credentials.json")).unwrap();
    assert!(stored.contains("sk-or-pasted") && !stored.contains("sk-or-from-env"));
    let log = std::fs::read_to_string(home.path().join("logs/hermesd.log")).unwrap_or_default();
    assert!(!log.contains("sk-or-pasted"), "keys never reach the log");
    let removed = home
        .ctl_async(&["auth", "rm", "openrouter", "work"])
        .await
        .ok();
    assert!(
        removed.contains("Removed openrouter credential #1 (work)"),
        "{removed}"
    );
    let listed = home.ctl_async(&["auth", "list", "--json"]).await.json();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    let err = home
        .ctl_async(&["auth", "rm", "openrouter", "nobody"])
        .await
        .err();
    assert!(
        err.contains("no credential \"nobody\" in pool openrouter"),
        "{err}"
    );
    let err = home
        .ctl_async(&["auth", "add", "nowhere", "--api-key", "k"])
        .await
        .err();
    assert!(err.contains("unknown provider"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_named_endpoint_under_providers_is_used_by_its_name() {
    let server = FakeLlm::start(vec![Reply::text("from my box")]).await;
    let home = TestHome::new();
    home.write(
        "config.yaml",
        &format!(
            "model:\n  provider: my-box\n{QUIET_AUXILIARY}providers:\n  my-box:\n    base_url: {}\n    key_env: BOX_KEY\n    default_model: box-model\n    models:\n      box-model: {{context_length: 12345}}\n",
            server.openai_base()
        ),
    );
    home.write(".env", "BOX_KEY=sk-box\n");
    let _stop = StopOnDrop(&home);
    let out = home.ctl_async(&["send", "--json", "hi"]).await.json();
    assert_eq!(out["answer"], "from my box");
    let request = server.requests().remove(0);
    assert_eq!(request.body["model"], "box-model");
    assert_eq!(request.header("authorization"), Some("Bearer sk-box"));
    let shown = home.ctl_async(&["model", "show", "--json"]).await.json();
    assert_eq!(shown["provider"], "my-box");
    assert_eq!(shown["context_length"], 12345);
}

/// The keys Python Hermes 0.19's own `hermes auth add` wrote are hermesd's pool, in its order;
/// after hermesd used them (and parked one), Python still reads its file as before.
#[tokio::test(flavor = "multi_thread")]
async fn the_auth_json_python_hermes_writes_is_read_and_left_as_it_was() {
    let hermes = hermes_tests::python_hermes::executable()
        .expect("HERMESD_BENCH_HERMES names Python Hermes' `hermes` (scripts/test provisions it)");
    let server = FakeLlm::start(vec![
        Reply::unauthorized(),
        Reply::text("python's second key"),
    ])
    .await;
    let home = openrouter_home(&server, "");
    for (key, label) in [("sk-or-py-one", "py-one"), ("sk-or-py-two", "py-two")] {
        let out = std::process::Command::new(&hermes)
            .args([
                "auth",
                "add",
                "openrouter",
                "--type",
                "api-key",
                "--api-key",
                key,
                "--label",
                label,
            ])
            .env("HERMES_HOME", home.path())
            .env("HOME", home.user_home())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run hermes auth add");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let written = std::fs::read_to_string(home.path().join("auth.json")).unwrap();
    let _stop = StopOnDrop(&home);
    let out = home.ctl_async(&["send", "--json", "hello"]).await.json();
    assert_eq!(out["answer"], "python's second key");
    assert_eq!(
        bearers(&server),
        ["Bearer sk-or-py-one", "Bearer sk-or-py-two"]
    );
    let listed = home
        .ctl_async(&["auth", "list", "--json", "openrouter"])
        .await
        .json();
    let labels: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["py-one", "py-two"]);
    assert_eq!(listed[0]["origin"], "auth.json");
    assert_eq!(listed[0]["status"], "parked");
    assert_eq!(
        std::fs::read_to_string(home.path().join("auth.json")).unwrap(),
        written
    );
    let out = std::process::Command::new(&hermes)
        .args(["auth", "list", "openrouter"])
        .env("HERMES_HOME", home.path())
        .env("HOME", home.user_home())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run hermes auth list");
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && listing.contains("py-one") && listing.contains("py-two"),
        "{listing}"
    );
}

/// A turn over the Responses API with a tool call: the reasoning items of each answer go back
/// with it on the next request, within the turn and in the next turn (from the store, after a
/// restart), and `agent.reasoning_effort` is passed on.
#[tokio::test(flavor = "multi_thread")]
async fn a_responses_api_turn_with_a_tool_call_keeps_its_reasoning_items() {
    let server = FakeLlm::start(vec![
        Reply::tool_call("terminal", r#"{"command": "echo hi"}"#).with_reasoning(&["run it"]),
        Reply::text("It printed hi.").with_reasoning(&["done"]),
        Reply::text("Still here."),
    ])
    .await;
    let home = TestHome::new();
    home.use_fake_model(
        &server,
        "model: {api_mode: codex_responses}\nagent: {reasoning_effort: high}\napprovals: {mode: off}\n",
    );
    let _stop = StopOnDrop(&home);
    let out = home
        .ctl_async(&["send", "--json", "run echo hi"])
        .await
        .json();
    assert_eq!(out["answer"], "It printed hi.", "{out}");
    let session = out["session_id"].as_str().unwrap().to_string();
    home.kill_daemon_hard().await;
    let out = home
        .ctl_async(&["send", "--json", "--session", &session, "and now?"])
        .await
        .json();
    assert_eq!(out["answer"], "Still here.", "{out}");
    let requests = server.requests();
    assert!(requests.iter().all(|r| r.path == "/v1/responses"));
    assert_eq!(requests[0].body["reasoning"]["effort"], "high");
    let kinds = |i: usize| -> Vec<String> {
        requests[i].body["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["type"].as_str().unwrap_or("message").to_string())
            .collect()
    };
    assert_eq!(
        kinds(1),
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output"
        ]
    );
    let output = &requests[1].body["input"][3]["output"];
    assert!(output.as_str().unwrap().contains("hi"), "{output}");
    assert_eq!(
        kinds(2),
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "reasoning",
            "message",
            "message"
        ],
        "both answers' reasoning comes back from the store"
    );
    let encrypted = |i: usize| requests[2].body["input"][i]["encrypted_content"].clone();
    assert_eq!(
        (encrypted(1), encrypted(4)),
        ("enc-1".into(), "enc-2".into()),
        "each answer's own item, in place"
    );
}

/// A turn whose answer read and wrote Anthropic's prompt cache costs what the price list says,
/// bucket by bucket: 1,000 fresh input tokens at $3/M, 500 output at $15/M, 10,000 read at
/// $0.30/M and 2,000 written at $3.75/M = $0.021.
#[tokio::test(flavor = "multi_thread")]
async fn a_turn_with_cache_reads_costs_the_hand_computed_figure() {
    let server = FakeLlm::start(vec![
        Reply::text("cached")
            .with_usage(1_000, 500)
            .with_cache(10_000, 2_000),
    ])
    .await;
    let home = TestHome::new();
    home.use_fake_model(
        &server,
        &format!(
            "model: {{default: claude-sonnet-4, api_mode: anthropic_messages, base_url: '{}'}}\n",
            server.anthropic_base()
        ),
    );
    let _stop = StopOnDrop(&home);
    let out = home.ctl_async(&["send", "--json", "hi"]).await.json();
    assert_eq!(out["answer"], "cached", "{out}");
    let usage = &out["usage"];
    assert_eq!(usage["cache_read_tokens"], 10_000);
    assert_eq!(usage["cache_write_tokens"], 2_000);
    let cost = usage["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.021).abs() < 1e-9, "{usage}");
    assert_eq!(usage["cost_status"], "estimated");
}
