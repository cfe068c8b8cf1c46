//! One `hermesctl send --yolo` whose scripted model makes a list of tool calls: what the
//! confinement tests drive every attack through (approvals off, so only the kernel stops them).

use crate::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
};

/// Run one `hermesctl send --json --yolo` in `~/project` (in `session`, or a new one) whose
/// model makes `calls`, one after the other, then answers "done"; returns the session and what
/// each call told the model.
pub async fn send_yolo(
    home: &TestHome,
    server: &FakeLlm,
    session: Option<&str>,
    calls: Vec<Reply>,
) -> (String, Vec<String>) {
    let n = calls.len();
    for reply in calls {
        server.push(reply);
    }
    server.push(Reply::text("done"));
    let cwd = home.user_home().join("project").display().to_string();
    let mut args = vec!["send", "--json", "--yolo", "--cwd", &cwd];
    if let Some(id) = session {
        args.extend(["--session", id]);
    }
    args.push("go");
    let out = home.ctl_async(&args).await.json();
    assert_eq!(out["answer"], "done", "{out}");
    let results = server
        .requests()
        .last()
        .expect("the model was asked")
        .tool_results();
    assert!(results.len() >= n, "{results:?}");
    (
        out["session_id"].as_str().unwrap_or_default().to_string(),
        results[results.len() - n..].to_vec(),
    )
}
