//! `session_reset`: Hermes' defaults, the overrides per chat type and platform, the environment,
//! and bad values.

use hermes_proto::env::Env;

use super::{clean, one_notice, read_with};
use crate::config::settings::{ResetMode, ResetPolicy};

#[test]
fn off_by_default_as_upstream() {
    let s = clean("{}").gateway.session_reset;
    assert_eq!(s.default, ResetPolicy::default());
    assert_eq!(s.default.mode, ResetMode::None);
    assert_eq!((s.default.at_hour, s.default.idle_minutes), (4, 1440));
    assert_eq!(
        s.default.notify_exclude_platforms,
        ["api_server", "webhook"]
    );
    assert_eq!(s.bg_process_max_age_hours, 24);
}

#[test]
fn overrides_by_type_and_platform_inherit_the_default() {
    let s = clean(
        "session_reset:\n  mode: both\n  at_hour: 6\n  idle_minutes: 120\n  notify: false\n  \
         reset_by_type: {group: {mode: daily}}\n  reset_by_platform: {telegram: {idle_minutes: 30}}\n",
    )
    .gateway
    .session_reset;
    let dm = s.policy_for("signal", "dm", false);
    assert_eq!(
        (dm.mode, dm.at_hour, dm.idle_minutes, dm.notify),
        (ResetMode::Both, 6, 120, false)
    );
    let group = s.policy_for("signal", "group", false);
    assert_eq!((group.mode, group.at_hour), (ResetMode::Daily, 6));
    let telegram = s.policy_for("telegram", "group", false);
    assert_eq!(
        (telegram.mode, telegram.idle_minutes),
        (ResetMode::Both, 30)
    );
    // Under gateway: when the top-level key is absent (Hermes' fallback).
    let nested = clean("gateway:\n  session_reset: {mode: idle}\n")
        .gateway
        .session_reset;
    assert_eq!(nested.default.mode, ResetMode::Idle);
}

#[test]
fn the_environment_and_bad_values() {
    let env = Env::from_pairs([("SESSION_IDLE_MINUTES", "15"), ("SESSION_RESET_HOUR", "2")]);
    let (s, notices) = read_with("session_reset: {mode: idle}", &env);
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(
        (
            s.gateway.session_reset.default.idle_minutes,
            s.gateway.session_reset.default.at_hour
        ),
        (15, 2)
    );
    let s = one_notice(
        "session_reset: {mode: sometimes}",
        &["session_reset.mode", "none, idle"],
    );
    assert_eq!(s.gateway.session_reset.default.mode, ResetMode::None);
    let s = one_notice("session_reset: {at_hour: 25}", &["session_reset.at_hour"]);
    assert_eq!(s.gateway.session_reset.default.at_hour, 4);
    let s = one_notice(
        "session_reset: {idle_minutes: 0}",
        &["session_reset.idle_minutes"],
    );
    assert_eq!(s.gateway.session_reset.default.idle_minutes, 1440);
}
