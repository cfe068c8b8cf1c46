//! The masker against Hermes: each key shape masked as `agent/redact.py` masks it (the expected
//! texts are its output for terminal text and for file content), benign text left alone, the
//! configured values masked at 8 characters and more, and the setting that turns it off.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use hermes_proto::env::Env;
use serde_json::json;

use super::*;

/// (input, Hermes' terminal-output mask, Hermes' file-content mask).
const SHAPES: &[(&str, &str, &str)] = &[
    (
        "key sk-proj-abcdefghij1234567890XYZ done",
        "key sk-pro...0XYZ done",
        "key «redacted:sk-…» done",
    ),
    (
        "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        "ghp_AB...6789",
        "«redacted:ghp_…»",
    ),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "github...wxyz",
        "«redacted:github_pat_…»",
    ),
    (
        "xoxb-1234567890-abcdefghijkl",
        "xoxb-1...ijkl",
        "«redacted:xox…»",
    ),
    (
        "xapp-1-A0123456789-abcdefghij",
        "xapp-1...ghij",
        "«redacted:xapp-…»",
    ),
    (
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "AIzaSy...stuv",
        "«redacted:AIza…»",
    ),
    ("AKIAIOSFODNN7EXAMPLE", "AKIAIO...MPLE", "«redacted:AKIA…»"),
    (
        "hf_abcdefghijklmnopqrstu",
        "hf_abc...rstu",
        "«redacted:hf_…»",
    ),
    (
        "SG.abcdefghijklmnop.qrstuvwxyz",
        "SG.abc...mnop.qrstuvwxyz",
        "«redacted:SG…».qrstuvwxyz",
    ),
    (
        "gAAAAABlabcdefghijklmnopqrstuvwxyz==",
        "gAAAAA...yz==",
        "«redacted:gAAAA…»",
    ),
    (
        "sk_live_abcdefghij0123",
        "sk_liv...0123",
        "«redacted:sk_live_…»",
    ),
    ("sk_abcdefghijklmnop_x", "sk_abc...op_x", "«redacted:sk_…»"),
    (
        "(sk-abcdefghijklmnop)",
        "(sk-abc...mnop)",
        "(«redacted:sk-…»)",
    ),
    (
        "url=https://x/?k=sk-abcdefghijklmnopqr&z=1",
        "url=https://x/?k=sk-abc...opqr&z=1",
        "url=https://x/?k=«redacted:sk-…»&z=1",
    ),
    (
        "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123",
        "Authorization: Bearer abcdef...0123",
        "Authorization: Bearer abcdef...0123",
    ),
    (
        "authorization: token ghp_ABCDEFGHIJKLMNOPQRSTUVWX",
        "authorization: token ***",
        "authorization: token ***",
    ),
    (
        "curl -H \"Authorization: Bearer abc123def456\" x",
        "curl -H \"Authorization: Bearer ***\" x",
        "curl -H \"Authorization: Bearer ***\" x",
    ),
    (
        "x-api-key: my-custom-value-1234567890",
        "x-api-key: my-cus...7890",
        "x-api-key: my-cus...7890",
    ),
    (
        "bot123456789:ABCdefGHIjklMNOpqrSTUvwxYZ0123456789",
        "bot123456789:***",
        "bot123456789:***",
    ),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----",
        "[REDACTED PRIVATE KEY]",
        "[REDACTED PRIVATE KEY]",
    ),
    (
        "postgres://user:hunter2pass@db.example.com:5432/app",
        "postgres://user:***@db.example.com:5432/app",
        "postgres://user:***@db.example.com:5432/app",
    ),
    (
        "git remote set-url origin https://ghtoken12345678@github.com/o/r.git",
        "git remote set-url origin https://***@github.com/o/r.git",
        "git remote set-url origin https://***@github.com/o/r.git",
    ),
    (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbG...sR8U",
        "eyJhbG...sR8U",
    ),
];

/// Text Hermes leaves alone, and so must we.
const BENIGN: &[&str] = &[
    "sk-short1234",
    "xsk-abcdefghijklmnop",
    "ask-abcdefghijklmnop",
    "ghp_abcdefghijklmno-x",
    "f\"postgresql://{user}:{password}@{host}\"",
    "https://user:pass@example.com/x",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==",
    "task-runner skill-manager desk-lamp",
    "MAX_TOKENS=4096 and token_count: 12",
];

#[test]
fn every_hermes_key_shape_is_masked_as_hermes_masks_it() {
    let masker = SecretMasker::default();
    for (input, display, file) in SHAPES {
        assert_eq!(masker.mask(input), *display, "{input}");
        assert_eq!(masker.mask_as(input, Style::FileContent), *file, "{input}");
    }
}

#[test]
fn benign_text_is_left_alone() {
    let masker = SecretMasker::default();
    for input in BENIGN {
        assert_eq!(masker.mask(input), *input);
        assert_eq!(masker.mask_as(input, Style::FileContent), *input);
    }
}

fn canaries() -> Env {
    Env::from_pairs([
        ("CANARY_API_KEY", "sk-canary-0123456789abcdef"),
        ("MY_SERVICE_TOKEN", "zzcanaryvalue123"),
        ("SHORT_PASSWORD", "seven77"),
        ("PATH", "/usr/local/bin:/usr/bin"),
        ("QUOTED_SECRET", "pa\"ss\\word99"),
    ])
}

#[test]
fn configured_values_of_eight_characters_or_more_are_masked_anywhere() {
    let masker = SecretMasker::new(&canaries(), true);
    let text = "a=zzcanaryvalue123; key sk-canary-0123456789abcdef; pw seven77; /usr/bin";
    assert_eq!(
        masker.mask(text),
        "a=***; key sk-can...cdef; pw seven77; /usr/bin"
    );
    assert_eq!(
        masker.mask_as(
            "zzcanaryvalue123 sk-canary-0123456789abcdef",
            Style::FileContent
        ),
        "«redacted-secret» «redacted:sk-…»"
    );
    // Inside JSON text, the escaped form is found too.
    let json_text = json!({"output": "pa\"ss\\word99"}).to_string();
    assert!(!masker.mask(&json_text).contains("word99"), "{json_text}");
}

#[test]
fn json_results_are_masked_string_by_string() {
    let masker = SecretMasker::new(&canaries(), true);
    let mut value = json!({
        "output": "TOKEN=zzcanaryvalue123\n",
        "lines": ["pa\"ss\\word99", 3],
        "exit_code": 0,
    });
    masker.mask_json(&mut value, Style::Display);
    assert_eq!(
        value,
        json!({"output": "TOKEN=***\n", "lines": ["***", 3], "exit_code": 0})
    );
}

#[test]
fn a_disabled_masker_masks_nothing() {
    let masker = Arc::new(SecretMasker::new(&canaries(), false));
    let text = "zzcanaryvalue123 ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    assert_eq!(masker.mask(text), text);
    let mut value = json!({"output": text});
    masker.mask_json(&mut value, Style::Display);
    assert_eq!(value["output"], text);
    assert_eq!(masker.stream().push(text), text);
}

#[test]
fn the_key_shape_patterns_compile() {
    assert!(super::shapes::available());
}
