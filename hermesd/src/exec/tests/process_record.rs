//! The background process record (`processes.json`): written atomically and in order, other
//! programs' entries kept, a malformed file moved aside, and at start only processes that are
//! still the recorded ones stopped.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::super::process_record::{Entry, Record, start_time};
use super::super::{ProcessRegistry, RegistryConfig};

fn entry(id: &str, pid: u32, host_start_time: Option<u64>) -> Entry {
    Entry::new(
        id,
        "sleep 1000",
        pid,
        host_start_time,
        Path::new("/tmp"),
        // Exact in binary, so the seconds survive the JSON round trip unchanged.
        SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_500),
        "conv_1",
    )
}

fn read(path: &Path) -> Vec<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A Python Hermes entry (no `recorded_by`), as its `_write_checkpoint` writes them.
fn python_entry() -> Value {
    json!({"session_id": "proc_python", "command": "npm run dev", "pid": 4242,
           "pid_scope": "host", "host_start_time": 17, "cwd": "/srv", "started_at": 1.5,
           "task_id": "", "session_key": "telegram:1", "watch_patterns": []})
}

#[test]
fn entries_round_trip_in_order_and_other_programs_entries_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("processes.json");
    std::fs::write(&path, serde_json::to_string(&[python_entry()]).unwrap()).unwrap();
    let record = Record::new(path.clone());
    let first = entry("proc_000000000001", 100, Some(5));
    let second = entry("proc_000000000002", 200, None);

    let early = record.ticket();
    let late = record.ticket();
    record
        .write(late, &[first.clone(), second.clone()])
        .unwrap();
    // A snapshot taken before, reaching the disk after, changes nothing.
    record.write(early, &[]).unwrap();

    let on_disk = read(&path);
    assert_eq!(on_disk.len(), 3, "{on_disk:?}");
    assert_eq!(on_disk[0], python_entry(), "kept as it was");
    let ours: Vec<Entry> = on_disk[1..]
        .iter()
        .map(|v| serde_json::from_value(v.clone()).unwrap())
        .collect();
    assert_eq!(ours, [first, second]);
    assert_eq!(on_disk[1]["recorded_by"], "hermesd");
    assert_eq!(on_disk[1]["pid_scope"], "host");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(leftovers.len(), 1, "no temp file left: {leftovers:?}");

    record.write(record.ticket(), &[]).unwrap();
    assert_eq!(read(&path), [python_entry()], "ours emptied, Python's kept");
}

#[test]
fn a_malformed_record_is_moved_aside_and_acts_on_nothing() {
    for text in ["{not json", r#"{"pid": 1}"#, "[1, 2]"] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("processes.json");
        std::fs::write(&path, text).unwrap();
        let found = Record::new(path.clone()).leftovers();
        assert!(found.orphans.is_empty());
        assert!(!path.exists(), "{text}: moved aside");
        let aside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(aside.len(), 1);
        assert!(
            aside[0]
                .to_string_lossy()
                .contains("processes.json.malformed-"),
            "{aside:?}"
        );
        assert_eq!(std::fs::read_to_string(&aside[0]).unwrap(), text);
    }
}

#[test]
fn start_time_is_field_22_of_proc_stat() {
    let me = std::process::id();
    let stat = std::fs::read_to_string(format!("/proc/{me}/stat")).unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
    let field_22: u64 = after_comm.split(' ').nth(19).unwrap().parse().unwrap();
    assert_eq!(start_time(me), Some(field_22));
    assert_eq!(start_time(u32::MAX), None);
}

/// `sleep 1000` in a process group of its own, as the registry starts them.
fn own_group_sleeper() -> std::process::Child {
    std::process::Command::new("sleep")
        .arg("1000")
        .process_group(0)
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn at_start_only_processes_that_are_still_the_recorded_ones_are_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("processes.json");
    let mut orphan = own_group_sleeper();
    let mut stranger = own_group_sleeper();
    let orphan_start = start_time(orphan.id());
    let stranger_start = start_time(stranger.id()).unwrap();
    let mut gone = own_group_sleeper();
    let gone_pid = gone.id();
    gone.kill().unwrap();
    gone.wait().unwrap();
    let mut all = vec![python_entry()];
    for recorded in [
        entry("proc_orphan", orphan.id(), orphan_start),
        // The pid was reused: the process there now started at another time.
        entry("proc_reused", stranger.id(), Some(stranger_start + 1)),
        // Not known when it started: never signalled either.
        entry("proc_unknown", stranger.id(), None),
        entry("proc_gone", gone_pid, Some(1)),
    ] {
        all.push(serde_json::to_value(recorded).unwrap());
    }
    std::fs::write(&path, serde_json::to_string(&all).unwrap()).unwrap();

    let found = Record::new(path.clone()).leftovers();
    assert_eq!(
        (found.orphans.len(), found.reused, found.gone),
        (1, 2, 1),
        "{found:?}"
    );

    let registry = ProcessRegistry::new(RegistryConfig {
        record: Some(path.clone()),
        kill_grace: Duration::from_millis(500),
        ..RegistryConfig::default()
    });
    assert_eq!(registry.recover_orphans().await, 1);
    let status = orphan.wait().unwrap();
    assert_eq!(status.signal(), Some(libc_sigterm()), "{status:?}");
    assert!(
        stranger.try_wait().unwrap().is_none(),
        "a reused pid is never signalled"
    );
    assert_eq!(
        read(&path),
        [python_entry()],
        "the record holds no process of ours after recovery"
    );
    stranger.kill().unwrap();
    stranger.wait().unwrap();
}

fn libc_sigterm() -> i32 {
    nix::sys::signal::Signal::SIGTERM as i32
}
