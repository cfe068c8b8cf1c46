//! `memory.*` and `skills.*`.

use std::path::{Path, PathBuf};

use super::{clean, one_notice};
use crate::config::settings::{MemorySection, SkillsSection};

#[test]
fn memory_defaults_and_values() {
    let d = clean("{}").memory;
    assert_eq!(d, MemorySection::default());
    assert!(d.memory_enabled && d.user_profile_enabled);
    assert_eq!((d.memory_char_limit, d.user_char_limit), (2200, 1375));
    let m = clean(
        "memory: {memory_enabled: 'off', user_profile_enabled: false, memory_char_limit: '5000', \
         user_char_limit: 800}",
    )
    .memory;
    assert!(!m.memory_enabled && !m.user_profile_enabled);
    assert_eq!((m.memory_char_limit, m.user_char_limit), (5000, 800));
}

#[test]
fn memory_bad_values_are_one_notice_and_the_default() {
    let s = one_notice(
        "memory: {memory_enabled: 3}",
        &["memory.memory_enabled: 3", "using true"],
    );
    assert!(s.memory.memory_enabled);
    let s = one_notice("memory: {memory_char_limit: lots}", &["using 2200"]);
    assert_eq!(s.memory.memory_char_limit, 2200);
    let s = one_notice("memory: {user_char_limit: -1}", &["negative", "using 1375"]);
    assert_eq!(s.memory.user_char_limit, 1375);
    let s = one_notice(
        "memory: {user_char_limit: 10}",
        &["is below 100; using 100"],
    );
    assert_eq!(s.memory.user_char_limit, 100, "clamped as before");
    let s = one_notice("memory: {memory_char_limit: 9000000}", &["using 1000000"]);
    assert_eq!(s.memory.memory_char_limit, 1_000_000);
}

#[test]
fn skills_defaults_values_and_bad_values() {
    let d = clean("{}").skills;
    assert_eq!(d, SkillsSection::default());
    assert_eq!(
        d.roots(Path::new("/h")),
        [PathBuf::from("/h/skills")],
        "the home's skills only"
    );
    let s = clean(
        "skills: {external_dirs: ['/x', '/h/skills'], disabled: [a], \
         platform_disabled: {telegram: [b, c]}}",
    )
    .skills;
    assert_eq!(
        s.roots(Path::new("/h")),
        [PathBuf::from("/h/skills"), "/x".into()]
    );
    assert_eq!(s.disabled, ["a"]);
    assert_eq!(s.platform_disabled["telegram"], ["b", "c"]);
    let s = one_notice(
        "skills: {platform_disabled: [telegram]}",
        &["skills.platform_disabled", "not a mapping"],
    );
    assert!(s.skills.platform_disabled.is_empty());
    let s = one_notice(
        "skills: {platform_disabled: {slack: 4}}",
        &["skills.platform_disabled.slack: 4 is not a list of names"],
    );
    assert!(s.skills.platform_disabled["slack"].is_empty());
    let s = one_notice("skills: {external_dirs: 12}", &["skills.external_dirs"]);
    assert!(s.skills.external_dirs.is_empty());
}
