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

/// Values under names that say nothing, each secret by its content alone: an AWS secret key,
/// random API keys (mixed case, lower case and digits, base64), hex tokens, a UUID key, a
/// password of letters and digits, and the password of a connection URL.
const SECRET_BY_CONTENT: &[(&str, &str, &str)] = &[
    (
        "FOO_ID",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "STRIPE_SK",
        "Xk39fJ2lQp8ZrT5vBn7WmC4yHd6gKs1a",
        "Xk39fJ2lQp8ZrT5vBn7WmC4yHd6gKs1a",
    ),
    (
        "SERVICE_AUTH",
        "k3j5h6g7f8d9s0a1q2w3e4r5",
        "k3j5h6g7f8d9s0a1q2w3e4r5",
    ),
    (
        "BLOB",
        "dGhpc2lzYXJhbmRvbWtleTEyMzQ1Njc4OTA=",
        "dGhpc2lzYXJhbmRvbWtleTEyMzQ1Njc4OTA=",
    ),
    (
        "HEX_ONE",
        "4f9a2b7c1e8d3f6a5b0c9d2e7f1a4b8c",
        "4f9a2b7c1e8d3f6a5b0c9d2e7f1a4b8c",
    ),
    (
        "SIGNING",
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ),
    (
        "HEROKU_ACCOUNT",
        "550e8400-e29b-41d4-a716-446655440000",
        "550e8400-e29b-41d4-a716-446655440000",
    ),
    ("MY_CREDS", "admin:S3cr3tPassw0rd123", "S3cr3tPassw0rd123"),
    (
        "DATABASE_URL",
        "postgres://app:Sup3rS3cretPw@db.internal:5432/app",
        "Sup3rS3cretPw",
    ),
    (
        "ALERTS_HOOK",
        "https://hooks.slack.com/services/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",
        "vK3q9ZpR2xT7mW4nB8cY1dF6",
    ),
];

/// Values of an ordinary environment that are not secrets and must stay readable.
const NOT_SECRETS: &[(&str, &str)] = &[
    ("PATH", "/home/u/.cargo/bin:/usr/local/bin:/usr/bin:/bin"),
    ("HOME", "/home/someone"),
    ("LANG", "en_US.UTF-8"),
    ("LANGUAGE", "en_US:en"),
    (
        "LS_COLORS",
        "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01:cd=40;33;01:or=40;31;01:mi=00:su=37;41:sg=30;43:ca=30;41:tw=30;42:ow=34;42:st=37;44:ex=01;32:*.tar=01;31:*.tgz=01;31:*.7z=01;31:*.mp4=01;35",
    ),
    ("XDG_RUNTIME_DIR", "/run/user/1000"),
    (
        "XDG_DATA_DIRS",
        "/usr/share/ubuntu:/usr/local/share/:/usr/share/",
    ),
    ("XDG_CURRENT_DESKTOP", "ubuntu:GNOME"),
    ("XDG_SESSION_TYPE", "wayland"),
    ("TERM", "xterm-256color"),
    ("SHELL", "/bin/bash"),
    (
        "PS1",
        "\\[\\e]0;\\u@\\h: \\w\\a\\]${debian_chroot:+($debian_chroot)}\\[\\033[01;32m\\]\\u@\\h\\[\\033[00m\\]:\\[\\033[01;34m\\]\\w\\[\\033[00m\\]\\$ ",
    ),
    ("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64"),
    ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
    ("SSH_AUTH_SOCK", "/tmp/ssh-XXXXk3j5h6g7f8d9/agent.1234"),
    ("LESSOPEN", "| /usr/bin/lesspipe %s"),
    ("HOSTNAME", "ip-172-31-22-10.ec2.internal"),
    ("SERVER", "build-worker-17.eu-west-1.compute.internal"),
    ("GOOGLE_CLOUD_PROJECT", "my-project-123456"),
    ("NODE_VERSION", "20.11.1-linux-x64"),
    ("CARGO_BUILD_TARGET", "x86_64-unknown-linux-gnu"),
    ("RUSTC_BUILD", "rustc-1.75.0-x86_64-unknown-linux-gnu"),
    ("RUSTFLAGS", "-Ctarget-cpu=native"),
    ("APP_NAME", "MyApplicationServiceName"),
    ("ENVIRONMENT", "production-eu-west-1"),
    ("JVM_PROPERTY", "org.gradle.jvmargs"),
    ("VERSION", "1.75.0"),
    ("ENABLED", "true"),
    ("BIG_NUMBER", "12345678901234567890"),
    ("IP", "192.168.100.200"),
    (
        "API_BASE",
        "https://api.example.com/v1/projects/my-project/items",
    ),
    ("DEBUGINFOD_URLS", "https://debuginfod.ubuntu.com"),
    ("BUILT_AT", "20240115T103000Z"),
    ("IMAGE", "ghcr.io/org/app:sha-1a2b3c4"),
    (
        "SESSION_MANAGER",
        "local/box:@/tmp/.ICE-unix/2233,unix/box:/tmp/.ICE-unix/2233",
    ),
    (
        "npm_config_user_agent",
        "npm/10.2.3 node/v20.11.1 linux x64 workspaces/false",
    ),
    ("INVOCATION_ID", "8a6f3c2e4b1d4a8f9e7c6b5a4d3c2b1a"),
    ("MEMORY_PRESSURE_WRITE", "c29tZSAyMDAwMDAgMjAwMDAwMAA="),
];

#[test]
fn values_that_look_like_secrets_are_masked_whatever_their_name() {
    let masker = SecretMasker::new(
        &Env::from_pairs(SECRET_BY_CONTENT.iter().map(|(n, v, _)| (*n, *v))),
        true,
    );
    for (name, _, secret) in SECRET_BY_CONTENT {
        let text = format!("the value: {secret} (end)");
        let masked = masker.mask(&text);
        assert!(!masked.contains(secret), "{name}: {masked}");
        assert!(
            masked.starts_with("the value: ") && masked.ends_with(" (end)"),
            "{masked}"
        );
    }
}

#[test]
fn ordinary_environment_values_are_not_masked() {
    let masker = SecretMasker::new(&Env::from_pairs(NOT_SECRETS.iter().copied()), true);
    for (name, value) in NOT_SECRETS {
        let text = format!("{name}={value}");
        assert_eq!(masker.mask(&text), text, "{name}");
    }
}
