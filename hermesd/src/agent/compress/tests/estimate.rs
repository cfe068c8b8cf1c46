//! Token estimates and the correcting meter.

use super::{calls, result, user};
use crate::agent::compress::{
    TokenMeter, estimate_message, estimate_messages, estimate_request, estimate_text,
    estimate_tools,
};
use crate::llm::ToolSchema;

#[test]
fn ascii_is_about_four_chars_per_token() {
    assert_eq!(estimate_text(""), 0);
    assert_eq!(estimate_text("abc"), 1);
    assert_eq!(estimate_text(&"a".repeat(4_000)), 1_000);
}

#[test]
fn cjk_counts_about_one_token_per_char_and_cyrillic_two_chars() {
    assert_eq!(estimate_text(&"漢".repeat(100)), 100);
    assert_eq!(estimate_text(&"ж".repeat(100)), 50);
    assert_eq!(estimate_text(&"😀".repeat(100)), 150);
}

#[test]
fn message_estimate_counts_calls_results_and_overhead() {
    let empty = estimate_message(&user(""));
    assert!(empty > 0, "per-message overhead");
    let call = calls(&[(
        "call_1",
        "terminal",
        &format!("{{\"command\":\"{}\"}}", "x".repeat(400)),
    )]);
    assert!(estimate_message(&call) > empty + 100);
    let answered = result("call_1", Some("terminal"), &"y".repeat(800));
    assert!(estimate_message(&answered) >= 200);
}

#[test]
fn estimates_are_monotonic_in_content_and_messages() {
    let mut messages = vec![user("hello")];
    let mut last = estimate_messages(&messages);
    for step in 0..50 {
        if step % 2 == 0 {
            messages.push(result("c", None, &"z".repeat(step * 10)));
        } else {
            messages[0].content.push_str(" more words");
        }
        let now = estimate_messages(&messages);
        assert!(now > last, "estimate did not grow at step {step}");
        last = now;
    }
}

#[test]
fn request_estimate_adds_system_and_tool_schemas() {
    let messages = vec![user("hi")];
    let tool = std::sync::Arc::new(ToolSchema {
        name: "read_file".into(),
        description: "Read a text file".into(),
        parameters: serde_json::json!({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}),
    });
    let compact = serde_json::to_string(&serde_json::json!({"type":"function","function":{
        "name": tool.name, "description": tool.description, "parameters": tool.parameters}}))
    .unwrap();
    assert_eq!(
        estimate_tools(std::slice::from_ref(&tool)),
        compact.len().div_ceil(4) as u64
    );
    let bare = estimate_request("", &[], &messages);
    let full = estimate_request(&"s".repeat(400), std::slice::from_ref(&tool), &messages);
    assert_eq!(full, bare + 100 + estimate_tools(&[tool]));
}

#[test]
fn meter_starts_neutral_and_learns_the_reported_ratio() {
    let mut meter = TokenMeter::new();
    assert_eq!(meter.estimate(1_000), 1_000);
    meter.observe(10_000, 15_000);
    assert_eq!(meter.estimate(1_000), 1_500);
    meter.observe(10_000, 10_000);
    let factor = meter.factor();
    assert!(
        factor > 1.0 && factor < 1.5,
        "smoothed toward 1.0, got {factor}"
    );
    assert_eq!(meter.observations(), 2);
}

#[test]
fn meter_clamps_and_ignores_meaningless_readings() {
    let mut meter = TokenMeter::new();
    meter.observe(10, 10_000);
    meter.observe(5_000, 0);
    assert_eq!(meter.observations(), 0);
    meter.observe(1_000, 1_000_000);
    assert_eq!(meter.factor(), TokenMeter::MAX_FACTOR);
    for _ in 0..50 {
        meter.observe(1_000_000, 1);
    }
    assert!((meter.factor() - TokenMeter::MIN_FACTOR).abs() < 1e-6);
}
