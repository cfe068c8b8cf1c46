use serde_json::json;

use super::*;

fn cx<'a>(commands: &'a [String], bot_thread: &'a dyn Fn(&str, &str) -> bool) -> Context<'a> {
    Context {
        bot_user: "UBOT",
        commands,
        reply_in_thread: true,
        dm_threads: true,
        bot_thread,
        user_name: &|id| (id == "U1").then(|| "ann".to_string()),
    }
}

fn callback(event: serde_json::Value) -> serde_json::Value {
    json!({"type": "event_callback", "team_id": "T1", "event_id": "Ev1", "event": event})
}

#[test]
fn a_dm_and_a_channel_message_open_threads_of_their_own() {
    let none = |_: &str, _: &str| false;
    let commands = vec!["new".to_string()];
    let dm = callback(
        json!({"type": "message", "channel": "D1", "channel_type": "im",
        "user": "U1", "text": "hi", "ts": "1.1"}),
    );
    let got = event_callback(&dm, &cx(&commands, &none)).unwrap();
    assert_eq!(got.inbound.kind, ChatKind::Dm);
    assert_eq!(
        got.inbound.chat,
        ChatRef {
            chat_id: "D1".into(),
            thread_id: "1.1".into()
        }
    );
    assert_eq!(
        (got.inbound.user_name.as_str(), got.team.as_str()),
        ("ann", "T1")
    );
    let channel = callback(
        json!({"type": "message", "channel": "C1", "channel_type": "channel",
        "user": "U2", "text": "<@UBOT> what now?", "ts": "2.1"}),
    );
    let got = event_callback(&channel, &cx(&commands, &none)).unwrap();
    assert_eq!(got.inbound.kind, ChatKind::Group);
    assert_eq!(got.inbound.chat.thread_id, "2.1");
    assert!(got.inbound.addressing.mentions_me);
    assert_eq!(got.inbound.text, "what now?");
    // The same message as app_mention is the same update.
    let mention = callback(json!({"type": "app_mention", "channel": "C1", "user": "U2",
        "text": "<@UBOT> what now?", "ts": "2.1"}));
    let again = event_callback(&mention, &cx(&commands, &none)).unwrap();
    assert_eq!(again.inbound.update_id, got.inbound.update_id);
    let flat = Context {
        reply_in_thread: false,
        ..cx(&commands, &none)
    };
    assert_eq!(
        event_callback(&channel, &flat)
            .unwrap()
            .inbound
            .chat
            .thread_id,
        ""
    );
}

#[test]
fn a_thread_reply_stays_in_its_thread_and_knows_the_bots_threads() {
    let ours = |channel: &str, thread: &str| channel == "C1" && thread == "2.1";
    let commands = vec!["stop".to_string()];
    let reply = callback(json!({"type": "message", "channel": "C1", "user": "U2",
        "text": "!stop now", "ts": "2.5", "thread_ts": "2.1"}));
    let got = event_callback(&reply, &cx(&commands, &ours)).unwrap();
    assert_eq!(got.inbound.chat.thread_id, "2.1");
    assert!(got.inbound.addressing.in_my_thread && !got.inbound.addressing.mentions_me);
    assert_eq!(got.inbound.text, "/stop now");
    let other = callback(json!({"type": "message", "channel": "C1", "user": "U2",
        "text": "!nice work", "ts": "3.5", "thread_ts": "3.1"}));
    let got = event_callback(&other, &cx(&commands, &ours)).unwrap();
    assert!(!got.inbound.addressing.in_my_thread);
    assert_eq!(got.inbound.text, "!nice work");
}

#[test]
fn bots_edits_and_other_kinds_are_dropped() {
    let none = |_: &str, _: &str| false;
    let c = cx(&[], &none);
    for event in [
        json!({"type": "message", "channel": "C1", "user": "UBOT", "text": "mine", "ts": "1"}),
        json!({"type": "message", "channel": "C1", "user": "U9", "bot_id": "B9", "text": "bot", "ts": "1"}),
        json!({"type": "message", "subtype": "message_changed", "channel": "C1", "ts": "1"}),
        json!({"type": "message", "subtype": "bot_message", "channel": "C1", "text": "x", "ts": "1"}),
        json!({"type": "reaction_added", "user": "U1"}),
    ] {
        assert!(
            event_callback(&callback(event.clone()), &c).is_none(),
            "{event}"
        );
    }
}

#[test]
fn files_presses_and_slash_commands() {
    let none = |_: &str, _: &str| false;
    let commands = vec![
        "new".to_string(),
        "compress".to_string(),
        "help".to_string(),
    ];
    let with_file = callback(
        json!({"type": "message", "subtype": "file_share", "channel": "D1",
        "user": "U1", "text": "", "ts": "4.1", "files": [{"id": "F1", "name": "a.png",
        "mimetype": "image/png", "size": 10, "url_private_download": "https://files/x"}]}),
    );
    let got = event_callback(&with_file, &cx(&commands, &none)).unwrap();
    assert_eq!(got.inbound.attachments[0].kind, "photo");
    let file_id = &got.inbound.attachments[0].file_id;
    assert!(!file_id.contains(':'), "{file_id}");
    assert_eq!(
        file_url(file_id),
        Some(("T1", "https://files/x".to_string()))
    );

    let press = json!({"type": "block_actions", "team": {"id": "T1"}, "user": {"id": "U1",
        "username": "ann"}, "channel": {"id": "C1"}, "trigger_id": "t1",
        "container": {"message_ts": "5.1", "thread_ts": "2.1"}, "message": {"ts": "5.1"},
        "actions": [{"action_id": "hermes_approve_once", "value": "approve:q1:once"}]});
    let got = block_actions(&press).unwrap();
    let pressed = got.inbound.press.unwrap();
    assert_eq!(
        (pressed.data.as_str(), pressed.message_id.as_str()),
        ("approve:q1:once", "5.1")
    );
    assert_eq!(got.inbound.chat.thread_id, "2.1");
    assert_eq!(pressed.id, "T1 C1 U1 2.1");

    let slash = |command: &str, text: &str| {
        let fields = json!({"team_id": "T1", "channel_id": "C1", "user_id": "U1",
            "command": command, "text": text, "trigger_id": "t9"});
        slash_command(&fields, &cx(&commands, &none))
            .unwrap()
            .inbound
            .text
    };
    assert_eq!(slash("/hermes", "new"), "/new");
    assert_eq!(slash("/hermes", "compact now"), "/compress now");
    assert_eq!(slash("/hermes", "what is up"), "what is up");
    assert_eq!(slash("/hermes", ""), "/help");
    assert_eq!(slash("/new", ""), "/new");
    assert_eq!(slash("/model", "gpt"), "/model gpt");
}
