//! `terminal` argument parsing and policy.

use serde_json::json;

use super::super::{TerminalArgs, background_started, foreground_guidance, interpret_exit_code};

#[test]
fn parses_defaults_and_lenient_values() {
    let args =
        TerminalArgs::parse(&json!({"command": "ls", "timeout": "30", "background": "true"}))
            .unwrap();
    assert_eq!(args.command, "ls");
    assert_eq!(args.timeout, Some(30));
    assert!(args.background && !args.pty && !args.notify_on_complete);
    assert_eq!(
        TerminalArgs::parse(&json!({"command": "ls"}))
            .unwrap()
            .effective_timeout_secs(180),
        180
    );
}

#[test]
fn rejects_bad_command_and_long_foreground_timeout() {
    let bad = TerminalArgs::parse(&json!({"command": 5})).unwrap_err();
    assert_eq!(bad["error"], "Invalid command: expected string, got int");
    assert_eq!(bad["exit_code"], -1);
    let long = TerminalArgs::parse(&json!({"command": "make", "timeout": 601})).unwrap_err();
    assert!(
        long["error"]
            .as_str()
            .unwrap()
            .starts_with("Foreground timeout 601s exceeds the maximum of 600s.")
    );
    assert!(
        TerminalArgs::parse(&json!({"command": "make", "timeout": 601, "background": true}))
            .is_ok()
    );
}

#[test]
fn foreground_guidance_flags_servers_and_backgrounding() {
    assert!(foreground_guidance("nohup ./server").is_some());
    assert!(foreground_guidance("python app.py &").is_some());
    assert!(foreground_guidance("npm run dev").is_some());
    assert!(foreground_guidance("npm run dev --help").is_none());
    assert!(foreground_guidance("git commit -m 'use nohup & setsid'").is_none());
    assert!(foreground_guidance("make && make test 2>&1").is_none());
    let refused = TerminalArgs::parse(&json!({"command": "uvicorn app:app"})).unwrap_err();
    assert_eq!(refused["status"], "error");
}

#[test]
fn exit_code_meanings() {
    assert_eq!(
        interpret_exit_code("cat x | grep foo 2>&1", 1),
        Some("No matches found (not an error)")
    );
    assert_eq!(
        interpret_exit_code("LC_ALL=C /usr/bin/diff a b", 1),
        Some("Files differ (expected, not an error)")
    );
    assert_eq!(
        interpret_exit_code("curl -f http://x", 22),
        Some("HTTP response code indicated error (e.g. 404, 500)")
    );
    assert_eq!(interpret_exit_code("grep foo", 2), None);
    assert_eq!(interpret_exit_code("grep foo", 0), None);
}

#[test]
fn background_result_shape() {
    let args = TerminalArgs::parse(
        &json!({"command": "make", "background": true, "notify_on_complete": true}),
    )
    .unwrap();
    let result = background_started("proc_0123456789ab", 42, &args);
    assert_eq!(result["output"], "Background process started");
    assert_eq!(result["session_id"], "proc_0123456789ab");
    assert_eq!(
        (result["pid"].as_u64(), result["exit_code"].as_i64()),
        (Some(42), Some(0))
    );
    assert!(result["error"].is_null());
    assert_eq!(result["notify_on_complete"], true);
    assert!(result.get("hint").is_none());
}
