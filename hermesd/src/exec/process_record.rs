//! `$HERMES_HOME/processes.json` (Python Hermes' checkpoint file, with its field names): the
//! background processes running now, rewritten atomically on every spawn and exit. A daemon
//! that dies without stopping them (SIGKILL, OOM, power) leaves their process groups running
//! with nobody reading their output; at the next start each one whose leader is still the same
//! process (the kernel start time recorded at spawn, `/proc/<pid>/stat` field 22, matches, so a
//! reused pid is never signalled) has its group stopped (SIGTERM, grace, SIGKILL) and logged.
//! Entries another program wrote (Python Hermes, which shares the file name and home) are kept
//! as they are and never acted on. A malformed file is moved aside and reported, never fatal.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::process::{ProcessRegistry, Table};
use super::process_session::Session;
use super::shell::terminate_group;

/// The file's name in `HERMES_HOME` (Python Hermes' `CHECKPOINT_PATH`).
pub const FILE_NAME: &str = "processes.json";
/// `recorded_by` of hermesd's entries: only these are ever acted on.
const RECORDED_BY: &str = "hermesd";

/// One running background process, in Python Hermes' field names plus `recorded_by`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The process id the tools use (`proc_…`).
    pub session_id: String,
    pub command: String,
    /// The shell's pid, which is also its process group id.
    pub pid: u32,
    /// Always `host`: the pid is this machine's.
    pub pid_scope: String,
    /// Kernel start time of `pid` in clock ticks since boot; `None` when it could not be read.
    pub host_start_time: Option<u64>,
    pub cwd: String,
    /// Seconds since the Unix epoch.
    pub started_at: f64,
    /// The conversation that owns the process.
    pub task_id: String,
    /// `hermesd`.
    pub recorded_by: String,
}

impl Entry {
    pub fn new(
        session_id: &str,
        command: &str,
        pid: u32,
        host_start_time: Option<u64>,
        cwd: &Path,
        started_at: std::time::SystemTime,
        task_id: &str,
    ) -> Self {
        Self {
            session_id: session_id.to_owned(),
            command: command.to_owned(),
            pid,
            pid_scope: "host".into(),
            host_start_time,
            cwd: cwd.display().to_string(),
            started_at: started_at
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            task_id: task_id.to_owned(),
            recorded_by: RECORDED_BY.into(),
        }
    }
}

/// The kernel start time of `pid` (`/proc/<pid>/stat` field 22), `None` when it is gone.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so count from the last ')'.
    // Field 3 (state) is the first after it, so field 22 is the 20th.
    let after_comm = &stat[stat.rfind(')')? + 1..];
    after_comm.split_whitespace().nth(19)?.parse().ok()
}

/// The record file, written in order: a snapshot taken later is never overwritten by an
/// earlier one that reached the disk last.
#[derive(Debug)]
pub struct Record {
    path: PathBuf,
    /// Generation of the snapshot on disk; held while writing.
    written: Mutex<u64>,
    tickets: AtomicU64,
}

/// What start-up found in the file.
#[derive(Debug, Default)]
pub struct Leftovers {
    /// hermesd's entries whose process is still the one it started: to be stopped.
    pub orphans: Vec<Entry>,
    /// hermesd's entries whose process is gone.
    pub gone: usize,
    /// hermesd's entries whose pid is alive but not provably the recorded process (another
    /// start time, or none recorded): never signalled.
    pub reused: usize,
}

impl Record {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            written: Mutex::new(0),
            tickets: AtomicU64::new(1),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The generation of a snapshot taken now (take it under the lock the snapshot is read under).
    pub fn ticket(&self) -> u64 {
        self.tickets.fetch_add(1, Ordering::Relaxed)
    }

    /// Replace hermesd's entries in the file with `entries` (snapshot `generation`), keeping any
    /// other program's; skipped when a later snapshot is on disk already. Blocking.
    pub fn write(&self, generation: u64, entries: &[Entry]) -> io::Result<()> {
        let mut written = self
            .written
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if generation <= *written {
            return Ok(());
        }
        let mut all: Vec<Value> = read_entries(&self.path)
            .unwrap_or_default()
            .into_iter()
            .filter(|entry| !is_ours(entry))
            .collect();
        for entry in entries {
            all.push(serde_json::to_value(entry).map_err(io::Error::other)?);
        }
        write_atomic(&self.path, &all)?;
        *written = generation;
        Ok(())
    }

    /// Read what a previous daemon left (blocking), moving a malformed file aside. Pids are
    /// checked here: an orphan's leader is alive and started when the record says.
    pub fn leftovers(&self) -> Leftovers {
        let entries = match read_entries(&self.path) {
            Ok(entries) => entries,
            Err(ReadError::Missing) => return Leftovers::default(),
            Err(ReadError::Io(e)) => {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot read the background process record");
                return Leftovers::default();
            }
            Err(ReadError::Malformed(e)) => {
                self.move_aside(&e);
                return Leftovers::default();
            }
        };
        let mut found = Leftovers::default();
        for value in entries.into_iter().filter(is_ours) {
            let entry: Entry = match serde_json::from_value(value) {
                Ok(entry) => entry,
                Err(e) => {
                    tracing::warn!(path = %self.path.display(), error = %e, "skipping a malformed background process entry");
                    continue;
                }
            };
            match (entry.host_start_time, start_time(entry.pid)) {
                (_, None) => found.gone += 1,
                (Some(recorded), Some(now)) if recorded == now && entry.pid > 1 => {
                    found.orphans.push(entry);
                }
                (recorded, Some(now)) => {
                    let why = if recorded.is_some() {
                        "its pid now names another process"
                    } else {
                        "its start time was not recorded, so it cannot be told from another process"
                    };
                    tracing::info!(
                        pid = entry.pid, recorded_start = ?recorded, start = now,
                        command = %entry.command,
                        "not stopping a recorded background process: {why}"
                    );
                    found.reused += 1;
                }
            }
        }
        found
    }

    fn move_aside(&self, error: &str) {
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
        let aside = PathBuf::from(format!("{}.malformed-{stamp}", self.path.display()));
        match std::fs::rename(&self.path, &aside) {
            Ok(()) => tracing::warn!(
                path = %self.path.display(), moved_to = %aside.display(), error,
                "the background process record is malformed; moved aside, no process stopped"
            ),
            Err(e) => tracing::warn!(
                path = %self.path.display(), error, rename_error = %e,
                "the background process record is malformed and cannot be moved aside"
            ),
        }
    }
}

fn is_ours(entry: &Value) -> bool {
    entry.get("recorded_by").and_then(Value::as_str) == Some(RECORDED_BY)
}

enum ReadError {
    Missing,
    Io(io::Error),
    Malformed(String),
}

/// The file's entries: a JSON array of objects.
fn read_entries(path: &Path) -> Result<Vec<Value>, ReadError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::Missing),
        Err(e) => return Err(ReadError::Io(e)),
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(entries)) if entries.iter().all(Value::is_object) => Ok(entries),
        Ok(_) => Err(ReadError::Malformed(
            "expected a JSON array of objects".into(),
        )),
        Err(e) => Err(ReadError::Malformed(e.to_string())),
    }
}

/// Write `entries` to `path` through a temp file in the same directory (mode 0600): written,
/// fsynced, renamed over `path`, and the directory fsynced.
fn write_atomic(path: &Path, entries: &[Value]) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let context = |verb: &str, e: io::Error| {
        io::Error::new(e.kind(), format!("{verb} {}: {e}", path.display()))
    };
    let mut bytes = serde_json::to_vec_pretty(entries).map_err(io::Error::other)?;
    bytes.push(b'\n');
    let mut temp = tempfile::Builder::new()
        .prefix(".processes_")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| context("create a temp file for", e))?;
    temp.write_all(&bytes).map_err(|e| context("write", e))?;
    temp.as_file().sync_all().map_err(|e| context("fsync", e))?;
    temp.persist(path)
        .map_err(|e| context("rename into", e.error))?;
    if let Err(e) = File::open(dir).and_then(|d| d.sync_all()) {
        tracing::debug!(dir = %dir.display(), error = %e, "directory fsync skipped");
    }
    Ok(())
}

/// The running processes as the record should hold them, to be written.
pub(super) struct Snapshot {
    record: Arc<Record>,
    generation: u64,
    entries: Vec<Entry>,
}

impl Snapshot {
    /// Take one under the table lock (so generations follow the table's changes), oldest first.
    pub(super) fn of(record: Option<&Arc<Record>>, table: &Table) -> Option<Self> {
        let record = Arc::clone(record?);
        let mut running: Vec<&Arc<Session>> = table.running.values().collect();
        running.sort_by_key(|s| s.started);
        let entries = running
            .into_iter()
            .map(|s| {
                Entry::new(
                    &s.id,
                    &s.command,
                    s.pid,
                    s.start_time,
                    &s.cwd,
                    s.started_at,
                    &s.owner,
                )
            })
            .collect();
        Some(Self {
            generation: record.ticket(),
            record,
            entries,
        })
    }

    /// Write it on the blocking pool (started now, so dropping the future does not lose the
    /// write); the future waits for it.
    pub(super) fn save(self) -> impl std::future::Future<Output = ()> {
        let task = tokio::task::spawn_blocking(move || self.write_logged());
        async move {
            let _ = task.await;
        }
    }

    /// Write it on the blocking pool without waiting (from code that cannot await).
    pub(super) fn save_detached(self) {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(move || self.write_logged())),
            Err(_) => self.write_logged(),
        }
    }

    fn write_logged(&self) {
        if let Err(e) = self.record.write(self.generation, &self.entries) {
            tracing::warn!(path = %self.record.path().display(), error = %e, "cannot record the running background processes");
        }
    }
}

impl ProcessRegistry {
    /// At daemon start, before any process is spawned: stop the process groups a previous
    /// daemon of this home recorded and left running, and empty the record of them. Returns how
    /// many groups were stopped.
    pub async fn recover_orphans(&self) -> usize {
        let Some(record) = self.shared.record.clone() else {
            return 0;
        };
        let reading = Arc::clone(&record);
        let found = tokio::task::spawn_blocking(move || reading.leftovers())
            .await
            .unwrap_or_default();
        let grace = self.shared.config.kill_grace;
        let mut stops = tokio::task::JoinSet::new();
        for entry in found.orphans {
            let Ok(pgid) = i32::try_from(entry.pid) else {
                continue;
            };
            stops.spawn(async move {
                terminate_group(Pid::from_raw(pgid), grace, || {}).await;
                entry
            });
        }
        let mut stopped = 0;
        while let Some(joined) = stops.join_next().await {
            let Ok(entry) = joined else { continue };
            stopped += 1;
            tracing::warn!(
                pid = entry.pid, id = %entry.session_id, conversation = %entry.task_id,
                command = %entry.command,
                "stopped a background process the previous daemon left running (it did not stop cleanly)"
            );
        }
        if found.gone + found.reused > 0 {
            tracing::info!(
                gone = found.gone,
                pid_reused = found.reused,
                "recorded background processes of the previous daemon already ended"
            );
        }
        let snapshot = Snapshot::of(Some(&record), &self.shared.table());
        if let Some(snapshot) = snapshot {
            snapshot.save().await;
        }
        stopped
    }
}
