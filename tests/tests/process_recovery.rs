//! Background processes across a daemon that dies: one started by `terminal` with
//! `background: true` is recorded in `$HERMES_HOME/processes.json`; after a SIGKILL of the daemon
//! its process group keeps running, and the next daemon stops it before it reports READY.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::path::Path;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};
use nix::{
    sys::signal::{Signal, killpg},
    unistd::Pid,
};
use serde_json::Value;

/// The fields of `/proc/<pid>/stat` after the command name (field 3, the state, first).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 1..];
    Some(after_comm.split_whitespace().map(str::to_string).collect())
}

/// Whether a process of group `pgid` is alive. Zombies do not count: the machine's init may
/// leave an orphan unreaped after it died.
fn group_alive(pgid: u32) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            return false;
        };
        stat_fields(pid).is_some_and(|f| f[2] == pgid.to_string() && f[0] != "Z" && f[0] != "X")
    })
}

/// Kills the orphan's group if the test fails before the daemon did.
struct KillGroupOnDrop(u32);

impl Drop for KillGroupOnDrop {
    fn drop(&mut self) {
        let _ = killpg(Pid::from_raw(self.0 as i32), Signal::SIGKILL);
    }
}

fn recorded(home: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(home.join("processes.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_process_left_by_a_killed_daemon_is_stopped_by_the_next_one() {
    let server = FakeLlm::start(vec![
        Reply::tool_call(
            "terminal",
            r#"{"command": "sleep 1000", "background": true}"#,
        ),
        Reply::text("started"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&server, "");
    let sent = home
        .ctl_async(&["send", "--json", "start a server"])
        .await
        .json();
    assert_eq!(sent["answer"], "started");
    let started: Value =
        serde_json::from_str(&server.chat_requests()[1].tool_results()[0]).unwrap();
    let pid = u32::try_from(started["pid"].as_u64().unwrap()).unwrap();
    let _cleanup = KillGroupOnDrop(pid);

    // Recorded before the model was told of it, with what identifies the process.
    let entries = recorded(home.path());
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["pid"], pid);
    assert_eq!(entries[0]["command"], "sleep 1000");
    assert_eq!(entries[0]["session_id"], started["session_id"]);
    let start_time: u64 = stat_fields(pid).unwrap()[19].parse().unwrap();
    assert_eq!(entries[0]["host_start_time"], start_time);

    home.kill_daemon_hard().await;
    assert!(
        group_alive(pid),
        "the process outlives a daemon killed with SIGKILL"
    );

    // `status` starts a daemon and returns once it is READY: recovery ran before that.
    home.ctl_async(&["status"]).await.ok();
    assert!(
        !group_alive(pid),
        "the next daemon stopped the orphaned process group"
    );
    assert_eq!(recorded(home.path()), Vec::<Value>::new());
}
