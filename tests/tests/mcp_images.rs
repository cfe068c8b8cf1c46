//! An MCP server's image result reaches a model that can see as image content — OpenAI's
//! `image_url` part after the tool results, Anthropic's image block inside the `tool_result` —
//! read from the file the daemon saved (never stored as base64); a text-only model gets the
//! file's path only. Against `@modelcontextprotocol/server-everything`'s `get_tiny_image`, which
//! the test command provisions (a missing server fails the test, never skips).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::path::PathBuf;

use base64::Engine as _;
use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};
use serde_json::Value;

fn everything() -> String {
    let modules = std::env::var("HERMESD_TEST_NODE_MODULES").unwrap_or_else(|_| {
        panic!("HERMESD_TEST_NODE_MODULES is not set: run the tests with scripts/test")
    });
    let entry =
        PathBuf::from(modules).join("@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.exists(),
        "{} is missing: run scripts/test",
        entry.display()
    );
    entry.display().to_string()
}

/// The PNG bytes the server saved, found by the path the tool result names.
fn saved_png(result: &str) -> Vec<u8> {
    let value: Value = serde_json::from_str(result).unwrap();
    let text = value["result"].as_str().unwrap();
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("MEDIA:"))
        .unwrap_or_else(|| panic!("no image in {text}"));
    std::fs::read(path).unwrap()
}

/// Run one turn where the model calls `get_tiny_image`; the model's second request.
async fn second_request(api: &str, extra: &str) -> (Value, Vec<u8>) {
    let llm = FakeLlm::start(vec![
        Reply::tool_call("mcp__everything__get_tiny_image", "{}"),
        Reply::text("a tiny image"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &llm,
        &format!(
            "mcp_servers:\n  everything:\n    command: node\n    args: [{}, stdio]\n{extra}",
            everything()
        ),
    );
    if api == "anthropic" {
        let config = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
        let config = config
            .replace("provider: custom", "provider: anthropic")
            .replace(&llm.openai_base(), &llm.anthropic_base());
        home.write("config.yaml", &config);
    }
    let sent = home.ctl_async(&["send", "show me"]).await.ok();
    assert!(sent.contains("a tiny image"), "{sent}");
    let request = llm.chat_requests()[1].clone();
    let png = saved_png(&tool_result(&request.body, api));
    (request.body, png)
}

fn tool_result(body: &Value, api: &str) -> String {
    let messages = body["messages"].as_array().unwrap();
    if api == "anthropic" {
        let block = messages
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .find(|b| b["type"] == "tool_result")
            .unwrap();
        match &block["content"] {
            Value::String(s) => s.clone(),
            other => other[0]["text"].as_str().unwrap().to_string(),
        }
    } else {
        messages.iter().find(|m| m["role"] == "tool").unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_openai_model_that_can_see_gets_the_image_after_the_tool_result() {
    let (body, png) = second_request("openai", "model:\n  supports_vision: true\n").await;
    let messages = body["messages"].as_array().unwrap();
    let tool_at = messages.iter().position(|m| m["role"] == "tool").unwrap();
    let carrier = &messages[tool_at + 1];
    assert_eq!(carrier["role"], "user", "{carrier}");
    let url = carrier["content"][1]["image_url"]["url"].as_str().unwrap();
    let data = url.strip_prefix("data:image/png;base64,").unwrap();
    let sent = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    assert_eq!(sent, png, "the server's own image, byte for byte");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_anthropic_model_gets_the_image_inside_the_tool_result() {
    let (body, png) = second_request("anthropic", "model:\n  supports_vision: true\n").await;
    let block = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .unwrap();
    let image = &block["content"][1];
    assert_eq!(image["type"], "image", "{block}");
    assert_eq!(image["source"]["media_type"], "image/png");
    let sent = base64::engine::general_purpose::STANDARD
        .decode(image["source"]["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(sent, png);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_text_only_model_gets_the_path_and_no_pixels() {
    let (body, _) = second_request("openai", "").await;
    let text = body.to_string();
    assert!(
        !text.contains(r#""type":"image_url""#),
        "fake-model is not known to see"
    );
    assert!(text.contains("MEDIA:"), "the path is named");
}
