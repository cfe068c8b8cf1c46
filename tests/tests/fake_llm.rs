//! Self-tests of the scripted fake LLM server: OpenAI and Anthropic shapes (streaming and not),
//! tool calls, errors, stalls, cut and malformed streams, loop mode, exhaustion, the request log.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use hermes_tests::fake_llm::{FakeLlm, FakeModel, Reply, ScriptFile, ToolCall};
use hermesd::llm::{HttpClient, HttpResponse as Response};
use serde_json::{Value, json};

/// hermesd's own HTTP client, which the fake server exists to serve.
fn client() -> HttpClient {
    HttpClient::new(Duration::from_secs(5)).unwrap()
}

async fn post(url: &str, body: Value) -> Response {
    client().post(url).json(&body).send().await.unwrap()
}

/// The SSE events of a response as (event name, data) pairs.
async fn sse_events(response: Response) -> Vec<(String, String)> {
    let stream = response.into_stream().eventsource();
    let events: Vec<_> = stream.collect().await;
    events
        .into_iter()
        .map(|e| e.unwrap())
        .map(|e| (e.event, e.data))
        .collect()
}

/// The JSON chunks of an OpenAI stream, asserting it ends with `[DONE]`.
async fn openai_chunks(response: Response) -> Vec<Value> {
    let mut data: Vec<String> = sse_events(response)
        .await
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    assert_eq!(data.pop().as_deref(), Some("[DONE]"));
    data.iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

fn user_chat(stream: bool) -> Value {
    json!({"model": "gpt-fake", "stream": stream, "messages": [{"role": "user", "content": "hi"}]})
}

#[tokio::test]
async fn openai_streaming_text_arrives_as_deltas_then_done_with_optional_usage() {
    let text = Reply::text_chunks(&["Hel", "lo", " world"]).with_usage(12, 3);
    let llm = FakeLlm::start(vec![text.clone(), text]).await;
    let url = format!("{}/chat/completions", llm.openai_base());
    let mut body = user_chat(true);
    body["stream_options"] = json!({"include_usage": true});
    let chunks = openai_chunks(post(&url, body).await).await;

    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(chunks[0]["object"], "chat.completion.chunk");
    assert_eq!(chunks[0]["model"], "gpt-fake");
    let contents: Vec<&str> = chunks[1..]
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(contents, ["Hel", "lo", " world"]);
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["prompt_tokens"], 12);
    assert_eq!(usage["usage"]["completion_tokens"], 3);

    let chunks = openai_chunks(post(&url, user_chat(true)).await).await;
    assert_eq!(
        chunks.len(),
        5,
        "role, three deltas, finish; no usage chunk unless asked"
    );
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
}

#[tokio::test]
async fn openai_non_streaming_json_has_message_reasoning_and_usage() {
    let reply = Reply::text_chunks(&["a", "b"])
        .with_reasoning(&["think", "ing"])
        .with_usage(5, 2);
    let llm = FakeLlm::start(vec![reply]).await;
    let url = format!("{}/chat/completions", llm.openai_base());
    let response: Value = post(&url, user_chat(false)).await.json().await.unwrap();
    assert_eq!(response["object"], "chat.completion");
    assert_eq!(response["id"], "chatcmpl-fake-1");
    let choice = &response["choices"][0];
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(choice["message"]["content"], "ab");
    assert_eq!(choice["message"]["reasoning_content"], "thinking");
    assert_eq!(choice["finish_reason"], "stop");
    assert_eq!(
        response["usage"],
        json!({"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7})
    );
}

#[tokio::test]
async fn openai_tool_call_chunks_concatenate_and_parallel_calls_have_indexes() {
    let args = r#"{"path": "/etc/hosts", "limit": 10}"#;
    let calls = vec![
        ToolCall::new("read_file", args).chunked(4),
        ToolCall::new("ls", "{}").with_id("call_b"),
    ];
    let llm = FakeLlm::start(vec![
        Reply::tool_calls(calls.clone()),
        Reply::tool_calls(calls),
    ])
    .await;
    let url = format!("{}/chat/completions", llm.openai_base());
    let chunks = openai_chunks(post(&url, user_chat(true)).await).await;

    let deltas: Vec<&Value> = chunks
        .iter()
        .flat_map(|c| c["choices"][0]["delta"]["tool_calls"].as_array())
        .flatten()
        .collect();
    let of = |index: u64| deltas.iter().filter(move |d| d["index"] == index);
    assert_eq!(of(0).count(), 4);
    assert_eq!(
        of(0)
            .map(|d| d["function"]["arguments"].as_str().unwrap())
            .collect::<String>(),
        args
    );
    assert_eq!(of(0).next().unwrap()["function"]["name"], "read_file");
    assert_eq!(of(0).next().unwrap()["type"], "function");
    assert!(
        of(0)
            .skip(1)
            .all(|d| d.get("id").is_none() && d["function"].get("name").is_none())
    );
    assert_eq!(of(1).next().unwrap()["id"], "call_b");
    assert_eq!(deltas.len(), 5, "no index other than 0 and 1");
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );

    let response: Value = post(&url, user_chat(false)).await.json().await.unwrap();
    let message = &response["choices"][0]["message"];
    assert_eq!(message["tool_calls"][0]["function"]["arguments"], args);
    assert_eq!(message["tool_calls"][1]["function"]["name"], "ls");
    assert_eq!(message["content"], Value::Null);
    assert_eq!(response["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn anthropic_streaming_has_thinking_text_and_tool_use_events() {
    let thinking = Reply::text_chunks(&["Hi", "!"])
        .with_reasoning(&["hmm"])
        .with_usage(9, 4);
    let tool = Reply::ToolCalls {
        text: Some("Let me look.".into()),
        calls: vec![ToolCall::new("ls", r#"{"dir":"/"}"#).chunked(2)],
        reasoning: Vec::new(),
    };
    let llm = FakeLlm::start(vec![thinking, tool]).await;
    let url = format!("{}/v1/messages", llm.anthropic_base());
    let request =
        json!({"model": "claude-fake", "stream": true, "max_tokens": 100, "messages": []});

    let events = sse_events(post(&url, request.clone()).await).await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    let block = |kind: usize| -> Vec<&str> {
        let mut names = vec!["content_block_start"];
        names.extend(std::iter::repeat_n("content_block_delta", kind));
        names.push("content_block_stop");
        names
    };
    let expected = [
        vec!["message_start"],
        block(2),
        block(2),
        vec!["message_delta", "message_stop"],
    ]
    .concat();
    assert_eq!(
        names, expected,
        "thinking block (thinking + signature deltas), text block"
    );
    let data: Vec<Value> = events
        .iter()
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(data[0]["message"]["usage"]["input_tokens"], 9);
    assert_eq!(data[0]["message"]["model"], "claude-fake");
    assert_eq!(data[1]["content_block"]["type"], "thinking");
    assert_eq!(
        data[2]["delta"],
        json!({"type": "thinking_delta", "thinking": "hmm"})
    );
    assert_eq!(
        data[6]["delta"],
        json!({"type": "text_delta", "text": "Hi"})
    );
    assert_eq!(data[6]["index"], 1);
    assert_eq!(data[9]["delta"]["stop_reason"], "end_turn");
    assert_eq!(data[9]["usage"]["output_tokens"], 4);

    let events = sse_events(post(&url, request).await).await;
    let data: Vec<Value> = events
        .iter()
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    let tool_start = data
        .iter()
        .find(|d| d["content_block"]["type"] == "tool_use")
        .unwrap();
    assert_eq!(tool_start["content_block"]["name"], "ls");
    assert_eq!(tool_start["index"], 1);
    let partial: String = data
        .iter()
        .filter_map(|d| d["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(partial, r#"{"dir":"/"}"#);
    assert_eq!(
        data.iter()
            .filter(|d| d["delta"]["type"] == "input_json_delta")
            .count(),
        2
    );
    assert_eq!(data[data.len() - 2]["delta"]["stop_reason"], "tool_use");
}

#[tokio::test]
async fn anthropic_non_streaming_message_shape_keeps_invalid_input_as_string() {
    let tool = Reply::ToolCalls {
        text: Some("ok".into()),
        calls: vec![ToolCall::new("ls", r#"{"dir":"/"}"#).with_id("toolu_1")],
        reasoning: Vec::new(),
    };
    let llm = FakeLlm::start(vec![tool, Reply::invalid_tool_arguments("write")]).await;
    let url = format!("{}/v1/messages", llm.anthropic_base());
    let message: Value = post(&url, json!({"model": "c", "messages": []}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(message["type"], "message");
    assert_eq!(message["id"], "msg_fake_1");
    assert_eq!(message["content"][0], json!({"type": "text", "text": "ok"}));
    assert_eq!(
        message["content"][1],
        json!({"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"dir": "/"}})
    );
    assert_eq!(message["stop_reason"], "tool_use");
    assert!(message["usage"]["input_tokens"].as_u64().unwrap() > 0);

    let message: Value = post(&url, json!({"model": "c", "messages": []}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(message["content"][0]["input"], r#"{"path": "/tmp/x"#);
}

#[tokio::test]
async fn error_replies_have_status_retry_after_and_body() {
    let llm = FakeLlm::start(vec![
        Reply::rate_limited("7"),
        Reply::anthropic_overloaded(),
        Reply::context_overflow(),
    ])
    .await;
    let url = format!("{}/chat/completions", llm.openai_base());
    let response = post(&url, user_chat(false)).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "7");
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Rate limit")
    );

    let response = post(&format!("{}/v1/messages", llm.anthropic_base()), json!({})).await;
    assert_eq!(response.status(), 529);
    assert!(response.headers().get("retry-after").is_none());
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["type"], "overloaded_error");

    let response = post(&url, user_chat(true)).await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "context_length_exceeded");
}

#[tokio::test]
async fn stall_before_headers_times_out_the_client_and_the_server_serves_on() {
    let llm = FakeLlm::start(vec![Reply::stall_before_headers(1500), Reply::text("next")]).await;
    let url = format!("{}/chat/completions", llm.openai_base());
    let stalled_url = url.clone();
    let mut request = tokio::spawn(async move {
        let _ = client()
            .post(&stalled_url)
            .json(&user_chat(false))
            .send()
            .await;
    });
    // The stalled request has its reply before the next one asks.
    assert_eq!(
        llm.wait_for_requests(1, Duration::from_secs(10))
            .await
            .len(),
        1
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(200), &mut request)
            .await
            .is_err(),
        "no head within 200 ms"
    );
    request.abort();

    let response: Value = post(&url, user_chat(false)).await.json().await.unwrap();
    assert_eq!(response["choices"][0]["message"]["content"], "next");
}

#[tokio::test]
async fn a_held_reply_waits_for_release_then_ends_normally() {
    let llm = FakeLlm::start(vec![
        Reply::held(&["one ", "two "], &["three"]),
        Reply::held(&[], &["second hold"]),
    ])
    .await;
    let url = format!("{}/chat/completions", llm.openai_base());
    let response = post(&url, user_chat(true)).await;
    assert_eq!(response.status(), 200);
    let mut events = response.into_stream().eventsource();
    let mut text = String::new();
    while text != "one two " {
        let event = events.next().await.unwrap().unwrap();
        let chunk: Value = serde_json::from_str(&event.data).unwrap();
        text.push_str(
            chunk["choices"][0]["delta"]["content"]
                .as_str()
                .unwrap_or(""),
        );
    }
    assert!(
        tokio::time::timeout(Duration::from_millis(100), events.next())
            .await
            .is_err(),
        "nothing more until released"
    );
    llm.release();
    let mut rest = Vec::new();
    while let Some(event) = events.next().await {
        rest.push(event.unwrap().data);
    }
    assert_eq!(rest.last().map(String::as_str), Some("[DONE]"));
    assert!(
        rest.iter().any(|d| d.contains(r#""content":"three""#)),
        "{rest:?}"
    );
    assert!(
        rest.iter().any(|d| d.contains(r#""finish_reason":"stop""#)),
        "{rest:?}"
    );

    // The second hold, not streamed, answers whole once released.
    let second = tokio::spawn({
        let url = url.clone();
        async move {
            post(&url, user_chat(false))
                .await
                .json::<Value>()
                .await
                .unwrap()
        }
    });
    llm.wait_for_requests(2, Duration::from_secs(10)).await;
    llm.release();
    let answer = second.await.unwrap();
    assert_eq!(answer["choices"][0]["message"]["content"], "second hold");
}

#[tokio::test]
async fn stall_after_headers_sends_headers_and_chunks_then_ends_without_done() {
    let llm = FakeLlm::start(vec![Reply::stall_after_headers(1000, &["partial"])]).await;
    let url = format!("{}/chat/completions", llm.openai_base());
    let started = Instant::now();
    let response = post(&url, user_chat(true)).await;
    assert_eq!(response.status(), 200);
    assert!(
        started.elapsed() < Duration::from_millis(1000),
        "headers arrive before the stall ends"
    );
    let text = response.text().await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(1000),
        "the body ends after the stall"
    );
    assert!(text.contains(r#""content":"partial""#));
    assert!(!text.contains("[DONE]"));
}

#[tokio::test]
async fn cut_mid_stream_ends_the_body_early_with_an_error() {
    let llm = FakeLlm::start(vec![Reply::cut_mid_stream(&["one", "two"])]).await;
    let url = format!("{}/chat/completions", llm.openai_base());
    let mut body = post(&url, user_chat(true)).await.into_stream();
    let (mut received, mut failed) = (String::new(), false);
    while let Some(piece) = body.next().await {
        match piece {
            Ok(bytes) => received.push_str(&String::from_utf8_lossy(&bytes)),
            Err(_) => failed = true,
        }
    }
    assert!(failed, "the body stream ends in an error; got {received:?}");
    assert!(received.contains(r#""content":"two""#));
    assert!(!received.contains("[DONE]"));
    assert!(!received.contains("finish_reason\":\"stop"));
}

#[tokio::test]
async fn malformed_sse_line_is_delivered_as_is() {
    let llm = FakeLlm::start(vec![Reply::MalformedSse]).await;
    let response = post(
        &format!("{}/chat/completions", llm.openai_base()),
        user_chat(true),
    )
    .await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(
        response.text().await.unwrap(),
        "data: {not json\n\ndata: [DONE]\n\n"
    );
}

#[tokio::test]
async fn loop_answers_tool_calls_until_enough_results_then_final_text_then_moves_on() {
    let looping = Reply::tool_loop("bash", r#"{"cmd":"ls"}"#, 2, "all done");
    let llm = FakeLlm::start(vec![looping, Reply::text("after")]).await;
    let openai = format!("{}/chat/completions", llm.openai_base());
    let anthropic = format!("{}/v1/messages", llm.anthropic_base());
    let result_block = json!({"type": "tool_result", "tool_use_id": "x", "content": "ok"});
    let tool_result = json!({"role": "user", "content": [result_block]});

    let first: Value = post(&openai, user_chat(false)).await.json().await.unwrap();
    let call = &first["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(
        (call["id"].as_str(), call["function"]["name"].as_str()),
        (Some("call_1"), Some("bash"))
    );
    assert_eq!(call["function"]["arguments"], r#"{"cmd":"ls"}"#);

    let mut with_one = user_chat(false);
    with_one["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "tool", "tool_call_id": "call_1", "content": "ok"}));
    let second: Value = post(&openai, with_one).await.json().await.unwrap();
    assert_eq!(
        second["choices"][0]["message"]["tool_calls"][0]["id"],
        "call_2"
    );
    assert_eq!(
        llm.remaining(),
        2,
        "the loop is not consumed while it calls tools"
    );

    let third: Value = post(&anthropic, json!({"messages": [tool_result]}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        third["content"][0]["type"], "tool_use",
        "one tool_result is fewer than 2"
    );
    let done: Value = post(&anthropic, json!({"messages": [tool_result, tool_result]}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(done["content"][0]["text"], "all done");
    let next: Value = post(&anthropic, json!({"messages": [tool_result, tool_result]}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(next["content"][0]["text"], "after");
}

#[tokio::test]
async fn exhausted_script_answers_500_and_the_log_records_requests() {
    let llm = FakeLlm::start(vec![Reply::text("only")]).await;
    let url = format!("{}/chat/completions", llm.openai_base());
    let send = || {
        client()
            .post(&url)
            .bearer_auth("sk-fake")
            .json(&user_chat(false))
            .send()
    };
    assert_eq!(send().await.unwrap().status(), 200);
    let response = send().await.unwrap();
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["error"]["message"],
        "fake-llm: script exhausted after 1 requests"
    );

    llm.push(Reply::text("pushed"));
    let body: Value = send().await.unwrap().json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "pushed");

    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(requests[1].header("authorization"), Some("Bearer sk-fake"));
    assert_eq!(requests[2].body, user_chat(false));
    assert!(requests[0].received_at <= requests[2].received_at);
}

#[tokio::test]
async fn wait_for_requests_returns_once_n_arrived_or_on_timeout() {
    let llm = FakeLlm::start(vec![]).await;
    let url = format!("{}/v1/unrouted", llm.base_url());
    let sender = tokio::spawn(async move {
        for _ in 0..3 {
            client().get(&url).send().await.unwrap();
        }
    });
    let started = Instant::now();
    let requests = llm.wait_for_requests(3, Duration::from_secs(20)).await;
    assert!(requests.len() >= 3);
    assert!(started.elapsed() < Duration::from_secs(5));
    sender.await.unwrap();
    assert_eq!(
        llm.wait_for_requests(4, Duration::from_millis(100))
            .await
            .len(),
        3
    );
    assert_eq!(requests[0].body, Value::Null);
}

#[tokio::test]
async fn models_list_and_ollama_show_report_context_lengths() {
    let llm = FakeLlm::start(vec![]).await;
    let models: Value = client()
        .get(format!("{}/models", llm.openai_base()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models, json!({"object": "list", "data": []}));

    let mut qwen = FakeModel::new("qwen3:8b").with_context_length(40960);
    qwen.ollama_arch = Some("qwen3".into());
    let llm = llm.with_models(vec![
        qwen,
        FakeModel::new("vllm-model").with_max_model_len(32768),
    ]);
    let models: Value = client()
        .get(format!("{}/models", llm.openai_base()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["context_length"], 40960);
    assert_eq!(models["data"][1]["id"], "vllm-model");
    assert_eq!(models["data"][1]["max_model_len"], 32768);
    assert!(models["data"][1].get("context_length").is_none());

    let show = format!("{}/api/show", llm.base_url());
    let info: Value = post(&show, json!({"model": "qwen3:8b"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(info["model_info"]["qwen3.context_length"], 40960);
    assert_eq!(post(&show, json!({"model": "nope"})).await.status(), 404);
}

#[test]
fn script_files_parse_from_yaml() {
    let yaml = r#"
models: [{id: m, context_length: 4096}]
replies:
  - {type: text, chunks: [a, b], delay_ms: 5}
  - {type: tool_calls, calls: [{name: ls, argument_chunks: ["{}"]}]}
  - {type: error, status: 429, retry_after: "1", body: "{}"}
  - {type: loop, tool: t, arguments: "{}", until_results: 1, final_text: done}
  - {type: malformed_sse}
"#;
    let script = ScriptFile::parse(yaml).unwrap();
    assert_eq!(script.models[0].context_length, Some(4096));
    assert_eq!(
        script.replies[0],
        Reply::text_chunks(&["a", "b"]).with_delay_ms(5)
    );
    assert_eq!(script.replies[1], Reply::tool_call("ls", "{}"));
    assert_eq!(script.replies[3], Reply::tool_loop("t", "{}", 1, "done"));
    assert_eq!(
        ScriptFile::parse("[{type: stall_before_headers, ms: 3}]")
            .unwrap()
            .replies,
        [Reply::stall_before_headers(3)]
    );
    assert!(
        ScriptFile::parse("[{type: text, chunkz: [a]}]").is_err(),
        "unknown fields are refused"
    );
}
