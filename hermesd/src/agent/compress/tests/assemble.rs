//! Settings, prepare and assemble end to end.

use super::{
    Rng, assert_alternation_around_summary, assert_groups_intact, calls, random_conversation,
    result, user,
};
use crate::agent::compress::{
    CompressionSettings, SummaryOutcome, assemble, estimate_messages, is_summary_message, prepare,
    previous_summary,
};
use crate::llm::ChatMessage;

fn session(groups: usize) -> Vec<ChatMessage> {
    let mut out = vec![user("build the thing")];
    for g in 0..groups {
        let id = format!("c{g}");
        out.push(calls(&[(&id, "terminal", r#"{"command":"cargo build"}"#)]));
        out.push(result(
            &id,
            Some("terminal"),
            &format!("output {g} {}", "o".repeat(4_000)),
        ));
    }
    out.push(user("and now?"));
    out
}

#[test]
fn settings_derive_threshold_budget_and_trigger() {
    let settings = CompressionSettings::default();
    assert_eq!(settings.threshold_tokens(200_000), 100_000);
    assert_eq!(settings.tail_token_budget(200_000), 20_000);
    assert!(!settings.should_compress(99_999, 200_000));
    assert!(settings.should_compress(100_000, 200_000));
    assert!(!settings.should_compress(100_000, 0));
    assert_eq!(settings.summary_token_limit(200_000), 10_000);
    assert_eq!(settings.summary_token_limit(32_000), 1_600);
}

#[test]
fn summary_replaces_the_middle_and_shrinks_the_estimate() {
    let messages = session(60);
    let prepared = prepare(&messages, &CompressionSettings::default(), 128_000).unwrap();
    assert_eq!(
        prepared.head.len() + prepared.middle.len() + prepared.tail.len(),
        messages.len()
    );
    assert_eq!(prepared.tail.last().unwrap().content, "and now?");
    assert!(prepared.pruned.pruned > 0);
    assert!(
        prepared.request.messages[0].content.contains("output 5 "),
        "summariser sees real output"
    );
    assert!(
        prepared.tail.iter().any(|m| m.content.len() > 4_000),
        "tail is not pruned"
    );

    let compressed = assemble(prepared, SummaryOutcome::Summary("## Goal\nbuild".into()));
    assert!(!compressed.used_fallback);
    assert_eq!(compressed.tokens_before, estimate_messages(&messages));
    assert_eq!(
        compressed.tokens_after,
        estimate_messages(&compressed.messages)
    );
    assert!(compressed.tokens_after * 2 < compressed.tokens_before);
    assert_eq!(
        previous_summary(&compressed.messages),
        Some("## Goal\nbuild")
    );
    assert_groups_intact(&compressed.messages);
    assert_alternation_around_summary(&compressed.messages);
}

#[test]
fn second_compression_updates_the_first_summary() {
    let settings = CompressionSettings::default();
    let first = assemble(
        prepare(&session(60), &settings, 128_000).unwrap(),
        SummaryOutcome::Summary("FIRST SUMMARY".into()),
    );
    let mut messages = first.messages.clone();
    messages.extend(session(40).into_iter().skip(1));
    let prepared = prepare(&messages, &settings, 128_000).unwrap();
    assert_eq!(prepared.previous_summary.as_deref(), Some("FIRST SUMMARY"));
    assert_eq!(prepared.head, first.messages[..prepared.head.len()]);
    assert!(prepared.middle.iter().all(|m| !is_summary_message(m)));
    let request = &prepared.request.messages[0].content;
    assert!(request.starts_with("UPDATE"));
    assert_eq!(
        request.matches("FIRST SUMMARY").count(),
        1,
        "not re-summarised as a turn"
    );

    let second = assemble(prepared, SummaryOutcome::Summary("SECOND".into()));
    assert_eq!(
        second
            .messages
            .iter()
            .filter(|m| is_summary_message(m))
            .count(),
        1
    );
    assert_eq!(previous_summary(&second.messages), Some("SECOND"));
}

#[test]
fn failed_or_empty_summary_falls_back_and_keeps_the_previous_one() {
    let settings = CompressionSettings::default();
    let first = assemble(
        prepare(&session(60), &settings, 128_000).unwrap(),
        SummaryOutcome::Failed("timeout".into()),
    );
    assert!(first.used_fallback);
    assert_eq!(previous_summary(&first.messages), None);
    assert!(first.messages.iter().any(|m| {
        m.content
            .contains("because a summary of them could not be made (timeout)")
    }));

    let with_summary = assemble(
        prepare(&session(60), &settings, 128_000).unwrap(),
        SummaryOutcome::Summary("KEEP".into()),
    );
    let mut messages = with_summary.messages;
    messages.extend(session(40).into_iter().skip(1));
    let again = assemble(
        prepare(&messages, &settings, 128_000).unwrap(),
        SummaryOutcome::Summary("  ".into()),
    );
    assert!(again.used_fallback);
    assert_eq!(previous_summary(&again.messages), Some("KEEP"));
    assert!(again.tokens_after < again.tokens_before);
}

#[test]
fn random_sessions_assemble_to_valid_conversations() {
    let mut rng = Rng::new(99);
    let mut compressed = 0;
    for case in 0..400 {
        let turns = rng.range(5, 80);
        let mut messages = random_conversation(&mut rng, turns);
        let settings = CompressionSettings {
            protect_first: rng.range(0, 5),
            protect_last: rng.range(2, 25),
            ..CompressionSettings::default()
        };
        let context = rng.range(2_000, 200_000) as u64;
        // Compress up to three times in a row, as a long session would.
        for round in 0..3 {
            let Some(prepared) = prepare(&messages, &settings, context) else {
                break;
            };
            let outcome = if rng.range(0, 4) == 0 {
                SummaryOutcome::Failed("boom".into())
            } else {
                SummaryOutcome::Summary(format!("summary {case}/{round}"))
            };
            messages = assemble(prepared, outcome).messages;
            assert_groups_intact(&messages);
            assert_alternation_around_summary(&messages);
            assert!(
                messages.iter().filter(|m| is_summary_message(m)).count() <= 1,
                "case {case}"
            );
            assert!(
                !is_summary_message(messages.last().unwrap()),
                "case {case}: tail lost"
            );
            compressed += 1;
        }
    }
    assert!(compressed > 400, "only {compressed} compressions ran");
}
