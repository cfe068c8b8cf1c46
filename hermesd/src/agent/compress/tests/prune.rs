//! Pruning of old tool results.

use super::{assistant, calls, result, user};
use crate::agent::compress::{PRUNED_PREFIX, placeholder, prune_tool_results};

#[test]
fn prunes_only_outside_the_tail_and_names_tool_and_size() {
    let big = "o".repeat(18_432);
    let mut messages = vec![
        user("run it"),
        calls(&[("c1", "terminal", r#"{"command":"make"}"#)]),
        result("c1", Some("terminal"), &big),
        assistant("done"),
        calls(&[("c2", "terminal", r#"{"command":"make"}"#)]),
        result("c2", Some("terminal"), &big),
    ];
    let stats = prune_tool_results(&mut messages, 4, 200);
    assert_eq!(
        messages[2].content,
        "[tool result pruned: terminal output, 18,432 chars]"
    );
    assert_eq!(messages[5].content, big, "the protected tail is untouched");
    assert_eq!(stats.pruned, 1);
    assert_eq!(
        stats.chars_saved,
        18_432 - messages[2].content.chars().count()
    );
}

#[test]
fn tool_name_comes_from_the_matching_call_when_the_result_has_none() {
    let mut messages = vec![
        calls(&[("a", "read_file", "{}"), ("b", "search_files", "{}")]),
        result("a", None, &"r".repeat(500)),
        result("b", None, &"s".repeat(500)),
        result("zz", None, &"t".repeat(500)),
    ];
    prune_tool_results(&mut messages, usize::MAX, 200);
    assert_eq!(messages[1].content, placeholder("read_file", 500));
    assert_eq!(
        messages[2].content,
        "[tool result pruned: search_files output, 500 chars]"
    );
    assert!(messages[3].content.contains("unknown output"));
}

#[test]
fn short_and_already_pruned_results_are_left_and_a_second_pass_does_nothing() {
    let already = format!(
        "{PRUNED_PREFIX} terminal output, 9,999 chars] {}",
        "p".repeat(300)
    );
    let mut messages = vec![
        calls(&[("a", "t", "{}"), ("b", "t", "{}"), ("c", "t", "{}")]),
        result("a", Some("t"), &"s".repeat(200)),
        result("b", Some("t"), &already),
        result("c", Some("t"), &"l".repeat(201)),
    ];
    let first = prune_tool_results(&mut messages, usize::MAX, 200);
    assert_eq!(first.pruned, 1);
    assert_eq!(messages[1].content.len(), 200);
    assert_eq!(messages[2].content, already);
    let second = prune_tool_results(&mut messages, usize::MAX, 200);
    assert_eq!(second.pruned, 0);
    assert_eq!(second.chars_saved, 0);
}

#[test]
fn sizes_are_characters_not_bytes() {
    let mut messages = vec![result("a", Some("read_file"), &"漢".repeat(150))];
    assert_eq!(
        prune_tool_results(&mut messages, 1, 200).pruned,
        0,
        "450 bytes but 150 chars"
    );
    let mut messages = vec![result("a", Some("read_file"), &"漢".repeat(1_234))];
    prune_tool_results(&mut messages, 1, 200);
    assert_eq!(
        messages[0].content,
        "[tool result pruned: read_file output, 1,234 chars]"
    );
}

#[test]
fn user_and_assistant_messages_are_never_pruned() {
    let long = "u".repeat(5_000);
    let mut messages = vec![user(&long), assistant(&long)];
    assert_eq!(prune_tool_results(&mut messages, 2, 200).pruned, 0);
    assert_eq!(messages[0].content, long);
}

#[test]
fn thousands_are_grouped() {
    use crate::agent::compress::prune::group_thousands;
    assert_eq!(group_thousands(0), "0");
    assert_eq!(group_thousands(999), "999");
    assert_eq!(group_thousands(1_000), "1,000");
    assert_eq!(group_thousands(1_234_567), "1,234,567");
}
