//! The provider layer against the fake model server: streaming, tool calls, both wire formats,
//! and every error class with its one recovery, through hermesd's real `llm` code.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::fake_llm::{FakeLlm, Reply, ToolCall as FakeCall, chain};
use hermesd::llm::{
    ApiMode, Chain, ChainNotice, ChatMessage, ChatRequest, Completion, Endpoint, ErrorClass,
    LlmError, StreamEvent, ToolSchema,
};

fn endpoint(server: &FakeLlm, model: &str, mode: ApiMode) -> Endpoint {
    server.endpoint(model, mode)
}

fn request(text: &str) -> ChatRequest {
    ChatRequest {
        system: "you are a test".into(),
        messages: vec![ChatMessage::user(text)],
        tools: vec![std::sync::Arc::new(ToolSchema {
            name: "terminal".into(),
            description: "run a command".into(),
            parameters: serde_json::json!({"type": "object"}),
        })],
        max_tokens: None,
        reasoning_effort: None,
        cache_ttl: None,
    }
}

struct Run {
    result: Result<Completion, LlmError>,
    events: Vec<StreamEvent>,
    notices: Vec<ChainNotice>,
}

async fn run(chain: &Chain, request: &ChatRequest) -> Run {
    let mut events = Vec::new();
    let mut notices = Vec::new();
    let result = {
        let mut record = |e: StreamEvent| events.push(e);
        let mut sink: hermesd::llm::EventSink<'_> = &mut record;
        let mut note = |n: ChainNotice| notices.push(n);
        chain.complete(request, &mut sink, &mut note).await
    };
    Run {
        result,
        events,
        notices,
    }
}

fn models(server: &FakeLlm) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test]
async fn openai_stream_text_usage_and_request_shape() {
    let server = FakeLlm::start(vec![
        Reply::text_chunks(&["Hel", "lo ", "there"]).with_usage(12, 3),
    ])
    .await;
    let chain = chain(vec![endpoint(&server, "m1", ApiMode::ChatCompletions)]);
    let out = run(&chain, &request("hi")).await;
    let completion = out.result.unwrap();
    assert_eq!(completion.text, "Hello there");
    assert_eq!(
        (
            completion.usage.input_tokens,
            completion.usage.output_tokens
        ),
        (12, 3)
    );
    assert_eq!(completion.answered_by, "fake:m1");
    let texts: Vec<_> = out
        .events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Text(_)))
        .collect();
    assert_eq!(texts.len(), 3);
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent.body["stream"], true);
    assert_eq!(sent.body["stream_options"]["include_usage"], true);
    assert_eq!(sent.body["messages"][0]["role"], "system");
    assert_eq!(sent.body["tools"][0]["function"]["name"], "terminal");
}

#[tokio::test]
async fn tool_call_arguments_over_many_chunks_and_parallel_calls() {
    let args = r#"{"command": "ls -la /tmp && echo done", "timeout": 30}"#;
    let server = FakeLlm::start(vec![Reply::tool_calls(vec![
        FakeCall::new("terminal", args).chunked(17),
        FakeCall::new("read_file", r#"{"path": "/etc/hosts"}"#).chunked(5),
    ])])
    .await;
    let chain = chain(vec![endpoint(&server, "m", ApiMode::ChatCompletions)]);
    let completion = run(&chain, &request("go")).await.result.unwrap();
    assert_eq!(completion.tool_calls.len(), 2);
    assert_eq!(completion.tool_calls[0].name, "terminal");
    assert_eq!(completion.tool_calls[0].arguments, args);
    assert_eq!(
        completion.tool_calls[0].parsed_arguments().unwrap()["timeout"],
        30
    );
    assert_eq!(
        completion.tool_calls[1].parsed_arguments().unwrap()["path"],
        "/etc/hosts"
    );
    assert_eq!(completion.finish_reason, "tool_calls");
}

#[tokio::test]
async fn malformed_arguments_are_an_error_for_the_model_not_a_crash() {
    let server = FakeLlm::start(vec![Reply::invalid_tool_arguments("write_file")]).await;
    let chain = chain(vec![endpoint(&server, "m", ApiMode::ChatCompletions)]);
    let completion = run(&chain, &request("go")).await.result.unwrap();
    let err = completion.tool_calls[0].parsed_arguments().unwrap_err();
    assert!(
        err.contains("write_file") && err.contains("not valid JSON"),
        "{err}"
    );
}

#[tokio::test]
async fn text_format_tool_calls_from_a_local_model() {
    let tagged =
        "<tool_call>{\"name\": \"terminal\", \"arguments\": {\"command\": \"date\"}}</tool_call>";
    let bare = "{\"name\": \"terminal\", \"arguments\": {\"command\": \"uptime\"}}";
    let server = FakeLlm::start(vec![
        Reply::text(tagged),
        Reply::text(bare),
        Reply::text(bare),
    ])
    .await;
    let mut local = endpoint(&server, "qwen", ApiMode::ChatCompletions);
    local.text_tool_calls = true;
    let hosted = endpoint(&server, "gpt", ApiMode::ChatCompletions);

    let c = run(&chain(vec![hosted.clone()]), &request("a"))
        .await
        .result
        .unwrap();
    assert_eq!(
        c.tool_calls[0].parsed_arguments().unwrap()["command"],
        "date"
    );
    assert_eq!(c.text, "");
    let c = run(&chain(vec![local]), &request("b"))
        .await
        .result
        .unwrap();
    assert_eq!(
        c.tool_calls[0].parsed_arguments().unwrap()["command"],
        "uptime"
    );
    let c = run(&chain(vec![hosted]), &request("c"))
        .await
        .result
        .unwrap();
    assert!(
        c.tool_calls.is_empty(),
        "bare JSON only for endpoints marked text_tool_calls"
    );
}

#[tokio::test]
async fn anthropic_stream_thinking_text_tools_and_cache_marks() {
    let server = FakeLlm::start(vec![
        Reply::text_chunks(&["Hi", "!"])
            .with_reasoning(&["let me think"])
            .with_usage(40, 2),
        Reply::tool_calls(vec![
            FakeCall::new("terminal", r#"{"command": "pwd"}"#).chunked(4),
        ]),
    ])
    .await;
    let chain = chain(vec![endpoint(
        &server,
        "claude",
        ApiMode::AnthropicMessages,
    )]);
    let mut req = request("hello");
    for i in 0..4 {
        req.messages.push(ChatMessage::assistant(format!("a{i}")));
        req.messages.push(ChatMessage::user(format!("u{i}")));
    }
    let c = run(&chain, &req).await.result.unwrap();
    assert_eq!(
        (c.text.as_str(), c.reasoning.as_str()),
        ("Hi!", "let me think")
    );
    assert_eq!(c.usage.input_tokens, 40);
    let c = run(&chain, &request("tools")).await.result.unwrap();
    assert_eq!(
        c.tool_calls[0].parsed_arguments().unwrap()["command"],
        "pwd"
    );

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some("sk-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.body.to_string().matches("cache_control").count(), 4);
    assert!(sent.body["system"][0]["cache_control"].is_object());
    let messages = sent.body["messages"].as_array().unwrap();
    let marked: Vec<bool> = messages
        .iter()
        .map(|m| {
            m["content"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .get("cache_control")
                .is_some()
        })
        .collect();
    let n = marked.len();
    assert_eq!(&marked[n - 3..], &[true, true, true]);
    assert!(marked[..n - 3].iter().all(|m| !m));
}

#[tokio::test]
async fn rate_limit_honours_retry_after_then_succeeds() {
    let server = FakeLlm::start(vec![
        Reply::rate_limited("0"),
        Reply::overloaded(),
        Reply::text("finally"),
    ])
    .await;
    let chain = chain(vec![endpoint(&server, "m", ApiMode::ChatCompletions)]);
    let out = run(&chain, &request("x")).await;
    assert_eq!(out.result.unwrap().text, "finally");
    assert_eq!(server.requests().len(), 3);
    let retries = out
        .notices
        .iter()
        .filter(|n| matches!(n, ChainNotice::Retrying { .. }))
        .count();
    assert_eq!(retries, 2);
}

#[tokio::test]
async fn server_errors_back_off_three_times_then_fall_back() {
    let server = FakeLlm::start(vec![
        Reply::server_error(),
        Reply::server_error(),
        Reply::server_error(),
        Reply::server_error(),
        Reply::text("from the fallback"),
    ])
    .await;
    let chain = chain(vec![
        endpoint(&server, "primary", ApiMode::ChatCompletions),
        endpoint(&server, "backup", ApiMode::ChatCompletions),
    ]);
    let out = run(&chain, &request("x")).await;
    let completion = out.result.unwrap();
    assert_eq!(completion.text, "from the fallback");
    assert_eq!(completion.answered_by, "fake:backup");
    assert_eq!(
        models(&server),
        ["primary", "primary", "primary", "primary", "backup"]
    );
    assert!(matches!(
        out.notices.last(),
        Some(ChainNotice::FallingBack { .. })
    ));
}

#[tokio::test]
async fn auth_failure_goes_straight_to_the_next_fallback_and_the_primary_returns_next_turn() {
    let server = FakeLlm::start(vec![
        Reply::unauthorized(),
        Reply::anthropic_unauthorized(),
        Reply::text("third time"),
        Reply::text("primary again"),
    ])
    .await;
    let chain = chain(vec![
        endpoint(&server, "primary", ApiMode::ChatCompletions),
        endpoint(&server, "claude", ApiMode::AnthropicMessages),
        endpoint(&server, "last", ApiMode::ChatCompletions),
    ]);
    let first = run(&chain, &request("x")).await;
    assert_eq!(first.result.unwrap().answered_by, "fake:last");
    let second = run(&chain, &request("y")).await;
    assert_eq!(second.result.unwrap().text, "primary again");
    assert_eq!(models(&server), ["primary", "claude", "last", "primary"]);
}

#[tokio::test]
async fn context_overflow_and_bad_request_return_to_the_caller() {
    let server = FakeLlm::start(vec![
        Reply::context_overflow(),
        Reply::anthropic_prompt_too_long(),
        Reply::payload_too_large(),
        Reply::error(
            400,
            r#"{"error":{"message":"tools[0].function.name is invalid"}}"#,
        ),
    ])
    .await;
    let openai = chain(vec![
        endpoint(&server, "m", ApiMode::ChatCompletions),
        endpoint(&server, "never", ApiMode::ChatCompletions),
    ]);
    let anthropic = chain(vec![endpoint(&server, "c", ApiMode::AnthropicMessages)]);
    let e = run(&openai, &request("x")).await.result.unwrap_err();
    assert_eq!(e.class, ErrorClass::ContextOverflow);
    assert!(e.class.needs_compression());
    let e = run(&anthropic, &request("x")).await.result.unwrap_err();
    assert_eq!(e.class, ErrorClass::ContextOverflow);
    let e = run(&openai, &request("x")).await.result.unwrap_err();
    assert_eq!(e.class, ErrorClass::PayloadTooLarge);
    let e = run(&openai, &request("x")).await.result.unwrap_err();
    assert_eq!(e.class, ErrorClass::BadRequest);
    assert_eq!(e.message, "tools[0].function.name is invalid");
    assert!(
        !models(&server).contains(&"never".to_string()),
        "no fallback for these"
    );
}

#[tokio::test]
async fn a_stalled_provider_is_abandoned_for_the_fallback_without_retry() {
    // A server each: which request takes which reply must not hang on whether the abandoned
    // request was written before its timeout.
    let slow = FakeLlm::start(vec![
        Reply::stall_before_headers(3_000),
        Reply::stall_after_headers(3_000, &["partial "]),
    ])
    .await;
    let quick = FakeLlm::start(vec![
        Reply::text("fallback answer"),
        Reply::text("second fallback answer"),
    ])
    .await;
    let mut primary = endpoint(&slow, "slow", ApiMode::ChatCompletions);
    primary.stale_timeout = Duration::from_millis(1_000);
    let chain = chain(vec![
        primary,
        endpoint(&quick, "quick", ApiMode::ChatCompletions),
    ]);
    let out = run(&chain, &request("x")).await;
    assert_eq!(out.result.unwrap().text, "fallback answer");
    let out = run(&chain, &request("y")).await;
    assert_eq!(out.result.unwrap().text, "second fallback answer");
    assert!(
        out.events.contains(&StreamEvent::Reset),
        "partial output is voided"
    );
    assert_eq!(models(&slow), ["slow", "slow"], "abandoned, not retried");
    assert_eq!(models(&quick), ["quick", "quick"]);
}

#[tokio::test]
async fn a_cut_or_malformed_stream_is_retried_once_without_streaming() {
    let server = FakeLlm::start(vec![
        Reply::cut_mid_stream(&["Hal", "f"]),
        Reply::text("whole answer"),
        Reply::MalformedSse,
        Reply::text("whole again"),
    ])
    .await;
    let chain = chain(vec![endpoint(&server, "m", ApiMode::ChatCompletions)]);
    let out = run(&chain, &request("x")).await;
    assert_eq!(out.result.unwrap().text, "whole answer");
    let reset_at = out
        .events
        .iter()
        .position(|e| *e == StreamEvent::Reset)
        .unwrap();
    assert_eq!(
        out.events[reset_at + 1],
        StreamEvent::Text("whole answer".into())
    );
    assert_eq!(
        run(&chain, &request("y")).await.result.unwrap().text,
        "whole again"
    );
    let streams: Vec<bool> = server
        .requests()
        .iter()
        .map(|r| r.body["stream"] == true)
        .collect();
    assert_eq!(streams, [true, false, true, false]);
}

#[tokio::test]
async fn when_everything_fails_the_error_says_so() {
    let server = FakeLlm::start(vec![Reply::unauthorized(), Reply::unauthorized()]).await;
    let chain = chain(vec![
        endpoint(&server, "a", ApiMode::ChatCompletions),
        endpoint(&server, "b", ApiMode::ChatCompletions),
    ]);
    let e = run(&chain, &request("x")).await.result.unwrap_err();
    assert_eq!(e.class, ErrorClass::Auth);
    assert!(
        e.message
            .starts_with("all 2 providers failed; the last said:"),
        "{}",
        e.message
    );
    assert_eq!(e.provider, "fake:b");
}

#[tokio::test]
async fn waits_follow_retry_after_and_the_backoff() {
    // Lower bounds only: a loaded machine may wait longer, never shorter.
    let server = FakeLlm::start(vec![
        Reply::rate_limited("1"),
        Reply::server_error(),
        Reply::server_error(),
        Reply::text("done"),
    ])
    .await;
    let mut chain = chain(vec![endpoint(&server, "m", ApiMode::ChatCompletions)]);
    chain.policy.base_delay = Duration::from_millis(100);
    let out = run(&chain, &request("x")).await;
    assert_eq!(out.result.unwrap().text, "done");
    let at: Vec<_> = server.requests().iter().map(|r| r.received_at).collect();
    assert!(
        at[1] - at[0] >= Duration::from_secs(1),
        "Retry-After: 1 honoured"
    );
    // Retries after the Retry-After one use backoff 100 ms × 2^n × [0.5, 1.5).
    assert!(
        at[2] - at[1] >= Duration::from_millis(100),
        "{:?}",
        at[2] - at[1]
    );
    assert!(
        at[3] - at[2] >= Duration::from_millis(200),
        "{:?}",
        at[3] - at[2]
    );
    let waits: Vec<Duration> = out
        .notices
        .iter()
        .filter_map(|n| match n {
            ChainNotice::Retrying { wait, .. } => Some(*wait),
            _ => None,
        })
        .collect();
    assert_eq!(waits[0], Duration::from_secs(1));
    assert_eq!(waits.len(), 3);
}

#[tokio::test]
async fn a_refused_connection_backs_off_and_a_connect_timeout_falls_back_at_once() {
    let server = FakeLlm::start(vec![
        Reply::text("after refusal"),
        Reply::text("after timeout"),
    ])
    .await;
    // A port nobody listens on refuses; a listener whose accept queue is full never answers a SYN.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let refused_url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let silent = tokio::net::TcpSocket::new_v4().unwrap();
    silent.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let silent = silent.listen(1).unwrap();
    let silent_addr = silent.local_addr().unwrap();
    let mut queued = Vec::new();
    for _ in 0..2 {
        queued.push(std::net::TcpStream::connect(silent_addr).unwrap());
    }
    let at = |base_url: String, model: &str| Endpoint {
        base_url,
        ..endpoint(&server, model, ApiMode::ChatCompletions)
    };
    let mut chain = chain(vec![
        at(refused_url, "refused"),
        endpoint(&server, "up", ApiMode::ChatCompletions),
    ]);
    chain.client = hermesd::llm::HttpClient::new(Duration::from_millis(300)).unwrap();

    let out = run(&chain, &request("x")).await;
    assert_eq!(out.result.unwrap().text, "after refusal");
    let retries = out
        .notices
        .iter()
        .filter(|n| matches!(n, ChainNotice::Retrying { reason, .. } if reason.contains("cannot connect")))
        .count();
    assert_eq!(retries, 3, "{:?}", out.notices);

    chain.endpoints[0] = at(format!("http://{silent_addr}/v1"), "silent");
    let began = std::time::Instant::now();
    let out = run(&chain, &request("y")).await;
    assert_eq!(out.result.unwrap().text, "after timeout");
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    match &out.notices[..] {
        [ChainNotice::FallingBack { from, reason, .. }] => {
            assert_eq!(from, "fake:silent");
            assert!(
                reason.contains("cannot connect within model.connect_timeout"),
                "{reason}"
            );
        }
        other => panic!("expected one fallback and no retry: {other:?}"),
    }
    assert_eq!(models(&server), ["up", "up"]);
    drop(queued);
}

#[tokio::test]
async fn a_redirect_is_not_followed_and_names_the_new_address() {
    let server = FakeLlm::start(vec![Reply::redirect(
        308,
        "https://api.example.test/v2/chat/completions",
    )])
    .await;
    let chain = chain(vec![endpoint(&server, "moved", ApiMode::ChatCompletions)]);
    let e = run(&chain, &request("x")).await.result.unwrap_err();
    assert_eq!(e.class, ErrorClass::BadRequest);
    assert!(
        e.message
            .contains("redirected to https://api.example.test/v2/chat/completions"),
        "{}",
        e.message
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn responses_api_streams_text_and_a_tool_call_and_keeps_reasoning_items() {
    let server = FakeLlm::start(vec![
        Reply::tool_call("terminal", r#"{"command": "ls"}"#).with_reasoning(&["look ", "first"]),
        Reply::text_chunks(&["Two ", "files."]).with_usage(40, 5),
    ])
    .await;
    let chain = chain(vec![endpoint(&server, "gpt-5", ApiMode::CodexResponses)]);
    let first = run(&chain, &request("what is here?")).await.result.unwrap();
    assert_eq!(first.reasoning, "look first");
    assert_eq!(first.tool_calls.len(), 1);
    assert_eq!(first.tool_calls[0].name, "terminal");
    assert_eq!(first.finish_reason, "tool_calls");
    let items = first.provider_items.clone().unwrap();
    assert!(items.contains("enc-"), "{items}");

    let mut next = request("what is here?");
    next.messages.push(ChatMessage {
        tool_calls: first.tool_calls.clone(),
        provider_items: first.provider_items.clone(),
        ..ChatMessage::assistant("")
    });
    next.messages.push(ChatMessage {
        role: Some(hermesd::llm::Role::Tool),
        content: "a.txt b.txt".into(),
        tool_call_id: Some(first.tool_calls[0].id.clone()),
        ..ChatMessage::default()
    });
    let second = run(&chain, &next).await.result.unwrap();
    assert_eq!(second.text, "Two files.");
    assert_eq!(
        (second.usage.input_tokens, second.usage.output_tokens),
        (40, 5)
    );
    let sent = server.requests().remove(1);
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    let input = sent.body["input"].as_array().unwrap();
    assert_eq!(input[1]["type"], "reasoning", "{input:?}");
    assert!(
        input[1]["encrypted_content"]
            .as_str()
            .unwrap()
            .starts_with("enc-")
    );
    assert_eq!(input[2]["type"], "function_call");
    assert_eq!(input[3]["type"], "function_call_output");
    assert_eq!(input[3]["output"], "a.txt b.txt");
    assert_eq!(sent.body["reasoning"]["effort"], "medium");
}

#[tokio::test]
async fn responses_api_errors_keep_their_classes() {
    let server = FakeLlm::start(vec![
        Reply::unauthorized(),
        Reply::error(
            429,
            r#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#,
        ),
    ])
    .await;
    let chain = chain(vec![endpoint(&server, "gpt-5", ApiMode::CodexResponses)]);
    let error = run(&chain, &request("hi")).await.result.unwrap_err();
    assert_eq!(error.class, ErrorClass::Auth);
    let error = run(&chain, &request("hi")).await.result.unwrap_err();
    assert_eq!(error.class, ErrorClass::Billing);
}

/// A refused key hands the request to the next key in the pool's own order: with round_robin
/// the refused first key is followed by the second, and the next request goes on to the third.
#[tokio::test]
async fn a_refused_key_rotates_in_the_pools_order() {
    let home = tempfile::tempdir().unwrap();
    let rows: Vec<String> = (0..3)
        .map(|i| format!(r#"{{"id": "k{i}", "label": "key{i}", "priority": {i}, "source": "manual", "access_token": "sk-{i}"}}"#))
        .collect();
    std::fs::write(
        home.path().join("auth.json"),
        format!(
            r#"{{"version": 1, "credential_pool": {{"openrouter": [{}]}}}}"#,
            rows.join(",")
        ),
    )
    .unwrap();
    let strategies = [(
        "openrouter".to_string(),
        hermesd::auth::Strategy::RoundRobin,
    )];
    let credentials = hermesd::auth::Credentials::load(
        home.path(),
        &hermes_proto::env::Env::default(),
        &strategies,
    );
    let server = FakeLlm::start(vec![
        Reply::unauthorized(),
        Reply::text("one"),
        Reply::text("two"),
    ])
    .await;
    let mut keyed = endpoint(&server, "m", ApiMode::ChatCompletions);
    keyed.pool = Some("openrouter".into());
    keyed.api_key = None;
    let mut chain = chain(vec![keyed]);
    chain.credentials = Some(std::sync::Arc::new(credentials));
    assert_eq!(run(&chain, &request("a")).await.result.unwrap().text, "one");
    assert_eq!(run(&chain, &request("b")).await.result.unwrap().text, "two");
    let keys: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap_or("").to_string())
        .collect();
    assert_eq!(keys, ["Bearer sk-0", "Bearer sk-1", "Bearer sk-2"]);
}

/// Reasoning items the endpoint cannot decrypt (another model or account made them) are refused;
/// the request goes again without them instead of failing the turn.
#[tokio::test]
async fn responses_api_drops_reasoning_items_it_refuses() {
    let server = FakeLlm::start(vec![
        Reply::error(
            400,
            r#"{"error":{"message":"The encrypted content could not be verified.","code":"invalid_encrypted_content"}}"#,
        ),
        Reply::text("fresh start"),
    ])
    .await;
    let chain = chain(vec![endpoint(&server, "gpt-5", ApiMode::CodexResponses)]);
    let mut asked = request("hi");
    asked.messages.insert(
        0,
        ChatMessage {
            provider_items: Some(
                r#"[{"type":"reasoning","encrypted_content":"other-org"}]"#.into(),
            ),
            ..ChatMessage::assistant("earlier")
        },
    );
    let out = run(&chain, &asked).await.result.unwrap();
    assert_eq!(out.text, "fresh start");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].body.to_string().contains("other-org"));
    assert!(!requests[1].body.to_string().contains("other-org"));
}
