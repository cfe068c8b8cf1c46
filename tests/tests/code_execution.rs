//! `execute_code` through the real daemon: a script calls the session's tools over its private
//! channel in one model step, runs out of time and is killed, finds no secret in its
//! environment, and cannot get around the approval guard, the allow-list or the token.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};
use serde_json::Value;

/// Scripts approved forever (`command_allowlist`), so a turn with nobody attached runs them;
/// every command a script runs is still judged on its own.
const ALLOWED: &str = "command_allowlist: [execute_code]\n";

fn script(code: &str) -> Reply {
    Reply::tool_call(
        "execute_code",
        &serde_json::json!({ "code": code }).to_string(),
    )
}

/// The result of the first request's tool call, as the model saw it.
fn result_of(server: &FakeLlm) -> Value {
    let requests = server.requests();
    let text = requests[1].tool_results().pop().unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

async fn send(home: &TestHome, extra: &[&str]) -> Value {
    let cwd = home.path().to_str().unwrap().to_string();
    let mut args = vec!["send", "--json", "--cwd", &cwd];
    args.extend_from_slice(extra);
    args.push("go");
    home.ctl_async(&args).await.json()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_reads_fifty_files_through_the_tools_in_one_model_step() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let dir = home.path().join("notes");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..50 {
        std::fs::write(dir.join(format!("{i:02}.txt")), format!("value {i}\n")).unwrap();
    }
    let code = r#"
from hermes_tools import read_file, search_files
total = 0
for i in range(49):
    text = read_file(f"notes/{i:02}.txt")["content"]
    total += int(text.split("value ")[1].split()[0])
found = search_files("value 49", path="notes")
print("sum", total, "found", len(found["matches"]))
"#;
    let server = FakeLlm::start(vec![script(code), Reply::text("done")]).await;
    home.use_fake_model(&server, ALLOWED);
    let out = send(&home, &[]).await;
    assert_eq!(out["answer"], "done");
    assert_eq!(server.requests().len(), 2, "one model step for fifty calls");
    let result = result_of(&server);
    assert_eq!(result["status"], "success", "{result}");
    assert_eq!(result["tool_calls_made"], 50, "{result}");
    let sum: u32 = (0..49).sum();
    assert_eq!(
        result["output"].as_str().unwrap().trim(),
        format!("sum {sum} found 1"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_that_loops_forever_is_killed_at_the_limit_with_what_it_printed() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let code = "import subprocess, sys\nprint('started', flush=True)\nsubprocess.Popen(['sleep', '3600'])\nwhile True:\n    pass\n";
    let server = FakeLlm::start(vec![script(code), Reply::text("stopped")]).await;
    home.use_fake_model(
        &server,
        &format!("{ALLOWED}code_execution:\n  timeout: 1\n"),
    );
    let out = send(&home, &[]).await;
    assert_eq!(out["answer"], "stopped");
    let result = result_of(&server);
    assert_eq!(result["status"], "timeout", "{result}");
    assert!(
        result["output"].as_str().unwrap().contains("started"),
        "{result}"
    );
    // Nothing the script started outlives it: no `sleep 3600` with a script's environment.
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
            cmdline == b"sleep\x003600\x00"
                && String::from_utf8_lossy(&environ).contains("HERMES_RPC_SOCKET=")
        })
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        survivors.is_empty(),
        "the script's children still run: {survivors:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_looking_for_the_provider_key_finds_none() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let code = r#"
import os, json
from hermes_tools import terminal
found = {k: v for k, v in os.environ.items() if "secret" in v or "KEY" in k or "TOKEN" in k and k != "HERMES_RPC_TOKEN"}
shell = terminal("env")["output"]
print(json.dumps({"env": found, "shell_has_key": "sk-provider-secret" in shell}))
"#;
    let server = FakeLlm::start(vec![script(code), Reply::text("looked")]).await;
    home.use_fake_model(
        &server,
        &format!("{ALLOWED}model:\n  api_key: ${{OPENAI_API_KEY}}\n"),
    );
    home.write(
        ".env",
        "OPENAI_API_KEY=sk-provider-secret-1234\nTELEGRAM_BOT_TOKEN=123:tok-secret\n",
    );
    send(&home, &[]).await;
    let result = result_of(&server);
    assert_eq!(result["status"], "success", "{result}");
    let printed: Value = serde_json::from_str(result["output"].as_str().unwrap().trim()).unwrap();
    assert_eq!(printed["env"], serde_json::json!({}), "{printed}");
    assert_eq!(printed["shell_has_key"], false, "{printed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_cannot_get_around_the_guard_the_allow_list_or_the_token() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let victim = home.path().join("victim");
    std::fs::create_dir_all(victim.join("inner")).unwrap();
    let code = r#"
import json, os, socket
from hermes_tools import terminal, _request
out = {"rm": terminal("rm -rf victim")}
out["memory"] = _request("memory", {"action": "add", "target": "memory", "content": "x"})
out["background"] = terminal("echo bg", timeout=5)
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(os.environ["HERMES_RPC_SOCKET"])
conn.sendall(json.dumps({"tool": "terminal", "args": {"command": "rm -rf victim"}, "token": "guess"}).encode() + b"\n")
out["forged"] = json.loads(json.loads(conn.makefile("rb").readline()))
print(json.dumps(out))
"#;
    let server = FakeLlm::start(vec![script(code), Reply::text("refused")]).await;
    home.use_fake_model(&server, ALLOWED);
    send(&home, &[]).await;
    assert!(
        victim.exists(),
        "the dangerous command ran without approval"
    );
    let result = result_of(&server);
    let printed: Value = serde_json::from_str(result["output"].as_str().unwrap().trim())
        .unwrap_or_else(|e| panic!("{e}: {result}"));
    assert_eq!(printed["rm"]["status"], "blocked", "{printed}");
    assert!(
        printed["rm"]["error"]
            .as_str()
            .unwrap()
            .contains("no interactive user"),
        "{printed}"
    );
    assert!(
        printed["memory"]["error"]
            .as_str()
            .unwrap()
            .contains("cannot be called"),
        "{printed}"
    );
    assert_eq!(printed["background"]["exit_code"], 0, "{printed}");
    assert_eq!(
        printed["forged"]["error"], "unauthorized request",
        "{printed}"
    );
    assert_eq!(
        result["tool_calls_made"], 2,
        "refusals are not calls: {result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_needs_the_users_word_before_it_runs() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let marker = home.path().join("ran");
    let code = format!("open({:?}, 'w').write('x')\n", marker.display().to_string());
    let server = FakeLlm::start(vec![script(&code), Reply::text("not run")]).await;
    home.use_fake_model(&server, "");
    send(&home, &[]).await;
    let result = result_of(&server);
    assert_eq!(result["status"], "blocked", "{result}");
    assert!(!marker.exists(), "the script ran without approval");
}
