//! How Python Hermes relates a child session to its parent, mapped to hermesd's lineage, and an
//! order that puts every parent before its children.
//!
//! Python records only `parent_session_id`; the kind of child is told apart by (hermes-agent
//! 0.19.0): `model_config._delegate_from` set by `tools/delegate_tool.py:1426` (subagent);
//! `model_config._branched_from` set by `hermes_cli/cli_commands_mixin.py:946` (also
//! `gateway/slash_commands.py:4092`, `tui_gateway/server.py:2019`) (branch); the parent's
//! `end_reason = 'compression'` written by `agent/conversation_compression.py:1245` just before it
//! creates the continuation (compression; `hermes_state.py:3609-3634` `get_compression_tip` also
//! skips `source = 'tool'` children and ranks siblings); the legacy branch test of
//! `hermes_state.py:76-80` (parent `end_reason = 'branched'`, child started after it ended); and
//! everything else with a parent is an ephemeral subagent run (`hermes_state.py:94-102`).

use std::{cmp::Ordering, collections::HashMap};

use super::source::{Marker, MessageStats, SourceSession};

/// hermesd's `sessions.lineage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lineage {
    Root,
    Compression,
    Branch,
    Subagent,
}

impl Lineage {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Root => "root",
            Self::Compression => "compression",
            Self::Branch => "branch",
            Self::Subagent => "subagent",
        }
    }
}

/// A session's place in the source: its parent (an index into the sessions) and lineage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Link {
    pub parent: Option<usize>,
    pub lineage: Lineage,
}

/// Links for every session plus an order with parents first.
#[derive(Debug)]
pub(super) struct Plan {
    pub links: Vec<Link>,
    pub order: Vec<usize>,
}

/// How `child` relates to `parent`, before siblings compete for the compression continuation.
pub(super) fn classify(child: &SourceSession, parent: &SourceSession) -> Lineage {
    match child.marker {
        Marker::Delegated => return Lineage::Subagent,
        Marker::Branched => return Lineage::Branch,
        Marker::None => {}
    }
    match parent.end_reason.as_deref() {
        Some("compression") if child.source != "tool" => Lineage::Compression,
        Some("branched") if parent.ended_at.is_some_and(|end| child.started_at >= end) => {
            Lineage::Branch
        }
        _ => Lineage::Subagent,
    }
}

/// Lineage of a session without a parent: a delegate orphaned by its parent's deletion (Python
/// tags those `_delegate_from = '__orphaned__'` and keeps them out of its pickers) stays a
/// subagent, anything else is a root.
pub(super) fn without_parent(session: &SourceSession) -> Lineage {
    if session.marker == Marker::Delegated {
        Lineage::Subagent
    } else {
        Lineage::Root
    }
}

/// Python's preference among compression children: still compressing, then live, then newest
/// activity, newest start, greatest id.
fn tip_order(
    a: &SourceSession,
    b: &SourceSession,
    stats: &HashMap<String, MessageStats>,
) -> Ordering {
    let rank = |s: &SourceSession| match (s.end_reason.as_deref(), s.ended_at) {
        (Some("compression"), _) => 0,
        (_, None) => 1,
        _ => 2,
    };
    let activity = |s: &SourceSession| {
        stats
            .get(&s.id)
            .and_then(|st| st.last_at)
            .unwrap_or(s.started_at)
    };
    rank(a)
        .cmp(&rank(b))
        .then_with(|| activity(b).total_cmp(&activity(a)))
        .then_with(|| b.started_at.total_cmp(&a.started_at))
        .then_with(|| b.id.cmp(&a.id))
}

/// Resolve parents, lineages and the insertion order. Parents missing from the source and
/// parent cycles leave the child a root; only one compression child per parent keeps that
/// lineage (the others become branches).
pub(super) fn plan(sessions: &[SourceSession], stats: &HashMap<String, MessageStats>) -> Plan {
    let index: HashMap<&str, usize> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();
    let mut parents: Vec<Option<usize>> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| {
            s.parent
                .as_deref()
                .and_then(|p| index.get(p).copied())
                .filter(|&p| p != i)
        })
        .collect();
    let order = parents_first(sessions, &mut parents);

    let mut links: Vec<Link> = parents
        .iter()
        .enumerate()
        .map(|(i, parent)| Link {
            parent: *parent,
            lineage: match parent {
                Some(p) => classify(&sessions[i], &sessions[*p]),
                None => without_parent(&sessions[i]),
            },
        })
        .collect();
    let mut tips: HashMap<usize, usize> = HashMap::new();
    for (child, link) in links.iter().enumerate() {
        if let (Some(parent), Lineage::Compression) = (link.parent, link.lineage) {
            tips.entry(parent)
                .and_modify(|best| {
                    if tip_order(&sessions[child], &sessions[*best], stats) == Ordering::Less {
                        *best = child;
                    }
                })
                .or_insert(child);
        }
    }
    for (child, link) in links.iter_mut().enumerate() {
        if let (Some(parent), Lineage::Compression) = (link.parent, link.lineage)
            && tips.get(&parent) != Some(&child)
        {
            link.lineage = Lineage::Branch;
        }
    }
    Plan { links, order }
}

/// Order sessions (oldest first) so that each comes after its parent; a parent cycle is cut by
/// dropping the link that closes it.
fn parents_first(sessions: &[SourceSession], parents: &mut [Option<usize>]) -> Vec<usize> {
    let mut by_start: Vec<usize> = (0..sessions.len()).collect();
    by_start.sort_by(|&a, &b| {
        sessions[a]
            .started_at
            .total_cmp(&sessions[b].started_at)
            .then_with(|| sessions[a].id.cmp(&sessions[b].id))
    });
    let mut done = vec![false; sessions.len()];
    let mut on_path = vec![false; sessions.len()];
    let mut order = Vec::with_capacity(sessions.len());
    let mut path = Vec::new();
    for start in by_start {
        path.clear();
        let mut current = Some(start);
        while let Some(i) = current {
            if done[i] {
                break;
            }
            if on_path[i] {
                if let Some(&last) = path.last() {
                    parents[last] = None;
                }
                break;
            }
            on_path[i] = true;
            path.push(i);
            current = parents[i];
        }
        for &i in path.iter().rev() {
            done[i] = true;
            order.push(i);
        }
    }
    order
}
