//! Unit tests of the sections: the defaults of an empty tree, values read, and each kind of bad
//! value (wrong type, negative, out of range, unknown word) giving exactly one notice and the
//! default.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent;
mod approvals;
mod compression;
mod cron;
mod llm;
mod memory;
mod retention;
mod session_reset;

use hermes_proto::{env::Env, place::Home};
use serde_yaml::Value;

use super::Settings;
use crate::config::{Config, FlagOverrides};

/// The settings `yaml` gives, with the notices.
fn read(yaml: &str) -> (Settings, Vec<String>) {
    read_with(yaml, &Env::default())
}

fn read_with(yaml: &str, env: &Env) -> (Settings, Vec<String>) {
    let tree: Value = serde_yaml::from_str(yaml).unwrap();
    Settings::read(&tree, env)
}

/// The settings `yaml` gives; it must give no notice.
fn clean(yaml: &str) -> Settings {
    let (settings, notices) = read(yaml);
    assert!(notices.is_empty(), "{yaml}: {notices:?}");
    settings
}

/// The settings `yaml` gives and its one notice, which must contain each of `parts`.
fn one_notice(yaml: &str, parts: &[&str]) -> Settings {
    let (settings, notices) = read(yaml);
    assert_eq!(notices.len(), 1, "{yaml}: {notices:?}");
    for part in parts {
        assert!(
            notices[0].contains(part),
            "{yaml}: {:?} lacks {part:?}",
            notices[0]
        );
    }
    settings
}

#[test]
fn an_empty_tree_is_the_defaults_without_notices() {
    let (settings, notices) = Settings::read(&Value::Null, &Env::default());
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(settings, Settings::default());
}

#[test]
fn the_built_in_defaults_give_no_notice_and_match_the_code() {
    let tree = crate::config::layers::defaults().unwrap();
    let (settings, notices) = Settings::read(&tree, &Env::default());
    assert!(notices.is_empty(), "{notices:?}");
    let code = Settings::default();
    assert_eq!(settings.agent, code.agent);
    assert_eq!(settings.memory, code.memory);
    assert_eq!(settings.review, code.review);
    assert_eq!(settings.terminal, code.terminal);
    assert_eq!(settings.toolsets.enabled, ["hermes-cli"]);
}

#[test]
fn a_section_that_is_not_a_mapping_is_one_notice() {
    let s = one_notice("agent: 5", &["agent: 5 is not a mapping", "defaults"]);
    assert_eq!(s.agent, super::AgentSection::default());
}

#[test]
fn null_is_absent() {
    assert_eq!(clean("agent: {max_turns: ~}").agent.max_turns, 90);
    assert_eq!(clean("agent:").agent.max_turns, 90);
}

#[test]
fn the_notice_names_key_value_and_default() {
    let (_, notices) = read("agent: {max_turns: lots}");
    assert_eq!(
        notices,
        ["agent.max_turns: \"lots\" is not a whole number; using 90"]
    );
}

#[test]
fn long_values_are_cut_in_notices() {
    let long = "x".repeat(200);
    let (_, notices) = read(&format!("agent: {{max_turns: {long}}}"));
    assert_eq!(notices.len(), 1);
    assert!(notices[0].len() < 120, "{}", notices[0]);
    assert!(notices[0].contains("...\" is not") || notices[0].contains("..."));
}

#[test]
fn load_appends_the_notices_and_still_loads() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home {
        dir: dir.path().to_path_buf(),
        profile: None,
    };
    std::fs::write(home.config_file(), "agent: {max_turns: lots}\nmystery: 1\n").unwrap();
    let config = Config::load(&home, &Env::default(), &FlagOverrides::default()).unwrap();
    assert_eq!(config.settings.agent.max_turns, 90);
    assert!(config.notices.iter().any(|n| n.contains("mystery")));
    assert!(
        config
            .notices
            .iter()
            .any(|n| n == "agent.max_turns: \"lots\" is not a whole number; using 90"),
        "{:?}",
        config.notices
    );
}

#[test]
fn flags_are_read_like_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home {
        dir: dir.path().to_path_buf(),
        profile: None,
    };
    let flags = FlagOverrides {
        pairs: vec![("agent.max_turns".into(), "12".into())],
    };
    let config = Config::load(&home, &Env::default(), &flags).unwrap();
    assert_eq!(config.settings.agent.max_turns, 12);
}
