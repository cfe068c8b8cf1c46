//! `approvals.*`, `command_allowlist` and `terminal.*`.

use std::time::Duration;

use hermes_proto::env::Env;

use super::{clean, one_notice, read_with};
use crate::config::settings::{
    ApprovalMode, ApprovalsSection, CronMode, DEFAULT_MAX_BACKGROUND, EnvPassthrough,
    TerminalSection,
};

#[test]
fn approvals_defaults_and_values() {
    let d = clean("{}").approvals;
    assert_eq!(d, ApprovalsSection::default());
    assert_eq!(d.mode, ApprovalMode::Smart);
    assert!(!d.off());
    assert_eq!(d.timeout, Duration::from_secs(60));
    assert_eq!(d.cron_mode, CronMode::Deny);
    let a = clean(
        "approvals: {mode: 'OFF ', timeout: 5, cron_mode: Approve}\n\
         command_allowlist: [rm_rf, sudo]",
    )
    .approvals;
    assert!(a.off());
    assert_eq!(a.timeout, Duration::from_secs(5));
    assert_eq!(a.cron_mode, CronMode::Approve);
    assert_eq!(a.command_allowlist, ["rm_rf", "sudo"]);
    assert!(
        clean("approvals: {mode: false}").approvals.off(),
        "Hermes' false"
    );
    assert_eq!(
        clean("approvals: {mode: manual}").approvals.mode,
        ApprovalMode::Manual
    );
}

#[test]
fn approvals_bad_values_are_one_notice_and_the_default() {
    let s = one_notice(
        "approvals: {mode: sometimes}",
        &["approvals.mode: \"sometimes\" is not one of manual, smart or off; using smart"],
    );
    assert!(!s.approvals.off());
    let s = one_notice("approvals: {mode: true}", &["approvals.mode: true"]);
    assert!(!s.approvals.off());
    let s = one_notice(
        "approvals: {timeout: soon}",
        &["approvals.timeout", "using 60"],
    );
    assert_eq!(s.approvals.timeout, Duration::from_secs(60));
    let s = one_notice("approvals: {timeout: -1}", &["negative"]);
    assert_eq!(s.approvals.timeout, Duration::from_secs(60));
    let s = one_notice("approvals: {timeout: 0}", &["is below 1; using 1"]);
    assert_eq!(
        s.approvals.timeout,
        Duration::from_secs(1),
        "at least a second, as before"
    );
    let s = one_notice(
        "approvals: {cron_mode: allow}",
        &["approvals.cron_mode: \"allow\" is not one of deny or approve; using deny"],
    );
    assert_eq!(s.approvals.cron_mode, CronMode::Deny);
    assert!(!s.cron.approve_dangerous);
    let s = one_notice(
        "command_allowlist: {a: b}",
        &["command_allowlist", "not a list"],
    );
    assert!(s.approvals.command_allowlist.is_empty());
}

#[test]
fn terminal_defaults_values_and_bad_values() {
    let d = clean("{}").terminal;
    assert_eq!(d, TerminalSection::default());
    assert_eq!(d.timeout, Duration::from_secs(180));
    assert_eq!(d.max_background, DEFAULT_MAX_BACKGROUND);
    let t = clean("terminal: {timeout: 30, cwd: ' /srv ', max_background: 2}").terminal;
    assert_eq!(t.timeout, Duration::from_secs(30));
    assert_eq!(t.cwd, "/srv");
    assert_eq!(t.max_background, 2);
    let s = one_notice(
        "terminal: {timeout: 1.5}",
        &["terminal.timeout: 1.5 is not a whole number"],
    );
    assert_eq!(s.terminal.timeout, Duration::from_secs(180));
    let s = one_notice("terminal: {max_background: -2}", &["using 16"]);
    assert_eq!(s.terminal.max_background, 16);
    let s = one_notice("terminal: {timeout: 0}", &["using 1"]);
    assert_eq!(s.terminal.timeout, Duration::from_secs(1));
    let s = one_notice("terminal: {cwd: 7}", &["terminal.cwd: 7 is not a string"]);
    assert_eq!(s.terminal.cwd, "");
}

/// Hermes' `terminal.env_passthrough`: names (a list or one comma-separated string, repeats
/// once), each with the value the daemon's environment (`.env` included) gives it.
#[test]
fn terminal_env_passthrough_names_and_their_values() {
    assert!(clean("{}").terminal.env_passthrough.is_empty());
    let env = Env::from_pairs([("NOTION_TOKEN", "n-123"), ("EMPTY", "")]);
    let (s, notices) = read_with(
        "terminal: {env_passthrough: [NOTION_TOKEN, ' EMPTY ', MISSING, NOTION_TOKEN]}",
        &env,
    );
    assert!(notices.is_empty(), "{notices:?}");
    let entry = |name: &str, value: Option<&str>| EnvPassthrough {
        name: name.to_owned(),
        value: value.map(str::to_owned),
    };
    assert_eq!(
        s.terminal.env_passthrough,
        [
            entry("NOTION_TOKEN", Some("n-123")),
            entry("EMPTY", None),
            entry("MISSING", None),
        ]
    );
    assert!(
        !format!("{s:?}").contains("n-123"),
        "Debug shows no passed-through value"
    );
    let t = clean("terminal: {env_passthrough: 'A, B'}").terminal;
    let names: Vec<&str> = t.env_passthrough.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["A", "B"]);
    let s = one_notice(
        "terminal: {env_passthrough: [A, 'B=1']}",
        &["terminal.env_passthrough", "\"B=1\" is not a variable name"],
    );
    assert_eq!(s.terminal.env_passthrough.len(), 1);
    let s = one_notice("terminal: {env_passthrough: 7}", &["not a list of names"]);
    assert!(s.terminal.env_passthrough.is_empty());
}
