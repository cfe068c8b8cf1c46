//! Decoding and bounded output buffers.

use super::super::output::{
    HeadTailCollector, RollingText, Utf8Decoder, split_lines, with_thousands,
};

#[test]
fn decoder_joins_characters_split_across_reads() {
    let bytes = "héllo €".as_bytes();
    let mut decoder = Utf8Decoder::default();
    let mut out = String::new();
    for byte in bytes {
        decoder.decode_into(std::slice::from_ref(byte), &mut out);
    }
    decoder.finish_into(&mut out);
    assert_eq!(out, "héllo €");
}

#[test]
fn decoder_replaces_invalid_and_truncated_bytes() {
    let mut decoder = Utf8Decoder::default();
    let mut out = String::new();
    decoder.decode_into(b"a\xffb\xe2\x82", &mut out);
    assert_eq!(out, "a\u{fffd}b");
    decoder.finish_into(&mut out);
    assert_eq!(out, "a\u{fffd}b\u{fffd}");
}

#[test]
fn render_matches_python_collector() {
    // Expected strings produced by Python's _BoundedOutputCollector(100).
    let mut c = HeadTailCollector::new(100);
    for chunk in [
        "a".repeat(30),
        "b".repeat(20),
        "é".repeat(200),
        "c".repeat(7),
        "d".repeat(50),
    ] {
        c.push(&chunk);
    }
    assert_eq!(
        c.render(""),
        "aaaaaaaaaaaaa\n\n... [OUTPUT TRUNCATED - 274 chars omitted out of 307 total] ...\n\ndddddddddddddddddddd"
    );
    assert_eq!(
        c.render("\n[Command interrupted]"),
        "aaaa\n\n... [OUTPUT TRUNCATED - 296 chars omitted out of 307 total] ...\n\nddddddd\n[Command interrupted]"
    );
    let mut small = HeadTailCollector::new(100);
    small.push("hello\n");
    assert_eq!(
        small.render("\n[Command timed out after 1s]"),
        "hello\n\n[Command timed out after 1s]"
    );
}

#[test]
fn collector_memory_stays_bounded() {
    let mut c = HeadTailCollector::new(50_000);
    let chunk = "y\n".repeat(2048);
    for _ in 0..5_000 {
        c.push(&chunk);
        assert!(c.retained_bytes() <= 3 * 50_000 + chunk.len());
    }
    assert_eq!(c.total_chars(), 5_000 * chunk.len());
    let rendered = c.render("");
    assert!(rendered.chars().count() <= 50_000);
    assert!(rendered.contains("out of 20,480,000 total]"));
    assert!(rendered.starts_with("y\ny\n") && rendered.ends_with("y\n"));
}

#[test]
fn rolling_text_keeps_last_chars_and_counts_bytes() {
    let mut r = RollingText::new(10);
    for i in 0..100 {
        r.push(&format!("{}", i % 10), 1);
    }
    assert_eq!(r.view(), "0123456789");
    assert_eq!(r.last(3), "789");
    assert_eq!(r.total_bytes(), 100);
    assert!(r.dropped_output());
    let mut small = RollingText::new(10);
    small.push("abc", 3);
    assert!(!small.dropped_output());
}

#[test]
fn split_lines_like_python() {
    assert_eq!(split_lines("a\nb\r\nc\rd\n"), ["a", "b", "c", "d"]);
    assert_eq!(split_lines("a\n\nb"), ["a", "", "b"]);
    assert!(split_lines("").is_empty());
}

#[test]
fn thousands_separator() {
    assert_eq!(with_thousands(0), "0");
    assert_eq!(with_thousands(999), "999");
    assert_eq!(with_thousands(1_000), "1,000");
    assert_eq!(with_thousands(50_000_000), "50,000,000");
}
