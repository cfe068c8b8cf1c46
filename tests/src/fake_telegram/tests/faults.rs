//! Faults and refusals: 429 with `retry_after`, server errors, bad tokens, unknown methods,
//! hanging, and delivering before hanging.

use serde_json::json;

use super::{Bot, WAIT, alice};
use crate::fake_telegram::Fault;

#[tokio::test]
async fn too_many_requests_carries_retry_after() {
    let bot = Bot::start().await;
    bot.tg
        .fail_next("sendMessage", Fault::TooManyRequests { retry_after: 7 });
    let (chat, alice) = alice();
    bot.tg.push_text(&chat, &alice, "hi");
    let params = json!({"chat_id": chat.id, "text": "x"});
    let limited = bot.call("sendMessage", params.clone()).await;
    assert_eq!(limited.error(429), "Too Many Requests: retry after 7");
    assert_eq!(limited.json()["parameters"], json!({"retry_after": 7}));
    assert_eq!(limited.headers["retry-after"], "7");
    assert!(bot.tg.messages(chat.id).is_empty());
    bot.call("sendMessage", params).await.result();
}

#[tokio::test]
async fn server_errors_and_refusals() {
    let bot = Bot::start().await;
    bot.tg.fail_next("getMe", Fault::Server(502));
    bot.tg.fail_next("getMe", Fault::Server(500));
    bot.tg.fail_next("getMe", Fault::Unauthorized);
    bot.tg.fail_next("getMe", Fault::Html(504));
    bot.tg.fail_next(
        "getMe",
        Fault::Forbidden("bot was blocked by the user".into()),
    );
    assert_eq!(bot.call("getMe", json!({})).await.error(502), "Bad Gateway");
    assert_eq!(
        bot.call("getMe", json!({})).await.error(500),
        "Internal Server Error"
    );
    assert_eq!(
        bot.call("getMe", json!({})).await.error(401),
        "Unauthorized"
    );
    let page = bot.call("getMe", json!({})).await;
    assert_eq!(page.status, 504);
    assert_eq!(page.headers["content-type"], "text/html");
    assert_eq!(
        bot.call("getMe", json!({})).await.error(403),
        "Forbidden: bot was blocked by the user"
    );
    bot.call("getMe", json!({})).await.result();

    let wrong = bot.call_as("1:wrong", "getMe", json!({})).await;
    assert_eq!(wrong.error(401), "Unauthorized");
    let unknown = bot.call("sendTelepathy", json!({})).await;
    assert_eq!(unknown.error(404), "Not Found");
    bot.tg.add_token("42:second");
    bot.call_as("42:second", "getMe", json!({})).await.result();
    bot.tg.remove_token("42:second");
    assert_eq!(
        bot.call_as("42:second", "getMe", json!({}))
            .await
            .error(401),
        "Unauthorized"
    );
}

#[tokio::test]
async fn a_hung_call_never_answers() {
    let bot = Bot::start().await;
    bot.tg.fail_next("getMe", Fault::Hang);
    let hung = bot.spawn_call("getMe", json!({}));
    let call = bot.tg.wait_call("getMe", WAIT).await;
    assert_eq!(call.status, None);
    assert!(!hung.is_finished());
    hung.abort();
    bot.call("getMe", json!({})).await.result();
}

#[tokio::test]
async fn deliver_then_hang_sends_the_message_without_answering() {
    let bot = Bot::start().await;
    let (chat, alice) = alice();
    bot.tg.push_text(&chat, &alice, "hi");
    bot.tg.fail_next("sendMessage", Fault::DeliverThenHang);
    let params = json!({"chat_id": chat.id, "text": "delivered"});
    let hung = bot.spawn_call("sendMessage", params);
    let message = bot
        .tg
        .wait_message_text(chat.id, |text| text == "delivered", WAIT)
        .await;
    assert_eq!(message.message_id, 2);
    assert_eq!(bot.tg.calls_of("sendMessage")[0].status, None);
    hung.abort();
}

#[tokio::test]
#[should_panic(expected = "calls so far")]
async fn a_wait_in_vain_lists_the_calls() {
    let bot = Bot::start().await;
    bot.call("getMe", json!({})).await.result();
    bot.tg
        .wait_call("sendMessage", std::time::Duration::from_millis(50))
        .await;
}
