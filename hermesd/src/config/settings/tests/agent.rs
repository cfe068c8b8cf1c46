//! `agent.*`, the review nudges and the toolsets.

use super::{clean, one_notice};
use crate::config::settings::{AgentSection, Enforcement, ReviewSection, ToolsetSelection};

#[test]
fn agent_defaults_and_values() {
    let d = clean("{}").agent;
    assert_eq!(d, AgentSection::default());
    assert_eq!((d.max_turns, d.loop_guard), (90, 3));
    assert_eq!(d.tool_use_enforcement, Enforcement::Auto);
    let a = clean(
        "agent: {max_turns: 12, loop_guard: '0', system_prompt: ' Be brief. ', \
         tool_use_enforcement: [GPT, Qwen]}",
    )
    .agent;
    assert_eq!((a.max_turns, a.loop_guard), (12, 0));
    assert_eq!(a.system_prompt.as_deref(), Some("Be brief."));
    assert_eq!(
        a.tool_use_enforcement,
        Enforcement::Models(vec!["gpt".into(), "qwen".into()])
    );
    assert!(a.tool_use_enforcement.applies("openrouter:qwen/qwen3"));
    assert!(
        clean("agent: {system_prompt: '  '}")
            .agent
            .system_prompt
            .is_none()
    );
}

#[test]
fn agent_enforcement_words() {
    let word = |w: &str| {
        clean(&format!("agent: {{tool_use_enforcement: {w}}}"))
            .agent
            .tool_use_enforcement
    };
    assert_eq!(word("true"), Enforcement::Always);
    assert_eq!(word("on"), Enforcement::Always);
    assert_eq!(word("false"), Enforcement::Never);
    assert_eq!(word("never"), Enforcement::Never);
    assert_eq!(word("auto"), Enforcement::Auto);
    assert!(Enforcement::Auto.applies("openai:gpt-4o"));
    assert!(!Enforcement::Auto.applies("anthropic:claude-sonnet-4"));
}

#[test]
fn agent_bad_values_are_one_notice_and_the_default() {
    let s = one_notice(
        "agent: {max_turns: lots}",
        &["agent.max_turns", "\"lots\"", "using 90"],
    );
    assert_eq!(s.agent.max_turns, 90);
    let s = one_notice(
        "agent: {max_turns: -5}",
        &["agent.max_turns: -5 is negative; using 90"],
    );
    assert_eq!(s.agent.max_turns, 90);
    let s = one_notice("agent: {max_turns: 2.5}", &["not a whole number"]);
    assert_eq!(s.agent.max_turns, 90);
    let s = one_notice(
        "agent: {max_turns: 20000}",
        &["is above 10000; using 10000"],
    );
    assert_eq!(s.agent.max_turns, 10_000, "clamped as before");
    let s = one_notice("agent: {max_turns: 0}", &["is below 1; using 1"]);
    assert_eq!(s.agent.max_turns, 1);
    let s = one_notice(
        "agent: {loop_guard: 5000}",
        &["agent.loop_guard", "using 1000"],
    );
    assert_eq!(s.agent.loop_guard, 1_000);
    let s = one_notice(
        "agent: {tool_use_enforcement: sometimes}",
        &["agent.tool_use_enforcement: \"sometimes\"", "using auto"],
    );
    assert_eq!(s.agent.tool_use_enforcement, Enforcement::Auto);
    let s = one_notice("agent: {tool_use_enforcement: 3}", &["using auto"]);
    assert_eq!(s.agent.tool_use_enforcement, Enforcement::Auto);
    let s = one_notice("agent: {tool_use_enforcement: [gpt, 3]}", &["using [gpt]"]);
    assert_eq!(
        s.agent.tool_use_enforcement,
        Enforcement::Models(vec!["gpt".into()])
    );
    let s = one_notice(
        "agent: {system_prompt: [a]}",
        &["agent.system_prompt", "not a string"],
    );
    assert_eq!(s.agent.system_prompt, None);
}

#[test]
fn review_nudges_defaults_values_and_bad_values() {
    assert_eq!(clean("{}").review, ReviewSection::default());
    let d = ReviewSection::default();
    assert_eq!((d.memory_interval, d.skill_interval, d.budget), (10, 10, 8));
    let r = clean(
        "memory: {nudge_interval: 0}\nskills: {creation_nudge_interval: '4'}\n\
         agent: {review_max_turns: 3}",
    )
    .review;
    assert_eq!((r.memory_interval, r.skill_interval, r.budget), (0, 4, 3));
    let s = one_notice(
        "memory: {nudge_interval: often}",
        &["memory.nudge_interval", "using 10"],
    );
    assert_eq!(s.review.memory_interval, 10);
    let s = one_notice(
        "skills: {creation_nudge_interval: -1}",
        &["negative", "using 10"],
    );
    assert_eq!(s.review.skill_interval, 10);
    let s = one_notice(
        "agent: {review_max_turns: 0}",
        &["agent.review_max_turns: 0 is below 1"],
    );
    assert_eq!(s.review.budget, 1, "at least one call, as before");
    let s = one_notice("memory: {nudge_interval: 99999}", &["using 10000"]);
    assert_eq!(s.review.memory_interval, 10_000);
}

#[test]
fn toolsets_defaults_values_and_bad_values() {
    let d = clean("{}").toolsets;
    assert_eq!(d, ToolsetSelection::default());
    assert!(d.allows("terminal"), "no list: everything");
    let t = clean("toolsets: [hermes-cli]\nagent: {disabled_toolsets: 'web, terminal'}").toolsets;
    assert_eq!(t.disabled, ["web", "terminal"]);
    assert!(t.allows("file"));
    assert!(!t.allows("terminal"));
    let t = clean("toolsets: ' todo ,file'").toolsets;
    assert_eq!(t.enabled, ["todo", "file"]);
    assert!(!t.allows("terminal"));
    let s = one_notice(
        "toolsets: 5",
        &["toolsets: 5 is not a list of names; using []"],
    );
    assert!(s.toolsets.enabled.is_empty());
    let s = one_notice(
        "toolsets: [file, {a: 1}]",
        &["toolsets: {\"a\":1} is not a name"],
    );
    assert_eq!(s.toolsets.enabled, ["file"]);
}

#[test]
fn agent_image_input_mode() {
    use crate::config::settings::ImageInputMode;
    let mode = |w: &str| {
        clean(&format!("agent: {{image_input_mode: {w}}}"))
            .agent
            .image_input_mode
    };
    assert_eq!(clean("{}").agent.image_input_mode, ImageInputMode::Auto);
    assert_eq!(mode("native"), ImageInputMode::Native);
    assert_eq!(mode("TEXT"), ImageInputMode::Text);
    let s = one_notice(
        "agent: {image_input_mode: pixels}",
        &["agent.image_input_mode", "auto"],
    );
    assert_eq!(s.agent.image_input_mode, ImageInputMode::Auto);
    assert!(ImageInputMode::Auto.native(true) && !ImageInputMode::Auto.native(false));
    assert!(ImageInputMode::Native.native(false) && !ImageInputMode::Text.native(true));
}
