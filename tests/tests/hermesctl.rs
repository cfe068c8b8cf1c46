//! Every hermesctl command against the real daemon, with and without `--json`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::{
    io::{BufRead, BufReader},
    process::Stdio,
};

use hermes_tests::{TestHome, binary, home::StopOnDrop, seed};

fn keys(value: &serde_json::Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().expect("object").keys().cloned().collect();
    keys.sort();
    keys
}

fn has_keys(value: &serde_json::Value, wanted: &[&str]) {
    let present = keys(value);
    for key in wanted {
        assert!(
            present.iter().any(|k| k == key),
            "missing `{key}` in {value}"
        );
    }
}

#[test]
fn status_and_daemon_lifecycle() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);

    let out = home.ctl(&["status"]).ok();
    assert!(
        out.starts_with(&format!(
            "hermesd {} (protocol {})",
            hermes_proto::VERSION,
            hermes_proto::PROTOCOL_VERSION
        )),
        "{out}"
    );
    assert!(out.contains(&home.socket().display().to_string()), "{out}");

    let status = home.ctl(&["status", "--json"]).json();
    has_keys(
        &status,
        &[
            "version",
            "protocol_version",
            "pid",
            "uptime_s",
            "home",
            "socket",
            "live_sessions",
            "model",
            "db_bytes",
        ],
    );
    assert_eq!(status["protocol_version"], hermes_proto::PROTOCOL_VERSION);
    let pid = status["pid"].as_u64().unwrap();

    let out = home.ctl(&["daemon", "status"]).ok();
    assert!(out.contains(&format!("pid {pid}")), "{out}");
    assert_eq!(home.ctl(&["daemon", "status", "--json"]).json()["pid"], pid);

    let out = home.ctl(&["daemon", "start"]).ok();
    assert!(out.contains("already running"), "{out}");
    assert_eq!(
        home.ctl(&["daemon", "start", "--json"]).json()["started"],
        false
    );

    let out = home.ctl(&["daemon", "stop"]).ok();
    assert_eq!(out.trim(), format!("hermesd (pid {pid}) stopped"));
    // stop returns after the process has exited: its pidfile lock is free and nothing answers.
    let not_running = home.ctl(&["daemon", "status"]);
    assert_eq!(not_running.code(), Some(3));
    assert!(not_running.stdout().contains("not running"));
    let not_running = home.ctl(&["daemon", "status", "--json"]);
    assert_eq!(not_running.code(), Some(3));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&not_running.stdout()).unwrap()["running"],
        false
    );
    assert!(!home.socket().exists());

    assert_eq!(
        home.ctl(&["daemon", "stop"]).ok().trim(),
        "hermesd is not running"
    );
    assert_eq!(
        home.ctl(&["daemon", "stop", "--json"]).json()["stopped"],
        false
    );

    assert!(
        home.ctl(&["daemon", "start"])
            .ok()
            .starts_with("hermesd started (pid ")
    );
    let first = home.ctl(&["status", "--json"]).json()["pid"]
        .as_u64()
        .unwrap();
    let restarted = home.ctl(&["daemon", "restart", "--json"]).json();
    assert_eq!(restarted["started"], true);
    assert_ne!(restarted["pid"].as_u64().unwrap(), first);
    assert!(
        home.ctl(&["daemon", "restart"])
            .ok()
            .starts_with("hermesd started")
    );
    let stopped = home.ctl(&["daemon", "stop", "--json"]).json();
    assert_eq!(stopped["stopped"], true);
}

#[test]
fn sessions_list_show_rm() {
    let home = TestHome::new();
    let cli = seed::sessions(home.path(), 2, "cli", 4);
    let cron = seed::sessions(home.path(), 1, "cron", 0);
    let _stop = StopOnDrop(&home);

    let table = home.ctl(&["sessions", "list"]).ok();
    assert_eq!(table.lines().count(), 4, "header + 3 rows:\n{table}");
    assert!(table.lines().next().unwrap().starts_with("ID"));
    assert!(table.contains(&cli[0]) && table.contains(&cron[0]));

    let list = home.ctl(&["sessions", "list", "--json"]).json();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    has_keys(
        &rows[0],
        &[
            "id",
            "title",
            "source",
            "state",
            "clients",
            "created_at",
            "updated_at",
            "message_count",
            "parent_session_id",
        ],
    );
    let created = rows[0]["created_at"].as_str().unwrap();
    assert!(
        created.ends_with('Z') && created.contains('T'),
        "RFC 3339 UTC: {created}"
    );
    assert_eq!(rows[0]["state"], "stored");

    let only_cron = home
        .ctl(&["sessions", "list", "--source", "cron", "--json"])
        .json();
    assert_eq!(only_cron.as_array().unwrap().len(), 1);
    assert_eq!(only_cron[0]["id"], cron[0].as_str());
    let limited = home
        .ctl(&["sessions", "list", "--limit", "2", "--json"])
        .json();
    assert_eq!(limited.as_array().unwrap().len(), 2);

    let shown = home.ctl(&["sessions", "show", &cli[1]]).ok();
    assert!(shown.contains(&format!("session {}", cli[1])), "{shown}");
    assert!(shown.contains("message 3 of session 1"), "{shown}");
    let doc = home.ctl(&["sessions", "show", &cli[1], "--json"]).json();
    assert_eq!(doc["id"], cli[1].as_str());
    let messages = doc["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    has_keys(
        &messages[1],
        &[
            "role",
            "content",
            "tool_calls",
            "tool_call_id",
            "name",
            "created_at",
        ],
    );
    assert_eq!(messages[1]["role"], "assistant");

    assert!(
        home.ctl(&["sessions", "rm", &cli[0]])
            .ok()
            .contains("deleted session")
    );
    let gone = home.ctl(&["sessions", "show", &cli[0]]).err();
    assert_eq!(
        gone.trim(),
        format!(
            "hermesctl: no session `{}` (see `hermesctl sessions list`)",
            cli[0]
        )
    );
    let removed = home.ctl(&["sessions", "rm", &cli[1], "--json"]).json();
    assert_eq!(removed["deleted"], 1);
    assert_eq!(
        home.ctl(&["sessions", "list", "--json"])
            .json()
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(
        home.ctl(&["sessions", "rm", "nope"])
            .err()
            .contains("no session `nope`")
    );
}

#[test]
fn broken_pipe_exits_quietly() {
    let home = TestHome::new();
    seed::sessions(home.path(), 2000, "cli", 0);
    let _stop = StopOnDrop(&home);
    home.ctl(&["daemon", "start"]).ok();
    let mut child = home
        .command(&binary("hermesctl"))
        .args(["sessions", "list", "--limit", "2000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("ID"));
    // the reader is gone now (like `| head -1`); 2000 rows do not fit in a pipe buffer
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}", output.status);
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[test]
fn config_path_get_set_keep_comments_and_reload() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let path = home.path().join("config.yaml");
    assert_eq!(
        home.ctl(&["config", "path"]).ok().trim(),
        path.display().to_string()
    );
    assert_eq!(
        home.ctl(&["config", "path", "--json"]).json()["path"],
        path.display().to_string()
    );

    home.write(
        "config.yaml",
        "# my settings\nmodel:\n  default: old   # keep me\n",
    );
    let missing = home.ctl(&["config", "get", "model.provider"]);
    assert_eq!(missing.code(), Some(1));
    assert!(
        missing.stderr().contains("is not set"),
        "{}",
        missing.stderr()
    );

    // Without a daemon: a direct edit, no start.
    let out = home.ctl(&["config", "set", "model.default", "gpt-4o"]).ok();
    assert!(out.contains("not running"), "{out}");
    assert!(
        !home.socket().exists(),
        "config set never starts the daemon"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "# my settings\nmodel:\n  default: gpt-4o   # keep me\n"
    );
    assert_eq!(
        home.ctl(&["config", "get", "model.default"]).ok().trim(),
        "gpt-4o"
    );
    let got = home
        .ctl(&["config", "get", "model.default", "--json"])
        .json();
    assert_eq!(got["value"], "gpt-4o");

    // With a daemon: the edit is reloaded.
    home.ctl(&["daemon", "start"]).ok();
    let set = home
        .ctl(&["config", "set", "model.provider", "openrouter", "--json"])
        .json();
    assert_eq!(set["reloaded"], true);
    assert_eq!(
        home.ctl(&["status", "--json"]).json()["model"],
        "openrouter:gpt-4o"
    );
    assert!(
        home.ctl(&["config", "set", "daemon.drain_timeout", "7"])
            .ok()
            .contains("reloaded")
    );
    assert_eq!(
        home.ctl(&["config", "get", "daemon.drain_timeout", "--json"])
            .json()["value"],
        7
    );

    // A value the daemon cannot use: written, reloaded, and the notice said where it was typed
    // (stderr in text mode, inside the document with --json).
    let notice = "agent.max_turns: \"lots\" is not a whole number; using 90";
    let bad = home.ctl(&["config", "set", "agent.max_turns", "lots"]);
    assert!(
        bad.ok().contains("reloaded it, with 1 notice"),
        "{}",
        bad.stdout()
    );
    assert!(bad.stderr().contains(notice), "{}", bad.stderr());
    assert!(!bad.stdout().contains(notice), "{}", bad.stdout());
    let bad = home
        .ctl(&["config", "set", "agent.max_turns", "lots", "--json"])
        .json();
    assert_eq!(bad["notices"], serde_json::json!([notice]), "{bad}");
    let good = home
        .ctl(&["config", "set", "agent.max_turns", "12", "--json"])
        .json();
    assert_eq!(good["notices"], serde_json::json!([]), "{good}");
}

#[test]
fn a_config_that_stops_the_daemon_can_be_repaired() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.write("config.yaml", "daemon:\n  drain_timeout: soon\n");
    let err = home.ctl(&["status"]).err();
    let config = home.path().join("config.yaml").display().to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "hermesctl: hermesd is not running and could not be started: {config} line 2"
        )),
        "{err}"
    );
    home.ctl(&["config", "set", "daemon.drain_timeout", "5"])
        .ok();
    home.ctl(&["status"]).ok();

    home.write("config.yaml", "model: [broken\n");
    let err = home.ctl(&["config", "set", "model.default", "x"]).err();
    assert!(err.contains("does not parse at line"), "{err}");
}

#[test]
fn profiles_and_runtime_dir_choose_home_and_socket() {
    let home = TestHome::new();
    let run_dir = home.path().join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    let ctl = |args: &[&str], runtime: bool| {
        let mut command = home.command(&binary("hermesctl"));
        command.env_remove("HERMES_HOME").args(args);
        if runtime {
            command.env("XDG_RUNTIME_DIR", &run_dir);
        }
        hermes_tests::home::CtlOutput(command.output().unwrap())
    };
    let profile_home = home.user_home().join(".hermes/profiles/work");

    let status = ctl(&["-p", "work", "status", "--json"], true).json();
    assert_eq!(status["home"], profile_home.display().to_string());
    assert_eq!(status["profile"], "work");
    assert_eq!(
        status["socket"],
        run_dir.join("hermes/work.sock").display().to_string()
    );
    let mode = std::fs::metadata(run_dir.join("hermes")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o700
    );
    ctl(&["-p", "work", "daemon", "stop"], true).ok();

    // No runtime dir: the socket lives in the profile's home.
    let status = ctl(&["--profile", "work", "status", "--json"], false).json();
    assert_eq!(
        status["socket"],
        profile_home.join("hermesd.sock").display().to_string()
    );
    ctl(&["-p", "work", "daemon", "stop"], false).ok();

    let bad = ctl(&["-p", "../etc", "status"], false).err();
    assert!(bad.contains("invalid profile name"), "{bad}");
}

#[test]
fn completions_and_man_pages() {
    let home = TestHome::new();
    let bash = home.ctl(&["completions", "bash"]).ok();
    assert!(
        bash.contains("_hermesctl") && bash.contains("sessions"),
        "bash completion"
    );
    assert!(
        home.ctl(&["completions", "zsh"])
            .ok()
            .contains("#compdef hermesctl")
    );
    let man = home.ctl(&["man"]).ok();
    assert!(
        man.starts_with(".ie") || man.contains(".TH hermesctl"),
        "{}",
        &man[..200.min(man.len())]
    );
    let dir = home.path().join("man");
    home.ctl(&["man", "--dir", dir.to_str().unwrap()]).ok();
    assert!(dir.join("hermesctl.1").is_file());
    assert!(dir.join("hermesctl-sessions-list.1").is_file());
    assert!(!home.socket().exists(), "docs need no daemon");
}
