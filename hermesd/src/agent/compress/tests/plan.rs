//! Head/middle/tail planning: call groups stay whole, the tail shrinks when it must.

use super::{Rng, assert_groups_intact, assistant, calls, random_conversation, result, user};
use crate::agent::compress::plan::{ABS_MIN_TAIL_MESSAGES, MIN_MIDDLE_MESSAGES};
use crate::agent::compress::{Plan, PlanLimits, plan, summary_message};
use crate::llm::{ChatMessage, Role};

fn limits(protect_first: usize, protect_last: usize, budget: u64) -> PlanLimits {
    PlanLimits {
        protect_first,
        protect_last,
        tail_token_budget: budget,
    }
}

/// user, then `groups` × (assistant calling one tool, its result of `size` chars, assistant answer, user).
fn tool_session(groups: usize, size: usize) -> Vec<ChatMessage> {
    let mut out = vec![user("task")];
    for g in 0..groups {
        let id = format!("c{g}");
        out.push(calls(&[(&id, "terminal", "{}")]));
        out.push(result(&id, Some("terminal"), &"o".repeat(size)));
        out.push(assistant("ok"));
        out.push(user(&format!("go on {g}")));
    }
    out
}

#[test]
fn keeps_first_and_last_messages_by_count() {
    let messages = tool_session(20, 100); // 81 messages
    let plan = plan(&messages, &limits(3, 20, 1_000_000)).unwrap();
    assert_eq!(plan.head_end, 3);
    assert_eq!(plan.tail_start, 61);
    assert_eq!(plan.summary_index, None);
    assert_eq!(plan.middle_indices(&messages).count(), 58);
}

#[test]
fn head_is_extended_over_tool_results_and_tail_moved_back_to_the_call() {
    let mut messages = vec![
        user("task"),
        calls(&[("a", "t", "{}"), ("b", "t", "{}")]),
        result("a", None, "1"),
        result("b", None, "2"),
    ];
    messages.extend(tool_session(10, 10).into_iter().skip(1));
    let n = messages.len();
    let plan = plan(&messages, &limits(3, 3, 1_000_000)).unwrap();
    assert_eq!(plan.head_end, 4, "head takes the second result too");
    // The last 3 would start at a tool result; the tail starts at its call instead.
    assert_eq!(messages[n - 3].role(), Role::Tool);
    assert_eq!(plan.tail_start, n - 4);
}

#[test]
fn boundaries_never_split_call_groups_in_random_conversations() {
    let mut rng = Rng::new(7);
    let mut planned = 0;
    for case in 0..600 {
        let turns = rng.range(1, 60);
        let messages = random_conversation(&mut rng, turns);
        let limits = limits(
            rng.range(0, 6),
            rng.range(1, 25),
            rng.range(0, 20_000) as u64,
        );
        let Some(Plan {
            head_end,
            tail_start,
            ..
        }) = plan(&messages, &limits)
        else {
            continue;
        };
        planned += 1;
        assert!(
            head_end < tail_start && tail_start < messages.len(),
            "case {case}"
        );
        assert_ne!(
            messages[tail_start].role(),
            Role::Tool,
            "case {case}: tail starts with a result"
        );
        assert_ne!(
            messages[head_end].role(),
            Role::Tool,
            "case {case}: head ends inside a group"
        );
        let mut kept = messages[..head_end].to_vec();
        kept.extend_from_slice(&messages[tail_start..]);
        assert_groups_intact(&kept);
    }
    assert!(
        planned > 300,
        "only {planned} conversations were compressible"
    );
}

#[test]
fn empty_middle_shrinks_the_tail_by_budget() {
    let messages = tool_session(5, 2_000); // 21 messages, all inside protect_last
    let plan = plan(&messages, &limits(3, 20, 1_200)).unwrap();
    let tail = &messages[plan.tail_start..];
    assert!(tail.len() >= 4 && tail.len() < 20, "tail of {}", tail.len());
    assert!(plan.middle_indices(&messages).count() >= MIN_MIDDLE_MESSAGES);
}

#[test]
fn impossible_compression_is_none() {
    let tiny = vec![
        user("a"),
        assistant("b"),
        user("c"),
        assistant("d"),
        user("e"),
    ];
    assert_eq!(plan(&tiny, &limits(3, 20, 0)), None);
    // A single call group after the head cannot be split.
    let group = vec![
        user("a"),
        calls(&[
            ("1", "t", "{}"),
            ("2", "t", "{}"),
            ("3", "t", "{}"),
            ("4", "t", "{}"),
        ]),
        result("1", None, "x"),
        result("2", None, "x"),
        result("3", None, "x"),
        result("4", None, "x"),
    ];
    assert_eq!(plan(&group, &limits(1, 20, 0)), None);
    assert_eq!(plan(&[], &limits(3, 20, 0)), None);
}

#[test]
fn smallest_tail_is_used_only_when_nothing_else_leaves_a_middle() {
    let messages = vec![
        user("a"),
        assistant("b"),
        user("c"),
        assistant("d"),
        user("e"),
        assistant("f"),
        user("g"),
    ];
    let plan = plan(&messages, &limits(3, 20, 1_000_000)).unwrap();
    assert_eq!(messages.len() - plan.tail_start, ABS_MIN_TAIL_MESSAGES);
}

#[test]
fn oversized_tail_is_shrunk_to_the_budget() {
    let messages = tool_session(30, 8_000); // ~2,000 tokens per result
    let plan = plan(&messages, &limits(3, 20, 4_000)).unwrap();
    let tail = messages.len() - plan.tail_start;
    assert!((4..20).contains(&tail), "tail of {tail}");
}

#[test]
fn last_user_message_is_kept_when_affordable() {
    let mut messages = tool_session(10, 10);
    messages.push(user("the real latest request"));
    for g in 0..6 {
        let id = format!("late{g}");
        messages.push(calls(&[(&id, "terminal", "{}")]));
        messages.push(result(&id, Some("terminal"), "short"));
    }
    let plan = plan(&messages, &limits(3, 4, 1_000_000)).unwrap();
    assert_eq!(messages[plan.tail_start].content, "the real latest request");
}

#[test]
fn earlier_summary_is_excluded_from_the_middle_and_bounds_the_head() {
    let mut messages = vec![user("task"), assistant("first answer")];
    messages.push(assistant(
        "(The turns that followed are summarised in the next message.)",
    ));
    messages.push(summary_message("old summary body", 30));
    messages.extend(tool_session(10, 10).into_iter().skip(1));
    let plan = plan(&messages, &limits(3, 8, 1_000_000)).unwrap();
    assert_eq!(plan.head_end, 2, "head stops before the summary block");
    assert_eq!(plan.summary_index, Some(3));
    let middle: Vec<usize> = plan.middle_indices(&messages).collect();
    assert!(!middle.contains(&2) && !middle.contains(&3));
    assert_eq!(middle.first(), Some(&4));
}
