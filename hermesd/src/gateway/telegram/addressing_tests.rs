//! Tests of `addressing.rs`: what a message names, and the handle taken out.

use serde_json::json;

use super::*;

fn me() -> Me {
    Me::new(999, Some("Hermes_Bot"))
}

fn message(text: &str, entities: serde_json::Value, reply_from: Option<u64>) -> Message {
    let mut raw = json!({"message_id": 1, "date": 1,
        "chat": {"id": -5, "type": "group", "title": "g"},
        "from": {"id": 42, "is_bot": false, "first_name": "Ann"},
        "text": text, "entities": entities});
    if let Some(id) = reply_from {
        raw["reply_to_message"] = json!({"message_id": 0, "date": 1,
            "chat": {"id": -5, "type": "group", "title": "g"},
            "from": {"id": id, "is_bot": true, "first_name": "B"}, "text": "earlier"});
    }
    serde_json::from_value(raw).unwrap()
}

fn entity(kind: &str, offset: u16, length: u16) -> serde_json::Value {
    json!({"type": kind, "offset": offset, "length": length})
}

#[test]
fn mentions_commands_and_replies_name_this_bot() {
    let mention = message("hi @hermes_bot", json!([entity("mention", 3, 11)]), None);
    assert!(addressing(&mention, &me()).mentions_me);
    let command = message(
        "/new@Hermes_Bot",
        json!([entity("bot_command", 0, 15)]),
        None,
    );
    assert!(addressing(&command, &me()).mentions_me);
    let text_mention = message(
        "Hermes, look",
        json!([{"type": "text_mention", "offset": 0, "length": 6,
            "user": {"id": 999, "is_bot": true, "first_name": "Hermes"}}]),
        None,
    );
    assert!(addressing(&text_mention, &me()).mentions_me);
    let reply = message("and this?", json!([]), Some(999));
    let got = addressing(&reply, &me());
    assert!(got.replies_to_me && !got.mentions_me);
    let other_reply = message("and this?", json!([]), Some(7));
    assert!(!addressing(&other_reply, &me()).replies_to_me);
}

#[test]
fn other_bots_only_and_unmarked_text() {
    let other = message(
        "/new@other_bot",
        json!([entity("bot_command", 0, 14)]),
        None,
    );
    let got = addressing(&other, &me());
    assert!(got.names_only_other_bots && !got.mentions_me);
    let both = message(
        "@other_bot @hermes_bot",
        json!([entity("mention", 0, 10), entity("mention", 11, 11)]),
        None,
    );
    let got = addressing(&both, &me());
    assert!(got.mentions_me && !got.names_only_other_bots);
    // Telegram marked nothing: the raw text is read, but not an address inside a word.
    let raw = message("ping @hermes_bot", json!([]), None);
    assert!(addressing(&raw, &me()).mentions_me);
    let mail = message("write to a@hermes_bot.example", json!([]), None);
    assert!(!addressing(&mail, &me()).mentions_me);
    // An entity Telegram marked elsewhere: the raw text is not searched again.
    let code = message("`@hermes_bot`", json!([entity("code", 0, 13)]), None);
    assert!(!addressing(&code, &me()).mentions_me);
    // A person's handle is not a bot's.
    let person = message("@annie", json!([entity("mention", 0, 6)]), None);
    assert_eq!(addressing(&person, &me()), Addressing::default());
}

#[test]
fn offsets_count_utf16_units() {
    // "😀 " is 3 UTF-16 units.
    let text = "😀 @hermes_bot";
    let got = addressing(
        &message(text, json!([entity("mention", 3, 11)]), None),
        &me(),
    );
    assert!(got.mentions_me);
    let past_the_end = message(text, json!([entity("mention", 3, 40)]), None);
    assert!(
        !addressing(&past_the_end, &me()).mentions_me,
        "an entity past the text names nothing"
    );
}

#[test]
fn the_handle_is_taken_out_where_telegram_marked_it() {
    let marked = |text: &str, entities: serde_json::Value| {
        let entities: Vec<MessageEntity> = serde_json::from_value(entities).unwrap();
        without_handle(text, &entities, &me())
    };
    assert_eq!(
        marked("@Hermes_Bot, what now?", json!([entity("mention", 0, 11)])),
        "what now?"
    );
    assert_eq!(
        marked("ask @hermes_bot: why", json!([entity("mention", 4, 11)])),
        "ask why"
    );
    assert_eq!(
        marked(
            "/model@hermes_bot gpt-4",
            json!([entity("bot_command", 0, 17)])
        ),
        "/model gpt-4"
    );
    assert_eq!(
        marked("😀 @hermes_bot hi", json!([entity("mention", 3, 11)])),
        "😀 hi"
    );
    // Marked as code, or not marked at all while something else is: left as written.
    assert_eq!(
        marked("`@hermes_bot`", json!([entity("code", 0, 13)])),
        "`@hermes_bot`"
    );
    assert_eq!(
        marked("@hermes_bot", json!([entity("mention", 0, 11)])),
        "@hermes_bot",
        "nothing else left"
    );
    // A text Telegram marked nothing in: only a handle standing alone.
    let unmarked = |text: &str| without_handle(text, &[], &me());
    assert_eq!(unmarked("@hermes_bot: hi"), "hi");
    assert_eq!(unmarked("héllo @hermes_bot"), "héllo");
    assert_eq!(
        unmarked("mail ann@hermes_bot.com"),
        "mail ann@hermes_bot.com"
    );
    assert_eq!(unmarked("@hermes_bot2 hi"), "@hermes_bot2 hi");
    assert_eq!(unmarked("/new@hermes_bot"), "/new@hermes_bot");
    assert_eq!(unmarked("no handle"), "no handle");
}

#[test]
fn a_topics_opening_message_is_no_reply_but_a_plain_reply_with_a_thread_id_is() {
    let reply = |topic: bool| {
        let mut raw = json!({"message_id": 9, "date": 1, "message_thread_id": 3,
            "chat": {"id": -5, "type": "supergroup", "title": "g", "is_forum": topic},
            "from": {"id": 42, "is_bot": false, "first_name": "Ann"},
            "text": "hello",
            "reply_to_message": {"message_id": 3, "date": 1,
                "chat": {"id": -5, "type": "supergroup", "title": "g"},
                "from": {"id": 999, "is_bot": true, "first_name": "B"}, "text": "earlier"}});
        if topic {
            raw["is_topic_message"] = json!(true);
        }
        serde_json::from_value::<Message>(raw).unwrap()
    };
    assert!(
        !addressing(&reply(true), &me()).replies_to_me,
        "the topic's root"
    );
    assert!(
        addressing(&reply(false), &me()).replies_to_me,
        "a plain reply"
    );
}
