//! Self-checks of the fake against Discord's documented behaviour, with a bare websocket and
//! HTTP client: the Gateway's hello / identify / ready / heartbeat ACK / resume with replay /
//! 4004, and REST's rate-limit headers, scripted 429s and the count of requests that ignore
//! them; a thread opened on a message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::{DEFAULT_TOKEN, FakeDiscord, Fault, Post, User};

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn open(discord: &FakeDiscord) -> Socket {
    let url = format!("{}/?v=10&encoding=json", discord.gateway_url());
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

/// The next JSON frame, or the close code.
async fn next(socket: &mut Socket) -> Result<Value, u16> {
    let within = tokio::time::timeout(Duration::from_secs(10), socket.next());
    match within.await.expect("a frame in time") {
        Some(Ok(Message::Text(text))) => Ok(serde_json::from_str(text.as_str()).unwrap()),
        Some(Ok(Message::Close(Some(frame)))) => Err(u16::from(frame.code)),
        other => panic!("unexpected {other:?}"),
    }
}

async fn send(socket: &mut Socket, frame: Value) {
    socket.send(Message::text(frame.to_string())).await.unwrap();
}

/// Frames until the dispatch `name`; returns it.
async fn until(socket: &mut Socket, name: &str) -> Value {
    loop {
        let frame = next(socket).await.unwrap();
        if frame["t"] == name {
            return frame;
        }
    }
}

#[tokio::test]
async fn identify_heartbeat_resume_and_a_refused_token() {
    let discord = FakeDiscord::start().await;
    discord.set_heartbeat_interval(5000);
    let guild = discord.guild("Friends");
    let general = discord.channel(&guild, "general");
    let mut socket = open(&discord).await;
    let hello = next(&mut socket).await.unwrap();
    assert_eq!(
        (
            hello["op"].as_u64(),
            hello["d"]["heartbeat_interval"].as_u64()
        ),
        (Some(10), Some(5000))
    );
    send(
        &mut socket,
        json!({"op": 2, "d": {"token": DEFAULT_TOKEN, "intents": 37377}}),
    )
    .await;
    let ready = until(&mut socket, "READY").await;
    assert_eq!(ready["s"], 1);
    let session = ready["d"]["session_id"].as_str().unwrap().to_string();
    assert_eq!(ready["d"]["resume_gateway_url"], discord.gateway_url());
    let create = until(&mut socket, "GUILD_CREATE").await;
    assert_eq!(create["d"]["channels"][0]["id"], general);
    send(&mut socket, json!({"op": 1, "d": 2})).await;
    assert_eq!(next(&mut socket).await.unwrap()["op"], 11, "ACKed");

    let ann = User::new("42", "Ann");
    discord.push(&Post::new(&general, &ann, "first"));
    let first = until(&mut socket, "MESSAGE_CREATE").await;
    assert_eq!(first["d"]["content"], "first");
    let seq = first["s"].as_i64().unwrap();
    drop(socket);
    // Missed while away, replayed on resume, then RESUMED.
    discord.push(&Post::new(&general, &ann, "second"));
    let mut socket = open(&discord).await;
    next(&mut socket).await.unwrap();
    send(
        &mut socket,
        json!({"op": 6, "d": {"token": DEFAULT_TOKEN, "session_id": session, "seq": seq}}),
    )
    .await;
    let replayed = until(&mut socket, "MESSAGE_CREATE").await;
    assert_eq!(
        (replayed["d"]["content"].as_str(), replayed["s"].as_i64()),
        (Some("second"), Some(seq + 1))
    );
    until(&mut socket, "RESUMED").await;
    assert_eq!(discord.gateway().resumes, vec![(session.clone(), seq)]);

    // A resume of a session that is not the current one is refused.
    let mut stale = open(&discord).await;
    next(&mut stale).await.unwrap();
    send(
        &mut stale,
        json!({"op": 6, "d": {"token": DEFAULT_TOKEN, "session_id": "nope", "seq": 1}}),
    )
    .await;
    let refused = next(&mut stale).await.unwrap();
    assert_eq!(
        (refused["op"].as_u64(), refused["d"].as_bool()),
        (Some(9), Some(false))
    );

    let mut bad = open(&discord).await;
    next(&mut bad).await.unwrap();
    send(
        &mut bad,
        json!({"op": 2, "d": {"token": "wrong", "intents": 1}}),
    )
    .await;
    assert_eq!(next(&mut bad).await, Err(4004));
}

#[tokio::test]
async fn rest_answers_with_rate_limit_headers_and_a_scripted_429_blocks_its_bucket() {
    let discord = FakeDiscord::start().await;
    let ann = User::new("42", "Ann");
    let dm = discord.dm(&ann);
    let client = hermesd::llm::HttpClient::new(Duration::from_secs(5)).unwrap();
    let url = format!("{}/channels/{dm}/messages", discord.api_base());
    let post = |body: Value| {
        client
            .post(url.clone())
            .header("authorization", &format!("Bot {DEFAULT_TOKEN}"))
            .json(&body)
            .send()
    };
    let sent = post(json!({"content": "hello"})).await.unwrap();
    assert_eq!(sent.status().as_u16(), 200);
    let headers = sent.headers().clone();
    for name in [
        "x-ratelimit-bucket",
        "x-ratelimit-remaining",
        "x-ratelimit-reset-after",
    ] {
        assert!(headers.contains_key(name), "{name}: {headers:?}");
    }
    let too_long = post(json!({"content": "x".repeat(2001)})).await.unwrap();
    assert_eq!(too_long.status().as_u16(), 400);
    let empty = post(json!({"content": ""})).await.unwrap();
    assert!(empty.text().await.unwrap().contains("50006"));

    discord.fail_next(
        "POST",
        "/messages",
        Fault::RateLimited {
            retry_after: 30.0,
            global: false,
        },
    );
    let limited = post(json!({"content": "a"})).await.unwrap();
    assert_eq!(limited.status().as_u16(), 429);
    let body: Value = serde_json::from_str(&limited.text().await.unwrap()).unwrap();
    assert_eq!(body["retry_after"], 30.0);
    assert_eq!(discord.violations(), 0);
    let again = post(json!({"content": "b"})).await.unwrap();
    assert_eq!(again.status().as_u16(), 429, "still blocked");
    assert_eq!(discord.violations(), 1);
    let unauthorized = client
        .get(format!("{}/users/@me", discord.api_base()))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthorized.status().as_u16(), 401);
    assert_eq!(discord.messages(&dm).len(), 1);
}

#[tokio::test]
async fn a_thread_opened_on_a_message_takes_its_id_and_is_announced() {
    let discord = FakeDiscord::start().await;
    let guild = discord.guild("Friends");
    let general = discord.channel(&guild, "general");
    let mut socket = open(&discord).await;
    next(&mut socket).await.unwrap();
    send(
        &mut socket,
        json!({"op": 2, "d": {"token": DEFAULT_TOKEN, "intents": 37377}}),
    )
    .await;
    until(&mut socket, "READY").await;
    let ann = User::new("42", "Ann");
    let message = discord.push(&Post::new(&general, &ann, "plan the trip"));
    let client = hermesd::llm::HttpClient::new(Duration::from_secs(5)).unwrap();
    let open_on = |channel: &str, id: &str, body: Value| {
        client
            .post(format!(
                "{}/channels/{channel}/messages/{id}/threads",
                discord.api_base()
            ))
            .header("authorization", &format!("Bot {DEFAULT_TOKEN}"))
            .json(&body)
            .send()
    };
    let empty = open_on(&general, &message, json!({"name": ""}))
        .await
        .unwrap();
    assert_eq!(empty.status().as_u16(), 400, "a name is needed");
    let made = open_on(
        &general,
        &message,
        json!({"name": "plan the trip", "auto_archive_duration": 1440}),
    )
    .await
    .unwrap();
    assert_eq!(made.status().as_u16(), 200);
    let thread: Value = serde_json::from_str(&made.text().await.unwrap()).unwrap();
    assert_eq!(
        (&thread["id"], &thread["type"], &thread["parent_id"]),
        (&json!(message), &json!(11), &json!(general))
    );
    let created = until(&mut socket, "THREAD_CREATE").await;
    assert_eq!(created["d"]["id"], json!(message));
    let again = open_on(&general, &message, json!({"name": "again"}))
        .await
        .unwrap();
    assert!(again.text().await.unwrap().contains("160004"));
    let in_thread = open_on(&message, &message, json!({"name": "x"}))
        .await
        .unwrap();
    assert_eq!(in_thread.status().as_u16(), 400, "not in a thread");
    let opened = discord.opened_threads();
    assert_eq!(opened.len(), 1);
    assert_eq!(
        (opened[0].name.as_str(), opened[0].auto_archive_duration),
        ("plan the trip", Some(1440))
    );
    assert_eq!(
        discord.view(|v| v.thread_on(&message)),
        Some(opened[0].clone())
    );
}
