//! Tests of `convert.rs`: which messages are taken, how they address the bot, presses and
//! application commands.

use serde_json::json;

use super::*;

fn me() -> Me {
    Me {
        id: "900".into(),
        application_id: "900".into(),
    }
}

fn guild_place() -> Place {
    Place {
        kind: ChatKind::Group,
        chat: ChatRef {
            chat_id: "10".into(),
            thread_id: String::new(),
        },
        chat_name: "Friends / #general".into(),
        in_my_thread: false,
    }
}

fn msg(content: &str) -> Value {
    json!({"id": "1000", "type": 0, "channel_id": "10", "guild_id": "1",
        "author": {"id": "42", "username": "ann", "global_name": "Ann"},
        "member": {"nick": null}, "content": content, "mentions": [], "attachments": []})
}

#[test]
fn the_bots_own_other_bots_and_system_messages_are_dropped() {
    assert_eq!(wanted_message(&msg("hi"), &me()), Some(("10", "1")));
    let mut own = msg("hi");
    own["author"]["id"] = json!("900");
    assert!(wanted_message(&own, &me()).is_none());
    let mut bot = msg("hi");
    bot["author"]["bot"] = json!(true);
    assert!(wanted_message(&bot, &me()).is_none());
    let mut join = msg("");
    join["type"] = json!(7);
    assert!(wanted_message(&join, &me()).is_none());
    let mut reply = msg("hi");
    reply["type"] = json!(19);
    assert!(wanted_message(&reply, &me()).is_some());
}

#[test]
fn mentions_replies_and_other_bots() {
    let got = message(&msg("<@900> what now?"), &me(), guild_place()).unwrap();
    assert!(got.addressing.mentions_me);
    assert_eq!(got.text, "what now?");
    assert_eq!((got.update_id, got.user_name.as_str()), (1000, "Ann"));
    let got = message(&msg("hey <@!900>"), &me(), guild_place()).unwrap();
    assert_eq!(
        (got.addressing.mentions_me, got.text.as_str()),
        (true, "hey")
    );
    let plain = message(&msg("hi all"), &me(), guild_place()).unwrap();
    assert_eq!(plain.addressing, Addressing::default());
    let mut reply = msg("and?");
    reply["type"] = json!(19);
    reply["referenced_message"] =
        json!({"id": "999", "author": {"id": "900", "bot": true}, "content": "earlier answer"});
    let got = message(&reply, &me(), guild_place()).unwrap();
    assert!(got.addressing.replies_to_me && !got.addressing.mentions_me);
    assert_eq!(got.reply_to.as_deref(), Some("earlier answer"));
    let mut other = msg("<@777> do it");
    other["mentions"] = json!([{"id": "777", "bot": true, "username": "otherbot"}]);
    let got = message(&other, &me(), guild_place()).unwrap();
    assert!(got.addressing.names_only_other_bots);
    assert_eq!(got.text, "<@777> do it");
}

#[test]
fn attachments_keep_their_url_in_a_colon_free_id() {
    let mut m = msg("look");
    m["flags"] = json!(IS_VOICE_MESSAGE);
    m["attachments"] = json!([
        {"id": "5", "filename": "cat.png", "size": 10, "url": "https://cdn.example/a/cat.png?ex=1:2",
         "content_type": "image/png"},
        {"id": "6", "filename": "voice-message.ogg", "size": 20, "url": "http://127.0.0.1:9/v.ogg",
         "content_type": "audio/ogg"},
        {"id": "7", "filename": "notes.txt", "size": 3, "url": "http://127.0.0.1:9/n.txt"}
    ]);
    let got = message(&m, &me(), guild_place()).unwrap();
    let kinds: Vec<&str> = got.attachments.iter().map(|a| a.kind).collect();
    assert_eq!(kinds, ["photo", "voice", "document"]);
    for a in &got.attachments {
        assert!(!a.file_id.contains(':'), "{}", a.file_id);
    }
    assert_eq!(
        decode_file(&got.attachments[0].file_id),
        Some(("https://cdn.example/a/cat.png?ex=1:2".to_string(), 10))
    );
    assert_eq!(got.attachments[1].size, 20);
}

#[test]
fn presses_and_application_commands() {
    let press = json!({"id": "3000", "type": 3, "token": "tok", "channel_id": "10", "guild_id": "1",
        "member": {"user": {"id": "42", "username": "ann"}},
        "message": {"id": "2000"}, "data": {"custom_id": "approve:q1:once", "component_type": 2}});
    let (inbound, ack) = interaction(&press, guild_place()).unwrap();
    let pressed = inbound.press.unwrap();
    assert_eq!(
        (
            pressed.id.as_str(),
            pressed.data.as_str(),
            pressed.message_id.as_str()
        ),
        ("3000:tok", "approve:q1:once", "2000")
    );
    assert_eq!(inbound.user_id, "42");
    assert_eq!(ack.response["type"], 6);
    let command = json!({"id": "3001", "type": 2, "token": "tok2", "channel_id": "55",
        "user": {"id": "42", "username": "ann"},
        "data": {"name": "model", "options": [{"name": "args", "type": 3, "value": "openai:gpt "}]}});
    let dm = Place {
        kind: ChatKind::Dm,
        chat: ChatRef {
            chat_id: "55".into(),
            thread_id: String::new(),
        },
        chat_name: "ann".into(),
        in_my_thread: false,
    };
    let (inbound, ack) = interaction(&command, dm).unwrap();
    assert_eq!(inbound.text, "/model openai:gpt");
    assert!(inbound.addressing.mentions_me);
    assert_eq!((ack.id.as_str(), ack.token.as_str()), ("3001", "tok2"));
    assert_eq!(ack.response["type"], 4);
    assert_eq!(ack.response["data"]["flags"], 64);
    let bare = json!({"id": "3002", "type": 2, "token": "t", "channel_id": "55",
        "user": {"id": "42"}, "data": {"name": "new"}});
    assert_eq!(interaction(&bare, guild_place()).unwrap().0.text, "/new");
    let autocomplete = json!({"id": "3003", "type": 4, "token": "t", "channel_id": "55",
        "user": {"id": "42"}, "data": {"name": "new"}});
    assert!(interaction(&autocomplete, guild_place()).is_none());
}
