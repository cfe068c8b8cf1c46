//! `compression.*` (moved here with the old parser's test).

use super::{clean, one_notice};
use crate::config::settings::CompressionSection;

#[test]
fn settings_read_python_hermes_keys() {
    let s = clean(
        "compression: {enabled: false, threshold: 0.7, protect_last_n: 8, protect_first_n: 2}",
    )
    .compression;
    assert!(!s.enabled);
    assert_eq!(s.threshold, 0.7);
    assert_eq!((s.protect_first_n, s.protect_last_n), (2, 8));
    assert!(clean("{}").compression.enabled);
}

#[test]
fn compression_defaults() {
    let d = clean("{}").compression;
    assert_eq!(d, CompressionSection::default());
    assert_eq!((d.threshold, d.target_ratio), (0.5, 0.2));
    assert_eq!((d.protect_first_n, d.protect_last_n), (3, 20));
    let c = clean("compression: {target_ratio: 0.3, enabled: 'no'}").compression;
    assert_eq!(c.target_ratio, 0.3);
    assert!(!c.enabled);
}

#[test]
fn compression_bad_values_are_one_notice_and_the_default() {
    let s = one_notice(
        "compression: {threshold: 1.5}",
        &["compression.threshold: 1.5 is not between 0 and 1; using 0.5"],
    );
    assert_eq!(s.compression.threshold, 0.5);
    let s = one_notice("compression: {target_ratio: -0.1}", &["using 0.2"]);
    assert_eq!(s.compression.target_ratio, 0.2);
    let s = one_notice("compression: {threshold: half}", &["is not a number"]);
    assert_eq!(s.compression.threshold, 0.5);
    let s = one_notice(
        "compression: {enabled: maybe}",
        &["compression.enabled: \"maybe\" is not true or false; using true"],
    );
    assert!(s.compression.enabled);
    let s = one_notice(
        "compression: {protect_last_n: -3}",
        &["negative", "using 20"],
    );
    assert_eq!(s.compression.protect_last_n, 20);
    let s = one_notice("compression: {protect_first_n: 20000}", &["using 10000"]);
    assert_eq!(s.compression.protect_first_n, 10_000, "clamped as before");
}
