//! `approvals.*`, `command_allowlist` and `terminal.*`.

use std::time::Duration;

use super::{clean, one_notice};
use crate::config::settings::{
    ApprovalMode, ApprovalsSection, CronMode, DEFAULT_MAX_BACKGROUND, TerminalSection,
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
