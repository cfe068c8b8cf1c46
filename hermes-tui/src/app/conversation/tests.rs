use hermes_proto::pb::{self, session_event::Kind};

use super::{Block, Conversation, MAX_TOOL_OUTPUT, Pending};

fn event(seq: u64, kind: Kind) -> pb::SessionEvent {
    pb::SessionEvent {
        session_id: "s".into(),
        seq,
        turn_id: "t".into(),
        kind: Some(kind),
        ..pb::SessionEvent::default()
    }
}

fn delta(seq: u64, text: &str) -> pb::SessionEvent {
    event(seq, Kind::TextDelta(pb::TextDelta { text: text.into() }))
}

fn answer(c: &Conversation) -> Vec<String> {
    c.entries
        .iter()
        .filter_map(|e| match &e.block {
            Block::Assistant { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn an_event_seen_twice_is_applied_once() {
    let mut c = Conversation::default();
    assert!(c.apply(&delta(1, "Hel")));
    assert!(c.apply(&delta(2, "lo")));
    // A re-attach from an older seq replays what is already here.
    assert!(!c.apply(&delta(2, "lo")));
    assert!(!c.apply(&delta(1, "Hel")));
    assert_eq!(answer(&c), ["Hello"]);
}

#[test]
fn the_whole_message_replaces_what_was_streamed_of_it() {
    let mut c = Conversation::default();
    c.apply(&delta(3, "Hel"));
    // The connection dropped; the turn finished meanwhile and replays as its message.
    c.apply(&event(
        9,
        Kind::AssistantMessage(pb::AssistantMessage {
            message_id: 7,
            text: "Hello, world".into(),
            ..pb::AssistantMessage::default()
        }),
    ));
    assert_eq!(answer(&c), ["Hello, world"]);
    assert_eq!(c.position_of_message(7), Some(0));
}

#[test]
fn tool_calls_collect_output_and_their_end() {
    let mut c = Conversation::default();
    c.apply(&event(1, Kind::TurnStarted(pb::TurnStarted::default())));
    assert!(c.running);
    c.apply(&event(
        2,
        Kind::ToolStarted(pb::ToolStarted {
            call_id: "c1".into(),
            name: "terminal".into(),
            arguments: r#"{"command":"ls"}"#.into(),
        }),
    ));
    let big = "x".repeat(MAX_TOOL_OUTPUT);
    c.apply(&event(
        3,
        Kind::ToolOutput(pb::ToolOutput {
            call_id: "c1".into(),
            chunk: "first\n".into(),
        }),
    ));
    c.apply(&event(
        4,
        Kind::ToolOutput(pb::ToolOutput {
            call_id: "c1".into(),
            chunk: big,
        }),
    ));
    c.apply(&event(
        5,
        Kind::ToolFinished(pb::ToolFinished {
            call_id: "c1".into(),
            ok: true,
            summary: "done".into(),
            duration_ms: 12,
        }),
    ));
    let Block::Tool(tool) = &c.entries[0].block else {
        panic!("not a tool block: {:?}", c.entries[0].block);
    };
    assert_eq!(tool.ok, Some(true));
    assert_eq!(tool.duration_ms, 12);
    assert_eq!(tool.output.len(), MAX_TOOL_OUTPUT, "output is bounded");
    assert!(!tool.output.starts_with("first"));
}

#[test]
fn an_approval_waits_until_resolved_and_a_turn_end_clears_it() {
    let mut c = Conversation::default();
    let asked = pb::ApprovalRequested {
        id: "a1".into(),
        command: "rm -rf build".into(),
        reason: "recursive delete".into(),
        choices: vec![],
    };
    c.apply(&event(1, Kind::ApprovalRequested(asked.clone())));
    assert_eq!(c.pending, Some(Pending::Approval(asked)));
    c.apply(&event(
        2,
        Kind::ApprovalResolved(pb::ApprovalResolved {
            id: "a1".into(),
            decision: "once".into(),
            by: "hermes-tui".into(),
        }),
    ));
    assert_eq!(c.pending, None);
    c.apply(&event(
        3,
        Kind::ClarifyRequested(pb::ClarifyRequested::default()),
    ));
    c.apply(&event(
        4,
        Kind::TurnInterrupted(pb::TurnInterrupted { by: "me".into() }),
    ));
    assert_eq!(c.pending, None);
    assert!(!c.running);
}

#[test]
fn the_oldest_blocks_go_past_the_bound() {
    let mut c = Conversation::default();
    for i in 0..(super::MAX_BLOCKS as u64 + 10) {
        c.apply(&event(
            i + 1,
            Kind::UserMessage(pb::UserMessage {
                message_id: i,
                text: format!("m{i}"),
            }),
        ));
    }
    assert_eq!(c.entries.len(), super::MAX_BLOCKS);
    assert_eq!(c.dropped, 10);
    assert_eq!(c.position_of_message(10), Some(0));
}
