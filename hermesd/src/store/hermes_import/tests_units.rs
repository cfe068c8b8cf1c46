//! Unit tests of the pure parts: content and tool-call conversion, lineage classification,
//! compression-tip choice and parent-first ordering.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{borrow::Cow, collections::HashMap};

use rusqlite::types::ValueRef;
use serde_json::json;

use super::{
    convert,
    lineage::{self, Lineage},
    source::{Marker, MessageStats, SourceSession},
};

fn calls(raw: &str, result_ids: Vec<String>) -> Option<String> {
    convert::tool_calls(Cow::Borrowed(raw), 7, |_| result_ids).map(Cow::into_owned)
}

#[test]
fn openai_tool_calls_are_kept_verbatim() {
    let raw = r#"[{"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}}]"#;
    let kept = convert::tool_calls(Cow::Borrowed(raw), 1, |_| panic!("no lookup needed"));
    assert!(matches!(kept, Some(Cow::Borrowed(s)) if s == raw));
}

#[test]
fn flat_tool_calls_are_normalised() {
    let flat = r#"[{"id": "k1", "name": "read", "arguments": {"path": "a"}}, {"name": "ls"}]"#;
    let out: serde_json::Value =
        serde_json::from_str(&calls(flat, vec!["from_result".into()]).unwrap()).unwrap();
    assert_eq!(
        out,
        json!([
            {"id": "k1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}},
            {"id": "from_result", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        ])
    );
    // Without a result to borrow an id from, one is made up from the message id and position.
    let out: serde_json::Value =
        serde_json::from_str(&calls(r#"{"name": "ls", "arguments": "{}"}"#, vec![]).unwrap())
            .unwrap();
    assert_eq!(out[0]["id"], "call_7_0");
}

#[test]
fn unusable_tool_calls_are_dropped() {
    for raw in ["", "[]", "not json", "42", "[1, 2]", "null"] {
        assert_eq!(calls(raw, vec![]), None, "{raw:?}");
    }
}

#[test]
fn content_conversion() {
    let text = |bytes: &'static [u8]| convert::message_content(ValueRef::Text(bytes)).into_owned();
    assert_eq!(convert::message_content(ValueRef::Null), "");
    assert_eq!(text("plain 中文".as_bytes()), "plain 中文");
    assert_eq!(text(b"\0json:\"just text\""), "just text");
    assert_eq!(
        text(b"\0json:[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"input_image\"},\"b\"]"),
        "a\n[screenshot]\nb"
    );
    assert_eq!(text(b"\0json:{not json"), "{not json");
    assert_eq!(convert::message_content(ValueRef::Integer(5)), "5");
}

#[test]
fn timestamps() {
    assert_eq!(convert::real(ValueRef::Real(1.2345)), Some(1.2345));
    assert_eq!(convert::real(ValueRef::Integer(3)), Some(3.0));
    assert_eq!(convert::real(ValueRef::Text(b" 4.5 ")), Some(4.5));
    assert_eq!(convert::real(ValueRef::Real(f64::NAN)), None);
    assert_eq!(convert::real(ValueRef::Null), None);
    assert_eq!(convert::millis(1_757_898_147.250_6), 1_757_898_147_251);
}

fn session(id: &str, parent: Option<&str>, started_at: f64) -> SourceSession {
    SourceSession {
        id: id.into(),
        source: "cli".into(),
        parent: parent.map(str::to_string),
        started_at,
        ..SourceSession::default()
    }
}

fn ended(mut s: SourceSession, reason: &str, at: f64) -> SourceSession {
    s.end_reason = Some(reason.into());
    s.ended_at = Some(at);
    s
}

#[test]
fn classification_follows_python_markers_then_end_reasons() {
    let compressed = ended(session("p", None, 0.0), "compression", 10.0);
    let branched = ended(session("p", None, 0.0), "branched", 10.0);
    let open = session("p", None, 0.0);
    let child = session("c", Some("p"), 11.0);
    let with = |marker| SourceSession {
        marker,
        ..child.clone()
    };
    assert_eq!(
        lineage::classify(&with(Marker::Delegated), &compressed),
        Lineage::Subagent
    );
    assert_eq!(
        lineage::classify(&with(Marker::Branched), &compressed),
        Lineage::Branch
    );
    assert_eq!(lineage::classify(&child, &compressed), Lineage::Compression);
    let tool = SourceSession {
        source: "tool".into(),
        ..child.clone()
    };
    assert_eq!(lineage::classify(&tool, &compressed), Lineage::Subagent);
    assert_eq!(lineage::classify(&child, &branched), Lineage::Branch);
    let early = session("c", Some("p"), 5.0);
    assert_eq!(lineage::classify(&early, &branched), Lineage::Subagent);
    assert_eq!(lineage::classify(&child, &open), Lineage::Subagent);
}

#[test]
fn one_compression_tip_per_parent_like_get_compression_tip() {
    let sessions = vec![
        ended(
            session("child_old", Some("p"), 20.0),
            "ws_orphan_reap",
            30.0,
        ),
        session("child_live", Some("p"), 15.0),
        ended(session("p", None, 0.0), "compression", 10.0),
        ended(session("child_stale", Some("p"), 25.0), "agent_close", 40.0),
    ];
    let mut stats = HashMap::new();
    stats.insert(
        "child_old".to_string(),
        MessageStats {
            last_at: Some(99.0),
            ..MessageStats::default()
        },
    );
    let plan = lineage::plan(&sessions, &stats);
    let lineages: Vec<Lineage> = plan.links.iter().map(|l| l.lineage).collect();
    // The live child wins over closed siblings, whatever their activity.
    assert_eq!(
        lineages,
        [
            Lineage::Branch,
            Lineage::Compression,
            Lineage::Root,
            Lineage::Branch
        ]
    );
    assert_eq!(plan.order[0], 2, "the parent comes first");
}

#[test]
fn order_puts_parents_first_and_cuts_cycles() {
    let sessions = vec![
        session("grandchild", Some("child"), 1.0),
        session("child", Some("root"), 2.0),
        session("root", None, 3.0),
        session("loop_a", Some("loop_b"), 4.0),
        session("loop_b", Some("loop_a"), 5.0),
        session("orphan", Some("not_in_source"), 6.0),
    ];
    let plan = lineage::plan(&sessions, &HashMap::new());
    let position = |i: usize| plan.order.iter().position(|&o| o == i).unwrap();
    assert_eq!(plan.order.len(), sessions.len());
    assert!(position(2) < position(1) && position(1) < position(0));
    for (i, link) in plan.links.iter().enumerate() {
        if let Some(parent) = link.parent {
            assert!(
                position(parent) < position(i),
                "{} before its parent",
                sessions[i].id
            );
        }
    }
    assert!(
        plan.links[3].parent.is_none() || plan.links[4].parent.is_none(),
        "cycle cut"
    );
    assert_eq!(plan.links[5].parent, None);
    assert_eq!(plan.links[5].lineage, Lineage::Root);
}

#[test]
fn orphaned_delegate_stays_a_subagent() {
    let orphan = SourceSession {
        marker: Marker::Delegated,
        ..session("sub", Some("deleted_parent"), 1.0)
    };
    let plan = lineage::plan(&[orphan], &HashMap::new());
    assert_eq!(plan.links[0].parent, None);
    assert_eq!(plan.links[0].lineage, Lineage::Subagent);
}
