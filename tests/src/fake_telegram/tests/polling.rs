//! `getUpdates`: long polling woken by a push, offsets confirming and forgetting, a newer poll
//! terminating the waiting one, abandoned polls leaving, webhooks and conflicts.

use serde_json::json;

use super::{Bot, WAIT, alice, joined};
use crate::fake_telegram::polling::CONFLICT_OTHER;

#[tokio::test]
async fn a_long_poll_answers_when_an_update_arrives() {
    let bot = Bot::start().await;
    let started = std::time::Instant::now();
    let poll = bot.spawn_call("getUpdates", json!({"timeout": 50}));
    bot.tg.wait_for(|v| v.polling(), WAIT).await;
    let (chat, alice) = alice();
    let update_id = bot.tg.push_text(&chat, &alice, "/start");

    let updates = joined(poll).await.result();
    assert!(
        started.elapsed() < WAIT,
        "answered on the push, not at the timeout"
    );
    assert_eq!(updates[0]["update_id"], update_id);
    assert_eq!(update_id, 1000);
    let message = &updates[0]["message"];
    assert_eq!(message["text"], "/start");
    assert_eq!(message["chat"]["type"], "private");
    assert_eq!(message["chat"]["first_name"], "Alice");
    assert_eq!(message["from"]["username"], "alice");
    assert_eq!(
        message["entities"],
        json!([{"offset": 0, "length": 6, "type": "bot_command"}])
    );
    assert!(!bot.tg.polling());
}

#[tokio::test]
async fn a_poll_without_updates_answers_empty_at_its_timeout() {
    let bot = Bot::start().await;
    let updates = bot.call("getUpdates", json!({"timeout": 1})).await.result();
    assert_eq!(updates, json!([]));
    let updates = bot.call("getUpdates", json!({})).await.result();
    assert_eq!(updates, json!([]));
}

#[tokio::test]
async fn an_offset_confirms_updates_and_they_are_gone_for_good() {
    let bot = Bot::start().await;
    let (chat, alice) = alice();
    let first = bot.tg.push_text(&chat, &alice, "one");
    let second = bot.tg.push_text(&chat, &alice, "two");
    assert_eq!(second, first + 1);

    let updates = bot.call("getUpdates", json!({"offset": 0})).await.result();
    assert_eq!(updates.as_array().unwrap().len(), 2);
    assert_eq!(bot.tg.confirmed_offset(), 0, "offset 0 confirms nothing");

    let updates = bot
        .call("getUpdates", json!({"offset": second}))
        .await
        .result();
    assert_eq!(updates.as_array().unwrap().len(), 1);
    assert_eq!(updates[0]["update_id"], second);
    assert_eq!(bot.tg.confirmed_offset(), second);
    assert_eq!(bot.tg.pending_updates().len(), 1);

    bot.call("getUpdates", json!({"offset": second + 1}))
        .await
        .result();
    bot.tg.wait_confirmed(second + 1, WAIT).await;
    assert!(bot.tg.pending_updates().is_empty());
    let updates = bot.call("getUpdates", json!({"offset": 0})).await.result();
    assert_eq!(updates, json!([]), "confirmed updates never come back");

    // A negative offset keeps only the last updates; limit caps a batch.
    for text in ["a", "b", "c"] {
        bot.tg.push_text(&chat, &alice, text);
    }
    let updates = bot.call("getUpdates", json!({"limit": 1})).await.result();
    assert_eq!(updates[0]["message"]["text"], "a");
    let updates = bot.call("getUpdates", json!({"offset": -1})).await.result();
    assert_eq!(updates.as_array().unwrap().len(), 1);
    assert_eq!(updates[0]["message"]["text"], "c");
}

#[tokio::test]
async fn allowed_updates_filters_and_is_remembered() {
    let bot = Bot::start().await;
    let (chat, alice) = alice();
    bot.tg.push_text(&chat, &alice, "hello");
    bot.tg.push_callback(&chat, &alice, 1, "press");
    let params = json!({"allowed_updates": ["callback_query"]});
    let updates = bot.call("getUpdates", params).await.result();
    assert_eq!(updates.as_array().unwrap().len(), 1);
    assert_eq!(updates[0]["callback_query"]["data"], "press");
    bot.tg.push_text(&chat, &alice, "ignored");
    let updates = bot.call("getUpdates", json!({})).await.result();
    assert_eq!(
        updates.as_array().unwrap().len(),
        1,
        "still only callback queries"
    );
}

#[tokio::test]
async fn a_newer_waiting_poll_terminates_the_older_one() {
    let bot = Bot::start().await;
    let older = bot.spawn_call("getUpdates", json!({"timeout": 50}));
    bot.tg.wait_for(|v| v.polling(), WAIT).await;
    let newer = bot.spawn_call("getUpdates", json!({"timeout": 50}));

    let older = joined(older).await;
    assert_eq!(older.error(409), CONFLICT_OTHER);
    bot.tg
        .wait_for(|v| v.polling() && v.polls_in_flight() == 1, WAIT)
        .await;
    let (chat, alice) = alice();
    bot.tg.push_text(&chat, &alice, "hi");
    let updates = joined(newer).await.result();
    assert_eq!(updates[0]["message"]["text"], "hi");
    let statuses: Vec<_> = bot.tg.calls().iter().map(|c| c.status).collect();
    assert_eq!(statuses, [Some(409), Some(200)]);
}

#[tokio::test]
async fn an_abandoned_hung_poll_leaves() {
    let bot = Bot::start().await;
    bot.tg.hang_polls(true);
    let deaf = bot.spawn_call("getUpdates", json!({"timeout": 50}));
    bot.tg.wait_for(|v| v.polls_in_flight() == 1, WAIT).await;
    deaf.abort();
    bot.tg.wait_for(|v| v.polls_in_flight() == 0, WAIT).await;
    assert_eq!(bot.tg.calls()[0].status, None, "never answered");

    bot.tg.hang_polls(false);
    let (chat, alice) = alice();
    bot.tg.push_text(&chat, &alice, "after");
    let updates = bot
        .call("getUpdates", json!({"timeout": 50}))
        .await
        .result();
    assert_eq!(updates[0]["message"]["text"], "after");
}

#[tokio::test]
async fn an_abandoned_waiting_poll_stops_waiting() {
    let bot = Bot::start().await;
    let poll = bot.spawn_call("getUpdates", json!({"timeout": 50}));
    bot.tg.wait_for(|v| v.polling(), WAIT).await;
    poll.abort();
    bot.tg
        .wait_for(|v| !v.polling() && v.polls_in_flight() == 0, WAIT)
        .await;
}

#[tokio::test]
async fn a_webhook_and_polling_exclude_each_other() {
    let bot = Bot::start().await;
    let poll = bot.spawn_call("getUpdates", json!({"timeout": 50}));
    bot.tg.wait_for(|v| v.polling(), WAIT).await;
    let params = json!({"url": "http://127.0.0.1:9/hook", "secret_token": "s3cret_-X"});
    let set = bot.call("setWebhook", params.clone()).await;
    assert_eq!(set.json()["description"], "Webhook was set");
    assert_eq!(
        joined(poll).await.error(409),
        "Conflict: terminated by setWebhook request"
    );
    let again = bot.call("setWebhook", params).await;
    assert_eq!(again.json()["description"], "Webhook is already set");
    assert_eq!(
        bot.tg.webhook(),
        Some((
            "http://127.0.0.1:9/hook".to_owned(),
            Some("s3cret_-X".to_owned())
        ))
    );
    let refused = bot.call("getUpdates", json!({})).await;
    assert_eq!(
        refused.error(409),
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to \
         delete the webhook first"
    );
    let info = bot.call("getWebhookInfo", json!({})).await.result();
    assert_eq!(info["url"], "http://127.0.0.1:9/hook");
    assert_eq!(info["pending_update_count"], 0);

    let deleted = bot.call("deleteWebhook", json!({})).await;
    assert_eq!(deleted.json()["description"], "Webhook was deleted");
    assert_eq!(bot.tg.webhook(), None);
    bot.call("getUpdates", json!({})).await.result();
    let bad = bot.call(
        "setWebhook",
        json!({"url": "http://x", "secret_token": "no spaces"}),
    );
    assert_eq!(
        bad.await.error(400),
        "Bad Request: secret token contains unallowed characters"
    );
}

#[tokio::test]
async fn another_instance_polling_is_a_conflict() {
    let bot = Bot::start().await;
    bot.tg.set_conflict(true);
    let refused = bot.call("getUpdates", json!({"timeout": 50})).await;
    assert_eq!(refused.error(409), CONFLICT_OTHER);
    bot.tg.set_conflict(false);
    bot.call("getUpdates", json!({})).await.result();
    bot.tg.wait_polls(2, WAIT).await;
}

#[tokio::test]
async fn a_webhook_delivery_carries_the_secret() {
    use axum::{Router, http::HeaderMap, routing::post};

    let (sent, mut received) = tokio::sync::mpsc::unbounded_channel();
    let receiver = Router::new().route(
        "/hook",
        post(move |headers: HeaderMap, body: String| {
            let sent = sent.clone();
            async move {
                let secret = headers
                    .get("x-telegram-bot-api-secret-token")
                    .map(|v| v.to_str().unwrap().to_owned());
                sent.send((secret, body)).unwrap();
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, receiver).await });

    let bot = Bot::start().await;
    let params = json!({"url": url, "secret_token": "abc"});
    bot.call("setWebhook", params).await.result();
    let update = json!({"message": {"message_id": 1, "text": "hook"}});
    let status = bot.tg.deliver_webhook(update, Some("abc")).await;
    assert_eq!(status, 200);
    let (secret, body) = received.recv().await.unwrap();
    assert_eq!(secret.as_deref(), Some("abc"));
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["message"]["text"], "hook");
    assert!(body["update_id"].is_i64());
}
