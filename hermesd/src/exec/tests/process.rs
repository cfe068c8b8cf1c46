//! Background processes and the `process` tool actions.

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::super::{NotificationKind, Notify, ProcessRegistry, RegistryConfig};

fn test_env() -> Vec<(OsString, OsString)> {
    vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())]
}

fn pid_is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let after = &stat[stat.rfind(')').unwrap() + 1..];
            matches!(after.split_whitespace().next(), Some("Z" | "X"))
        }
    }
}

/// Polls until the process's output contains `needle` (bounded).
async fn poll_until_output(registry: &ProcessRegistry, id: &str, needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !registry.poll(id)["output_preview"]
        .as_str()
        .unwrap()
        .contains(needle)
    {
        assert!(Instant::now() < deadline, "no {needle:?} from {id}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Clears every write, as if the policy and the user allowed it.
struct OpenGate;

#[async_trait::async_trait]
impl super::super::StdinGate for OpenGate {
    async fn clear(
        &self,
        _command: &str,
        _cwd: &Path,
        pending: &str,
        data: &str,
    ) -> Result<crate::policy::command::Clearance, String> {
        Ok(crate::policy::command::Clearance::unjudged_stdin(
            pending, data,
        ))
    }
}

async fn call(registry: &ProcessRegistry, args: Value) -> Value {
    registry
        .handle_tool_call(&args, &CancellationToken::new(), &OpenGate)
        .await
}

#[tokio::test]
async fn spawn_wait_poll_log() {
    let registry = ProcessRegistry::default();
    let spawned = registry
        .spawn(
            &crate::policy::command::Clearance::unjudged("printf 'l1\\nl2\\nl3\\n'; exit 7"),
            Path::new("/"),
            test_env(),
            Notify::default(),
        )
        .await
        .unwrap();
    assert!(spawned.session_id.starts_with("proc_") && spawned.session_id.len() == 17);
    assert!(
        spawned.session_id[5..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit())
    );
    let id = spawned.session_id.as_str();

    let waited = call(
        &registry,
        json!({"action": "wait", "session_id": id, "timeout": 10}),
    )
    .await;
    assert_eq!(waited["status"], "exited");
    assert_eq!(waited["exit_code"], 7);
    assert_eq!(waited["completion_reason"], "exited");
    assert_eq!(waited["output"], "l1\nl2\nl3\n");
    assert!(registry.is_completion_consumed(id));

    let polled = call(&registry, json!({"action": "poll", "session_id": id})).await;
    assert_eq!(polled["status"], "exited");
    assert_eq!(polled["exit_code"], 7);
    assert_eq!(polled["pid"], spawned.pid);
    assert_eq!(polled["output_preview"], "l1\nl2\nl3\n");

    let log = call(&registry, json!({"action": "log", "session_id": id})).await;
    assert_eq!(
        (log["output"].as_str(), log["total_lines"].as_u64()),
        (Some("l1\nl2\nl3"), Some(3))
    );
    assert_eq!(log["showing"], "3 lines");
    let page = call(
        &registry,
        json!({"action": "log", "session_id": id, "offset": 1, "limit": 1}),
    )
    .await;
    assert_eq!(page["output"], "l2");
    assert_eq!(registry.count_running(), 0);
}

#[tokio::test]
async fn kill_terminates_the_whole_group() {
    let registry = ProcessRegistry::default();
    let dir = tempfile::tempdir().unwrap();
    let command = "sh -c 'sleep 30 & echo $! > gc.pid; wait' & while [ ! -s gc.pid ]; do :; done; echo ready; wait";
    let id = registry
        .spawn(
            &crate::policy::command::Clearance::unjudged(command),
            dir.path(),
            test_env(),
            Notify::default(),
        )
        .await
        .unwrap()
        .session_id;
    poll_until_output(&registry, &id, "ready").await;
    assert_eq!(registry.poll(&id)["status"], "running");

    let started = Instant::now();
    let killed = call(&registry, json!({"action": "kill", "session_id": id})).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(killed["status"], "killed");
    assert_eq!(killed["completion_reason"], "killed");
    assert_eq!(killed["termination_source"], "process.kill");
    assert_eq!(killed["output"], "ready\n");
    let pid: i32 = std::fs::read_to_string(dir.path().join("gc.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(pid_is_dead(pid), "grandchild {pid} survived kill");

    let polled = registry.poll(&id);
    assert_eq!(
        (polled["status"].as_str(), polled["exit_code"].as_i64()),
        (Some("exited"), Some(-15))
    );
    assert_eq!(
        registry.kill(&id, "process.kill").await["status"],
        "already_exited"
    );
}

#[tokio::test]
async fn wait_times_out_with_clamp_note_and_is_cancellable() {
    let config = RegistryConfig {
        max_wait_secs: 1,
        ..RegistryConfig::default()
    };
    let registry = ProcessRegistry::new(config);
    let id = registry
        .spawn(
            &crate::policy::command::Clearance::unjudged("sleep 30"),
            Path::new("/"),
            test_env(),
            Notify::default(),
        )
        .await
        .unwrap()
        .session_id;

    let started = Instant::now();
    let waited = registry.wait(&id, Some(5), &CancellationToken::new()).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(waited["status"], "timeout");
    assert_eq!(
        waited["timeout_note"],
        "Requested wait of 5s was clamped to configured limit of 1s"
    );

    let cancel = CancellationToken::new();
    cancel.cancel();
    let interrupted = registry.wait(&id, None, &cancel).await;
    assert_eq!(interrupted["status"], "interrupted");
    assert!(!registry.is_completion_consumed(&id));

    assert_eq!(registry.kill_all().await, 1);
    assert_eq!(registry.poll(&id)["termination_source"], "kill_all");
    assert!(!registry.is_completion_consumed(&id));
}

#[tokio::test]
async fn stdin_write_submit_close() {
    let registry = ProcessRegistry::default();
    let id = registry
        .spawn(
            &crate::policy::command::Clearance::unjudged(
                "read line; echo \"got:$line\"; cat; echo end",
            ),
            Path::new("/"),
            test_env(),
            Notify::default(),
        )
        .await
        .unwrap()
        .session_id;
    let submitted = call(
        &registry,
        json!({"action": "submit", "session_id": id, "data": "hello"}),
    )
    .await;
    assert_eq!(submitted, json!({"status": "ok", "bytes_written": 6}));
    let written = call(
        &registry,
        json!({"action": "write", "session_id": id, "data": "abc\n"}),
    )
    .await;
    assert_eq!(written["bytes_written"], 4);
    let closed = call(&registry, json!({"action": "close", "session_id": id})).await;
    assert_eq!(closed, json!({"status": "ok", "message": "stdin closed"}));
    let waited = call(
        &registry,
        json!({"action": "wait", "session_id": id, "timeout": 10}),
    )
    .await;
    assert_eq!(waited["output"], "got:hello\nabc\nend\n");
    let late = call(
        &registry,
        json!({"action": "write", "session_id": id, "data": "x"}),
    )
    .await;
    assert_eq!(late["status"], "already_exited");
}

#[tokio::test]
async fn output_buffer_is_bounded_and_counts_bytes() {
    let config = RegistryConfig {
        max_output_chars: 1000,
        ..RegistryConfig::default()
    };
    let registry = ProcessRegistry::new(config);
    let id = registry
        .spawn(
            &crate::policy::command::Clearance::unjudged("yes | head -c 1000000"),
            Path::new("/"),
            test_env(),
            Notify::default(),
        )
        .await
        .unwrap()
        .session_id;
    let waited = registry
        .wait(&id, Some(20), &CancellationToken::new())
        .await;
    assert_eq!(waited["exit_code"], 0);
    let log = registry.log(&id, 0, 100_000);
    assert_eq!(log["total_lines"], 500);
    assert!(
        log["note"]
            .as_str()
            .unwrap()
            .contains("of 1000000 bytes written")
    );
}

#[tokio::test]
async fn a_process_tells_its_own_conversation_what_it_was_asked_to() {
    let registry = ProcessRegistry::default();
    let mut heard = registry.notifications();
    let start = |command: &str, notify: Notify| {
        let registry = registry.scoped("conv_a");
        let command = command.to_string();
        async move {
            registry
                .spawn(
                    &crate::policy::command::Clearance::unjudged(&command),
                    Path::new("/"),
                    test_env(),
                    notify,
                )
                .await
                .unwrap()
                .session_id
        }
    };
    // Silent unless asked.
    let quiet = start("echo quiet", Notify::default()).await;
    registry
        .wait(&quiet, Some(10), &CancellationToken::new())
        .await;
    // A watched text, then the end when asked for it.
    let watched = start(
        "printf 'warming up\\nserver READY on 8080\\n'; read line",
        Notify {
            on_complete: false,
            watch_patterns: vec!["READY".into()],
        },
    )
    .await;
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(10), heard.recv())
            .await
            .unwrap()
            .unwrap()
    };
    let matched = next().await;
    assert_eq!(
        (
            matched.owner.as_str(),
            matched.process_id.as_str(),
            matched.kind
        ),
        ("conv_a", watched.as_str(), NotificationKind::WatchMatch)
    );
    assert!(
        matched.text.contains("server READY on 8080"),
        "{}",
        matched.text
    );
    registry.kill(&watched, "process.kill").await;
    let ended = start(
        "echo built; exit 3",
        Notify {
            on_complete: true,
            watch_patterns: Vec::new(),
        },
    )
    .await;
    let completed = next().await;
    assert_eq!(
        (completed.process_id.as_str(), completed.kind),
        (ended.as_str(), NotificationKind::Completion)
    );
    assert!(
        completed.text.starts_with(&format!(
            "[IMPORTANT: Background process {ended} exited (exit code 3)."
        )),
        "{}",
        completed.text
    );
    assert!(
        completed.text.ends_with("Output:\nbuilt\n]"),
        "{}",
        completed.text
    );
    assert!(heard.try_recv().is_err(), "nothing from the silent ones");
}

#[tokio::test]
async fn a_watched_line_printed_as_the_process_exits_is_still_reported() {
    let registry = ProcessRegistry::default().scoped("conv_b");
    let mut heard = registry.notifications();
    for _ in 0..20 {
        registry
            .spawn(
                &crate::policy::command::Clearance::unjudged("echo BUILD_OK"),
                Path::new("/"),
                test_env(),
                Notify {
                    on_complete: false,
                    watch_patterns: vec!["BUILD_OK".into()],
                },
            )
            .await
            .unwrap();
        let report = tokio::time::timeout(Duration::from_secs(10), heard.recv())
            .await
            .expect("a report for the last line")
            .unwrap();
        assert_eq!(report.kind, NotificationKind::WatchMatch);
    }
}

#[tokio::test]
async fn completion_events_list_and_errors() {
    let registry = ProcessRegistry::default();
    let mut events = registry.completion_events();
    let id = registry
        .spawn(
            &crate::policy::command::Clearance::unjudged("echo bye; exit 2"),
            Path::new("/"),
            test_env(),
            Notify::default(),
        )
        .await
        .unwrap()
        .session_id;
    let event = tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (event.session_id.as_str(), event.exit_code),
        (id.as_str(), Some(2))
    );
    assert_eq!(event.output, "bye\n");

    let list = call(&registry, json!({"action": "list"})).await;
    let entry = &list["processes"][0];
    assert_eq!(
        (entry["session_id"].as_str(), entry["status"].as_str()),
        (Some(id.as_str()), Some("exited"))
    );
    assert_eq!(entry["exit_code"], 2);
    assert_eq!(entry["cwd"], "/");
    assert!(entry["started_at"].as_str().unwrap().ends_with('Z'));

    assert_eq!(
        call(&registry, json!({"action": "poll"})).await,
        json!({"error": "session_id is required for poll"})
    );
    let unknown = call(&registry, json!({"action": "dance", "session_id": id})).await;
    assert!(
        unknown["error"]
            .as_str()
            .unwrap()
            .starts_with("Unknown process action: dance.")
    );
    assert_eq!(
        call(&registry, json!({"action": "poll", "session_id": 42})).await,
        json!({"status": "not_found", "error": "No process with ID 42"})
    );
}

#[tokio::test]
async fn finished_processes_are_pruned_when_full() {
    let config = RegistryConfig {
        max_processes: 2,
        ..RegistryConfig::default()
    };
    let registry = ProcessRegistry::new(config);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let id = registry
            .spawn(
                &crate::policy::command::Clearance::unjudged("true"),
                Path::new("/"),
                test_env(),
                Notify::default(),
            )
            .await
            .unwrap()
            .session_id;
        registry
            .wait(&id, Some(10), &CancellationToken::new())
            .await;
        ids.push(id);
    }
    let listed: Vec<String> = registry.list()["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["session_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(listed, ids[1..]);
}
