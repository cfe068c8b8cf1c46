//! The message methods through HTTP: shapes, ids, limits, HTML, edits, threads, replies, and the
//! smaller methods (commands, chat actions, callback answers, deletion).

use serde_json::json;

use super::{Bot, alice};
use crate::fake_telegram::{Chat, User};

const NOT_MODIFIED: &str = "Bad Request: message is not modified: specified new message content \
     and reply markup are exactly the same as a current content and reply markup of the message";

/// A bot whose chat with Alice exists (she wrote first).
async fn chatting() -> (Bot, i64) {
    let bot = Bot::start().await;
    let (chat, alice) = alice();
    bot.tg.push_text(&chat, &alice, "hi");
    (bot, chat.id)
}

#[tokio::test]
async fn get_me_is_the_bot() {
    let bot = Bot::start().await;
    let me = bot.call("getMe", json!({})).await.result();
    assert_eq!(me["is_bot"], true);
    assert_eq!(me["username"], "fake_bot");
    assert_eq!(me["id"], 123_456_789);
    // Method names are case-insensitive, and GET with a query works too.
    let url = format!("{}{}/GETME?x=1", bot.tg.base_url(), bot.tg.token());
    assert_eq!(bot.get(&url).await.result(), me);
}

#[tokio::test]
async fn send_message_answers_the_message() {
    let (bot, chat_id) = chatting().await;
    let keyboard = json!({"inline_keyboard": [[{"text": "Yes", "callback_data": "y"}]]});
    let params = json!({"chat_id": chat_id, "text": "Hello", "reply_markup": keyboard.to_string()});
    let message = bot.call("sendMessage", params).await.result();
    assert_eq!(message["message_id"], 2, "after Alice's message 1");
    assert!(message["date"].is_i64());
    assert_eq!(
        message["chat"],
        json!({"id": 1001, "type": "private", "first_name": "Alice", "username": "alice"})
    );
    assert_eq!(message["from"]["is_bot"], true);
    assert_eq!(message["text"], "Hello");
    assert_eq!(message["reply_markup"], keyboard);

    let next = bot
        .call(
            "sendMessage",
            json!({"chat_id": chat_id.to_string(), "text": "Again"}),
        )
        .await
        .result();
    assert_eq!(next["message_id"], 3);
    assert!(next.get("reply_markup").is_none());
    let sent = bot.tg.messages(chat_id);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].reply_markup, Some(keyboard));
    assert_eq!(bot.tg.calls_of("sendmessage").len(), 2);
}

#[tokio::test]
async fn form_bodies_and_usernames_work_too() {
    let (bot, chat_id) = chatting().await;
    let markup = r#"{"inline_keyboard":[[{"text":"Go","url":"https://example.org"}]]}"#;
    let form = format!(
        "chat_id=%40alice&text=a+%26+b&reply_markup={}",
        markup
            .replace('{', "%7B")
            .replace('}', "%7D")
            .replace('"', "%22")
    );
    let message = bot.call_form("sendMessage", &form).await.result();
    assert_eq!(message["chat"]["id"], chat_id, "@alice names her chat");
    assert_eq!(message["text"], "a & b");
    assert_eq!(
        message["reply_markup"]["inline_keyboard"][0][0]["text"],
        "Go"
    );
    assert_eq!(bot.tg.calls_of("sendMessage")[0].param("chat_id"), "@alice");
}

#[tokio::test]
async fn send_message_checks_chat_and_text() {
    let (bot, chat_id) = chatting().await;
    let send = |params| bot.call("sendMessage", params);
    let unknown = send(json!({"chat_id": 99, "text": "x"})).await;
    assert_eq!(unknown.error(400), "Bad Request: chat not found");
    let no_chat = send(json!({"text": "x"})).await;
    assert_eq!(no_chat.error(400), "Bad Request: chat_id is empty");
    let empty = send(json!({"chat_id": chat_id, "text": ""})).await;
    assert_eq!(empty.error(400), "Bad Request: message text is empty");
    let blank = send(json!({"chat_id": chat_id, "text": " \n "})).await;
    assert_eq!(blank.error(400), "Bad Request: message must be non-empty");

    let longest = "a".repeat(4096);
    send(json!({"chat_id": chat_id, "text": longest}))
        .await
        .result();
    let too_long = send(json!({"chat_id": chat_id, "text": "a".repeat(4097)})).await;
    assert_eq!(too_long.error(400), "Bad Request: message is too long");
    // The limit counts UTF-16 code units: an emoji is two.
    send(json!({"chat_id": chat_id, "text": "😀".repeat(2048)}))
        .await
        .result();
    let emoji = send(json!({"chat_id": chat_id, "text": "😀".repeat(2049)})).await;
    assert_eq!(emoji.error(400), "Bad Request: message is too long");
    // Tags do not count.
    let tagged = format!("<b>{}</b>", "a".repeat(4096));
    send(json!({"chat_id": chat_id, "text": tagged, "parse_mode": "HTML"}))
        .await
        .result();
    let mode = send(json!({"chat_id": chat_id, "text": "x", "parse_mode": "RTF"})).await;
    assert_eq!(mode.error(400), "Bad Request: unsupported parse_mode");
}

#[tokio::test]
async fn html_is_checked_and_rendered() {
    let (bot, chat_id) = chatting().await;
    let html = "<b>x</b> &amp; <a href=\"https://x\">y</a> <pre><code class=\"language-rust\">fn</code></pre>";
    let params = json!({"chat_id": chat_id, "text": html, "parse_mode": "HTML"});
    let message = bot.call("sendMessage", params).await.result();
    assert_eq!(message["text"], "x & y fn");
    assert_eq!(
        message["entities"],
        json!([
            {"offset": 0, "length": 1, "type": "bold"},
            {"offset": 4, "length": 1, "type": "text_link", "url": "https://x/"},
            {"offset": 6, "length": 2, "type": "pre", "language": "rust"},
        ])
    );
    let stored = &bot.tg.messages(chat_id)[0];
    assert_eq!(stored.text, "x & y fn");
    assert_eq!(stored.raw, html);
    assert_eq!(stored.parse_mode.as_deref(), Some("HTML"));

    let unclosed = json!({"chat_id": chat_id, "text": "<b>x", "parse_mode": "HTML"});
    assert_eq!(
        bot.call("sendMessage", unclosed).await.error(400),
        "Bad Request: can't parse entities: Can't find end tag corresponding to start tag b"
    );
    let bare = json!({"chat_id": chat_id, "text": "a < b", "parse_mode": "html"});
    assert_eq!(
        bot.call("sendMessage", bare).await.error(400),
        "Bad Request: can't parse entities: Unsupported start tag \"\" at byte offset 2"
    );
    assert_eq!(
        bot.tg.messages(chat_id).len(),
        1,
        "refused messages are not sent"
    );
}

#[tokio::test]
async fn edits_replace_the_text_and_refuse_no_change() {
    let (bot, chat_id) = chatting().await;
    let keyboard = json!({"inline_keyboard": [[{"text": "Stop", "callback_data": "stop"}]]});
    let params = json!({"chat_id": chat_id, "text": "Working", "reply_markup": keyboard});
    let id = bot.call("sendMessage", params).await.result()["message_id"].clone();

    let same =
        json!({"chat_id": chat_id, "message_id": id, "text": "Working", "reply_markup": keyboard});
    assert_eq!(
        bot.call("editMessageText", same).await.error(400),
        NOT_MODIFIED
    );

    let edit =
        json!({"chat_id": chat_id, "message_id": id, "text": "<i>Done</i>", "parse_mode": "HTML"});
    let edited = bot.call("editMessageText", edit.clone()).await.result();
    assert_eq!(edited["text"], "Done");
    assert!(edited["edit_date"].is_i64());
    assert!(
        edited.get("reply_markup").is_none(),
        "an edit without markup drops the keyboard"
    );
    assert_eq!(
        bot.call("editMessageText", edit).await.error(400),
        NOT_MODIFIED
    );
    let stored = &bot.tg.messages(chat_id)[0];
    assert_eq!((stored.text.as_str(), stored.edits), ("Done", 1));
    assert_eq!(stored.reply_markup, None);

    let markup = json!({"chat_id": chat_id, "message_id": id, "reply_markup": keyboard});
    let with_markup = bot
        .call("editMessageReplyMarkup", markup.clone())
        .await
        .result();
    assert_eq!(with_markup["reply_markup"], keyboard);
    assert_eq!(
        bot.call("editMessageReplyMarkup", markup).await.error(400),
        NOT_MODIFIED
    );

    let missing = json!({"chat_id": chat_id, "message_id": 999, "text": "x"});
    assert_eq!(
        bot.call("editMessageText", missing).await.error(400),
        "Bad Request: message to edit not found"
    );
    let users = json!({"chat_id": chat_id, "message_id": 1, "text": "x"});
    assert_eq!(
        bot.call("editMessageText", users).await.error(400),
        "Bad Request: message can't be edited"
    );

    let delete = json!({"chat_id": chat_id, "message_id": id});
    assert_eq!(
        bot.call("deleteMessage", delete.clone()).await.result(),
        true
    );
    assert!(bot.tg.messages(chat_id)[0].deleted);
    assert_eq!(
        bot.call("deleteMessage", delete).await.error(400),
        "Bad Request: message to delete not found"
    );
    let gone = json!({"chat_id": chat_id, "message_id": id, "text": "late"});
    assert_eq!(
        bot.call("editMessageText", gone).await.error(400),
        "Bad Request: message to edit not found"
    );
}

#[tokio::test]
async fn inline_keyboards_are_checked() {
    let (bot, chat_id) = chatting().await;
    let send = |markup: serde_json::Value| {
        bot.call(
            "sendMessage",
            json!({"chat_id": chat_id, "text": "x", "reply_markup": markup}),
        )
    };
    let plain = send(json!({"inline_keyboard": [[{"text": "A"}]]})).await;
    assert_eq!(
        plain.error(400),
        "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the \
         inline keyboard"
    );
    let long = send(json!({"inline_keyboard": [[{"text": "A", "callback_data": "x".repeat(65)}]]}));
    assert_eq!(long.await.error(400), "Bad Request: BUTTON_DATA_INVALID");
    let text = json!({"chat_id": chat_id, "text": "x", "reply_markup": "{not json"});
    assert_eq!(
        bot.call("sendMessage", text).await.error(400),
        "Bad Request: can't parse reply keyboard markup JSON object"
    );
}

#[tokio::test]
async fn topics_and_replies() {
    let bot = Bot::start().await;
    let forum = Chat::forum(-100_777, "Team");
    let bob = User::new(2002, "Bob");
    let pushed = bot
        .tg
        .push(crate::fake_telegram::Incoming::text(&forum, &bob, "in topic").in_thread(5));
    let update = &bot.tg.pending_updates()[0];
    assert_eq!(update["message"]["message_thread_id"], 5);
    assert_eq!(update["message"]["is_topic_message"], true);
    assert_eq!(update["message"]["chat"]["is_forum"], true);
    assert!(update["message"]["reply_to_message"]["forum_topic_created"].is_object());

    let params = json!({
        "chat_id": forum.id,
        "text": "answer",
        "message_thread_id": 5,
        "reply_parameters": {"message_id": pushed.message_id},
    });
    let message = bot.call("sendMessage", params).await.result();
    assert_eq!(message["message_thread_id"], 5);
    assert_eq!(message["is_topic_message"], true);
    assert_eq!(message["reply_to_message"]["text"], "in topic");
    let stored = &bot.tg.messages(forum.id)[0];
    assert_eq!(stored.thread_id, Some(5));
    assert_eq!(stored.reply_to_message_id, Some(pushed.message_id));

    let params = json!({"chat_id": forum.id, "text": "x", "reply_to_message_id": 999});
    assert_eq!(
        bot.call("sendMessage", params).await.error(400),
        "Bad Request: message to be replied not found"
    );
    let params = json!({"chat_id": forum.id, "text": "x", "reply_parameters": {"message_id": 999, "allow_sending_without_reply": true}});
    bot.call("sendMessage", params).await.result();
}

#[tokio::test]
async fn callbacks_commands_actions() {
    let (bot, chat_id) = chatting().await;
    let (chat, alice) = alice();
    let (_, query) = bot.tg.push_callback(&chat, &alice, 1, "yes");
    let answer = json!({"callback_query_id": query, "text": "Noted"});
    assert_eq!(
        bot.call("answerCallbackQuery", answer.clone())
            .await
            .result(),
        true
    );
    assert_eq!(
        bot.call("answerCallbackQuery", answer).await.error(400),
        "Bad Request: query is too old and response timeout expired or query ID is invalid"
    );
    assert_eq!(bot.tg.callback_answers()[0].text.as_deref(), Some("Noted"));

    let commands = json!({"commands": [{"command": "new", "description": "Start over"}]});
    assert_eq!(bot.call("setMyCommands", commands).await.result(), true);
    assert_eq!(
        bot.tg.commands(),
        [("new".to_owned(), "Start over".to_owned())]
    );
    let listed = bot.call("getMyCommands", json!({})).await.result();
    assert_eq!(
        listed,
        json!([{"command": "new", "description": "Start over"}])
    );
    let bad = json!({"commands": [{"command": "New-One", "description": "x"}]});
    assert_eq!(
        bot.call("setMyCommands", bad).await.error(400),
        "Bad Request: BOT_COMMAND_INVALID"
    );

    let typing = json!({"chat_id": chat_id, "action": "typing"});
    assert_eq!(bot.call("sendChatAction", typing).await.result(), true);
    assert_eq!(bot.tg.chat_actions(chat_id)[0].action, "typing");
    let wrong = json!({"chat_id": chat_id, "action": "dancing"});
    assert_eq!(
        bot.call("sendChatAction", wrong).await.error(400),
        "Bad Request: wrong parameter action in request"
    );
}
