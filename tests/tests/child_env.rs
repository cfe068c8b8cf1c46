//! The environment commands run with, and what of the daemon's own environment is masked, through
//! the real daemon: secrets under names no block list catches (`AWS_SECRET_ACCESS_KEY`,
//! `DATABASE_URL`, an odd-named one), in the daemon's environment and in `.env`, never reach a
//! `terminal` command; what a shell needs does, and so do the variables `terminal.env_passthrough`
//! names (from the daemon's environment or `.env`) except a Hermes provider key; a value of
//! `.env` that looks like a key is masked in a tool result whatever its name.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_tests::{
    DaemonProcess, TestHome,
    fake_llm::{FakeLlm, Reply},
};
use serde_json::json;

const AWS_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const DB_PASSWORD: &str = "Sup3rS3cretPw";
const ODD_SECRET: &str = "Xk39fJ2lQp8ZrT5vBn7WmC4yHd6gKs1a";

fn terminal(command: &str) -> Reply {
    Reply::tool_call("terminal", &json!({ "command": command }).to_string())
}

/// A line `NAME=...` of `env` output (a JSON-escaped tool result: lines end in `\n`).
fn has_var(output: &str, name: &str) -> bool {
    output
        .split('\n')
        .any(|line| line.starts_with(&format!("{name}=")))
}

fn env_output(result: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(result).unwrap();
    value["output"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn commands_get_only_allowed_and_passed_through_variables() {
    let server = FakeLlm::start(vec![terminal("env"), Reply::text("ok")]).await;
    let home = TestHome::new();
    home.use_fake_model(
        &server,
        "terminal:\n  env_passthrough: [MY_TOOL_MODE, DOTENV_TOOL_FLAG, OPENAI_API_KEY]\n",
    );
    home.write(
        ".env",
        &format!(
            "AWS_SECRET_ACCESS_KEY={AWS_SECRET}\n\
             DATABASE_URL=postgres://app:{DB_PASSWORD}@db.internal/app\n\
             STRIPE_SK={ODD_SECRET}\n\
             OPENAI_KEY=sk-proj-0123456789abcdefghij\n\
             OPENAI_API_KEY=sk-proj-provider0123456789\n\
             DOTENV_TOOL_FLAG=from-dotenv\n"
        ),
    );
    let daemon = DaemonProcess::start_with(&home, &[], |c| {
        c.env("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
            .env(
                "DATABASE_URL",
                format!("postgres://app:{DB_PASSWORD}@db.internal/app"),
            )
            .env("MY_CREDS", format!("admin:{ODD_SECRET}"))
            .env("UNLISTED_SETTING", "plain")
            .env("MY_TOOL_MODE", "fast")
            .env("LANG", "C.UTF-8");
    });
    let out = home.ctl_async(&["send", "--json", "show env"]).await.json();
    assert_eq!(out["answer"], "ok");
    let result = server.chat_requests()[1].tool_results().pop().unwrap();
    let output = env_output(&result);
    for name in ["PATH", "HOME", "LANG", "MY_TOOL_MODE", "DOTENV_TOOL_FLAG"] {
        assert!(has_var(&output, name), "{name} is missing: {output}");
    }
    assert!(output.contains("\nLANG=C.UTF-8\n") || output.starts_with("LANG=C.UTF-8\n"));
    assert!(output.contains("MY_TOOL_MODE=fast"), "{output}");
    assert!(output.contains("DOTENV_TOOL_FLAG=from-dotenv"), "{output}");
    for name in [
        "AWS_SECRET_ACCESS_KEY",
        "DATABASE_URL",
        "MY_CREDS",
        "STRIPE_SK",
        "OPENAI_KEY",
        "OPENAI_API_KEY",
        "UNLISTED_SETTING",
        "NOTIFY_SOCKET",
    ] {
        assert!(
            !has_var(&output, name),
            "{name} reached the command: {output}"
        );
    }
    for value in [AWS_SECRET, DB_PASSWORD, ODD_SECRET] {
        assert!(!result.contains(value), "{value} leaked: {result}");
    }
    daemon.terminate();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dotenv_value_that_looks_like_a_key_is_masked_whatever_its_name() {
    let work = tempfile::tempdir_in("/tmp").unwrap();
    let file = work.path().join("notes.txt");
    std::fs::write(
        &file,
        format!("id={AWS_SECRET}\npassword {DB_PASSWORD}\nplain words here\n"),
    )
    .unwrap();
    let server = FakeLlm::start(vec![
        terminal(&format!("cat {}", file.display())),
        Reply::text("ok"),
    ])
    .await;
    let home = TestHome::new();
    home.use_fake_model(&server, "");
    home.write(
        ".env",
        &format!(
            "FOO_ID={AWS_SECRET}\nDATABASE_URL=postgres://app:{DB_PASSWORD}@db.internal/app\n"
        ),
    );
    let daemon = DaemonProcess::start(&home, &[]);
    let out = home.ctl_async(&["send", "--json", "cat it"]).await.json();
    assert_eq!(out["answer"], "ok");
    let result = server.chat_requests()[1].tool_results().pop().unwrap();
    assert!(result.contains("plain words here"), "{result}");
    assert!(!result.contains(AWS_SECRET), "{result}");
    assert!(result.contains("wJalrX...EKEY"), "{result}");
    assert!(!result.contains(DB_PASSWORD), "{result}");
    daemon.terminate();
}
