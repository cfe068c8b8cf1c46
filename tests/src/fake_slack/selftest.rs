//! The fake's own checks: the Web API's envelope and errors, a Socket Mode connection that is
//! greeted, gets envelopes, acks them, and a second connection that gets the unacked ones again
//! with `retry_attempt` counted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use axum::http::{Request, header};
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, Full};
use hyper_util::{client::legacy::Client, rt::TokioExecutor};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message as Frame;

use super::{FakeSlack, Fault, UserMessage};

async fn api(slack: &FakeSlack, method: &str, token: &str, body: Value) -> (u16, Value) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let request = Request::post(format!("{}/{method}", slack.api_base()))
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = client.request(request).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

async fn next_json<S>(ws: &mut S) -> Value
where
    S: futures_util::Stream<Item = Result<Frame, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Frame::Text(text) = frame {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

#[tokio::test]
async fn the_web_api_answers_with_slacks_envelope() {
    let slack = FakeSlack::start().await;
    let team = slack.first_team();
    let (_, me) = api(&slack, "auth.test", &team.bot_token, json!({})).await;
    assert_eq!(
        (me["ok"].clone(), me["user_id"].clone()),
        (json!(true), json!(team.bot_user_id))
    );
    let (_, bad) = api(&slack, "auth.test", "xoxb-nope", json!({})).await;
    assert_eq!(bad["error"], "invalid_auth");
    let (_, posted) = api(
        &slack,
        "chat.postMessage",
        &team.bot_token,
        json!({"channel": "C1", "text": "hi"}),
    )
    .await;
    let ts = posted["ts"].as_str().unwrap().to_owned();
    let (_, updated) = api(
        &slack,
        "chat.update",
        &team.bot_token,
        json!({"channel": "C1", "ts": ts, "text": "hi again"}),
    )
    .await;
    assert_eq!(updated["ok"], true, "{updated}");
    assert_eq!(slack.bot_messages("C1")[0].updates, 1);
    slack.fail_next("chat.update", Fault::RateLimited(3));
    let (status, limited) = api(
        &slack,
        "chat.update",
        &team.bot_token,
        json!({"channel": "C1", "ts": ts, "text": "x"}),
    )
    .await;
    assert_eq!(
        (status, limited["error"].clone()),
        (429, json!("ratelimited"))
    );
}

#[tokio::test]
async fn socket_mode_delivers_and_redelivers_what_was_not_acked() {
    let slack = FakeSlack::start().await;
    let (_, opened) = api(
        &slack,
        "apps.connections.open",
        &slack.app_token(),
        json!({}),
    )
    .await;
    let url = opened["url"].as_str().unwrap().to_owned();
    let (mut first, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    assert_eq!(next_json(&mut first).await["type"], "hello");
    // A ticket is good once.
    assert!(tokio_tungstenite::connect_async(&url).await.is_err() || slack.connections() == 1);
    let pushed = slack.push(&UserMessage::new("D1", "U1", "one"));
    let envelope = next_json(&mut first).await;
    assert_eq!(envelope["type"], "events_api");
    assert_eq!(envelope["payload"]["event"]["ts"], json!(pushed.ts));
    assert_eq!(envelope["retry_attempt"], 0);
    let id = envelope["envelope_id"].as_str().unwrap().to_owned();
    slack.push(&UserMessage::new("D1", "U1", "two"));
    let unacked = next_json(&mut first).await;
    first
        .send(Frame::text(json!({"envelope_id": id}).to_string()))
        .await
        .unwrap();
    slack.wait_acked(&id, Duration::from_secs(5)).await;

    let (_, opened) = api(
        &slack,
        "apps.connections.open",
        &slack.app_token(),
        json!({}),
    )
    .await;
    let (mut second, _) = tokio_tungstenite::connect_async(opened["url"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(next_json(&mut second).await["type"], "hello");
    let again = next_json(&mut second).await;
    assert_eq!(again["envelope_id"], unacked["envelope_id"]);
    assert_eq!(again["retry_attempt"], 1);
    slack.disconnect("refresh_requested");
    assert_eq!(next_json(&mut second).await["type"], "disconnect");
}
