//! The registry of background processes started by `terminal` with
//! `background: true` (Python's `tools/process_registry.py`): spawning,
//! completion bookkeeping, killing, pruning. Per-process state and its output
//! reader live in `process_session.rs`; the tool actions in `process_tool.rs`.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};

use super::output::RollingText;
use super::process_notify::{
    NotificationKind, Notify, ProcessNotification, Watcher, completion_text,
};
use super::process_record::{self, Record, Snapshot};
use super::process_session::{Session, SessionState, Stdin, drive};
use super::shell::{EXIT_DRAIN_MAX, resolve_safe_cwd_async, spawn_shell, terminate_group};
use crate::policy::command::Clearance;
// Running background processes one conversation may have until the configuration says
// (`terminal.max_background`).
use crate::config::settings::DEFAULT_MAX_BACKGROUND;
use crate::policy::strip_ansi;

/// Limits of a [`ProcessRegistry`]; the defaults are Python's.
#[derive(Debug, Clone)]
pub struct RegistryConfig {
    /// Output kept per process, in characters (200,000).
    pub max_output_chars: usize,
    /// Finished processes started longer ago than this are pruned (30 min).
    pub finished_ttl: Duration,
    /// Beyond this many tracked processes the oldest finished one is pruned (64).
    pub max_processes: usize,
    /// Upper bound for `wait` in seconds (`TERMINAL_TIMEOUT`, 180).
    pub max_wait_secs: u64,
    /// SIGTERM-to-SIGKILL grace when killing (2 s).
    pub kill_grace: Duration,
    /// Where the running processes are recorded for the next start
    /// (`$HERMES_HOME/processes.json`); `None`: nowhere.
    pub record: Option<PathBuf>,
}

impl Default for RegistryConfig {
    fn default() -> Self {
        Self {
            max_output_chars: 200_000,
            finished_ttl: Duration::from_secs(1800),
            max_processes: 64,
            max_wait_secs: 180,
            kill_grace: Duration::from_secs(2),
            record: None,
        }
    }
}

/// Who kills the processes of a conversation that goes, or of a daemon that stops.
const KILL_ALL: &str = "kill_all";

/// A started background process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spawned {
    /// `proc_` + 12 hex digits.
    pub session_id: String,
    /// The shell's pid (also its process group).
    pub pid: u32,
}

/// Sent on [`ProcessRegistry::completion_events`] when a process finishes.
#[derive(Debug, Clone, Serialize)]
pub struct CompletionEvent {
    /// The process id.
    pub session_id: String,
    /// The command line.
    pub command: String,
    /// Exit code; -15 when killed.
    pub exit_code: Option<i32>,
    /// `exited` or `killed`.
    pub completion_reason: &'static str,
    /// Who killed it (`process.kill`, `kill_all`), empty otherwise.
    pub termination_source: String,
    /// Last 2,000 characters of output, ANSI-stripped.
    pub output: String,
}

#[derive(Default)]
pub(super) struct Table {
    pub(super) running: HashMap<String, Arc<Session>>,
    pub(super) finished: HashMap<String, Arc<Session>>,
    pub(super) consumed: HashSet<String>,
}

pub(super) struct Shared {
    pub(super) config: RegistryConfig,
    table: Mutex<Table>,
    /// The record file, when [`RegistryConfig::record`] names one.
    pub(super) record: Option<Arc<Record>>,
    completions: broadcast::Sender<CompletionEvent>,
    /// What processes report to their conversations (`notify_on_complete`, `watch_patterns`).
    notifications: broadcast::Sender<ProcessNotification>,
    id_counter: AtomicU64,
    /// `terminal.max_background`: running processes per owner.
    max_per_owner: std::sync::atomic::AtomicUsize,
}

impl Shared {
    pub(super) fn table(&self) -> MutexGuard<'_, Table> {
        self.table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Background processes of the daemon. Cheap to clone (shared state). A registry
/// [`scoped`](ProcessRegistry::scoped) to a conversation sees only that conversation's
/// processes: another session's are "not found" to it, whatever id it guesses.
#[derive(Clone)]
pub struct ProcessRegistry {
    pub(super) shared: Arc<Shared>,
    owner: Option<Arc<str>>,
}

impl Default for ProcessRegistry {
    fn default() -> Self {
        Self::new(RegistryConfig::default())
    }
}

pub(super) fn not_found(session_id: &str) -> Value {
    json!({"status": "not_found", "error": format!("No process with ID {session_id}")})
}

impl ProcessRegistry {
    /// An empty registry.
    pub fn new(config: RegistryConfig) -> Self {
        let (completions, _) = broadcast::channel(64);
        let (notifications, _) = broadcast::channel(64);
        let record = config
            .record
            .clone()
            .map(|path| Arc::new(Record::new(path)));
        Self {
            shared: Arc::new(Shared {
                config,
                table: Mutex::new(Table::default()),
                record,
                completions,
                notifications,
                id_counter: AtomicU64::new(0),
                max_per_owner: std::sync::atomic::AtomicUsize::new(DEFAULT_MAX_BACKGROUND),
            }),
            owner: None,
        }
    }

    /// The processes of conversation `owner`: what its turns may see and start.
    pub fn scoped(&self, owner: &str) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            owner: Some(Arc::from(owner)),
        }
    }

    /// Set `terminal.max_background` (running processes per conversation; at least 1).
    pub fn set_max_per_owner(&self, max: usize) {
        self.shared
            .max_per_owner
            .store(max.max(1), Ordering::Relaxed);
    }

    /// Whether this registry may see `session` (an unscoped one sees all).
    pub(super) fn sees(&self, session: &Session) -> bool {
        self.owner
            .as_deref()
            .is_none_or(|owner| owner == &*session.owner)
    }

    /// Receives an event whenever a background process finishes.
    pub fn completion_events(&self) -> broadcast::Receiver<CompletionEvent> {
        self.shared.completions.subscribe()
    }

    /// Receives what background processes report to the conversations that started them. A
    /// receiver that falls 64 messages behind loses the oldest.
    pub fn notifications(&self) -> broadcast::Receiver<ProcessNotification> {
        self.shared.notifications.subscribe()
    }

    /// Scan a new chunk of `session`'s output for its watched texts; announce a match due now.
    pub(super) fn watch_output(&self, session: &Session, chunk: &str) {
        let due = session
            .state()
            .watch
            .scan(&session.id, &session.command, chunk, Instant::now());
        if let Some((kind, text)) = due {
            self.notify(session, kind, text);
        }
    }

    fn notify(&self, session: &Session, kind: NotificationKind, text: String) {
        // No subscriber (a registry outside the daemon) is fine.
        let _ = self.shared.notifications.send(ProcessNotification {
            owner: session.owner.to_string(),
            process_id: session.id.clone(),
            kind,
            text,
        });
    }

    /// True once `wait`, `log` or `kill` has shown the agent the process's
    /// final output, so a completion notification would be redundant.
    pub fn is_completion_consumed(&self, session_id: &str) -> bool {
        self.shared.table().consumed.contains(session_id)
    }

    /// Number of processes still running.
    pub fn count_running(&self) -> usize {
        self.shared.table().running.len()
    }

    /// Whether a process this registry sees is still running and started less than `max_age`
    /// ago (`None`: whatever its age).
    pub fn has_running_younger_than(&self, max_age: Option<std::time::Duration>) -> bool {
        self.shared
            .table()
            .running
            .values()
            .filter(|s| self.sees(s))
            .any(|s| max_age.is_none_or(|age| s.started.elapsed() < age))
    }

    pub(super) fn get(&self, session_id: &str) -> Option<Arc<Session>> {
        let table = self.shared.table();
        table
            .running
            .get(session_id)
            .or_else(|| table.finished.get(session_id))
            .filter(|s| self.sees(s))
            .cloned()
    }

    pub(super) fn mark_consumed(&self, session_id: &str) {
        self.shared.table().consumed.insert(session_id.to_owned());
    }

    /// Starts `bash -c command` in `cwd` with `env` (plus
    /// `PYTHONUNBUFFERED=1`) in its own process group, stdin a pipe, output
    /// captured into a bounded buffer; `notify` says what it reports unasked.
    /// Nothing starts without the command policy's [`Clearance`]; the command is the one it
    /// cleared.
    pub async fn spawn(
        &self,
        cleared: &Clearance,
        cwd: &Path,
        mut env: Vec<(OsString, OsString)>,
        notify: Notify,
    ) -> io::Result<Spawned> {
        let Some(command) = cleared.command() else {
            return Err(io::Error::other("no command was cleared to run"));
        };
        let owner: Arc<str> = self.owner.clone().unwrap_or_else(|| Arc::from(""));
        let max = self.shared.max_per_owner.load(Ordering::Relaxed);
        let running = self.owned_running().len();
        if running >= max {
            return Err(io::Error::other(format!(
                "this session already has {running} background processes running (the limit, \
                 terminal.max_background, is {max}); kill one with process action=kill first"
            )));
        }
        let cwd = resolve_safe_cwd_async(cwd.to_path_buf()).await;
        env.retain(|(k, _)| k != "PYTHONUNBUFFERED");
        env.push(("PYTHONUNBUFFERED".into(), "1".into()));
        let shell = spawn_shell(command, &cwd, &env, true)?;
        let pid = u32::try_from(shell.pgid.as_raw()).unwrap_or(0);
        // Read before the shell can be reaped (nothing waits for it yet), and without an await
        // between spawning and tracking it: /proc is the kernel's, read from memory.
        let start_time = process_record::start_time(pid);
        let (done, _) = watch::channel(false);
        let (session, snapshot) = {
            let mut table = self.shared.table();
            prune(&mut table, &self.shared.config);
            let session = Arc::new(Session {
                id: self.new_id(&table),
                owner,
                command: command.to_owned(),
                cwd,
                pid,
                pgid: shell.pgid,
                start_time,
                started_at: SystemTime::now(),
                started: Instant::now(),
                state: Mutex::new(SessionState {
                    output: RollingText::new(self.shared.config.max_output_chars),
                    exited: false,
                    exit_code: None,
                    completion_reason: "exited",
                    termination_source: String::new(),
                    kill_source: None,
                    watch: Watcher::new(notify),
                }),
                done,
                stdin: tokio::sync::Mutex::new(Stdin {
                    pipe: shell.stdin,
                    pending: String::new(),
                }),
            });
            table
                .running
                .insert(session.id.clone(), Arc::clone(&session));
            let snapshot = Snapshot::of(self.shared.record.as_ref(), &table);
            (session, snapshot)
        };
        let spawned = Spawned {
            session_id: session.id.clone(),
            pid,
        };
        tokio::spawn(drive(self.clone(), session, shell.child, shell.output));
        // On disk before the model learns of the process.
        if let Some(snapshot) = snapshot {
            snapshot.save().await;
        }
        Ok(spawned)
    }

    fn new_id(&self, table: &Table) -> String {
        loop {
            let mut hasher = std::hash::RandomState::new().build_hasher();
            hasher.write_u64(self.shared.id_counter.fetch_add(1, Ordering::Relaxed));
            let nanos = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            hasher.write_u128(nanos);
            let id = format!("proc_{:012x}", hasher.finish() & 0xffff_ffff_ffff);
            if !table.running.contains_key(&id) && !table.finished.contains_key(&id) {
                return id;
            }
        }
    }

    /// Marks the session finished (once) and announces it.
    pub(super) fn finish(&self, session: &Arc<Session>, natural_exit: Option<i32>) {
        let event = {
            let mut state = session.state();
            if state.exited {
                return;
            }
            state.exited = true;
            if let Some(source) = state.kill_source.take() {
                state.exit_code = Some(-15);
                state.completion_reason = "killed";
                state.termination_source = source;
            } else {
                state.exit_code = Some(natural_exit.unwrap_or(-1));
                state.completion_reason = "exited";
            }
            CompletionEvent {
                session_id: session.id.clone(),
                command: session.command.clone(),
                exit_code: state.exit_code,
                completion_reason: state.completion_reason,
                termination_source: state.termination_source.clone(),
                output: strip_ansi(state.output.last(2000)).into_owned(),
            }
        };
        // A process stopped with its conversation (deleted) or the daemon has nobody to tell.
        if session.state().watch.reports_completion() && event.termination_source != KILL_ALL {
            let text = completion_text(
                &session.id,
                &session.command,
                event.exit_code,
                event.completion_reason,
                &event.termination_source,
                &event.output,
            );
            self.notify(session, NotificationKind::Completion, text);
        }
        let snapshot = {
            let mut table = self.shared.table();
            if let Some(moved) = table.running.remove(&session.id) {
                table.finished.insert(session.id.clone(), moved);
            }
            Snapshot::of(self.shared.record.as_ref(), &table)
        };
        if let Some(snapshot) = snapshot {
            snapshot.save_detached();
        }
        session.done.send_replace(true);
        // No subscribers is fine.
        let _ = self.shared.completions.send(event);
    }

    /// Kills a process's whole group (SIGTERM, grace, SIGKILL) and returns
    /// Python's `kill` result. `source` is recorded as `termination_source`.
    pub async fn kill(&self, session_id: &str, source: &str) -> Value {
        self.kill_inner(session_id, source, true).await
    }

    async fn kill_inner(&self, session_id: &str, source: &str, consume: bool) -> Value {
        let Some(session) = self.get(session_id) else {
            return not_found(session_id);
        };
        {
            let mut state = session.state();
            if state.exited {
                let result = json!({
                    "status": "already_exited",
                    "command": session.command,
                    "exit_code": state.exit_code,
                    "completion_reason": state.completion_reason,
                    "termination_source": state.termination_source,
                    "output": strip_ansi(state.output.last(2000)),
                });
                drop(state);
                if consume {
                    self.mark_consumed(session_id);
                }
                return result;
            }
            state.kill_source = Some(source.to_owned());
        }
        terminate_group(session.pgid, self.shared.config.kill_grace, || {}).await;
        // The reader finishes the session once the shell is reaped and its
        // output drained; force it if that somehow does not happen.
        let mut done = session.done.subscribe();
        let patience = EXIT_DRAIN_MAX + Duration::from_secs(1);
        let _ = tokio::time::timeout(patience, done.wait_for(|finished| *finished)).await;
        self.finish(&session, None);
        if consume {
            self.mark_consumed(session_id);
        }
        let state = session.state();
        json!({
            "status": "killed",
            "session_id": session.id,
            "completion_reason": state.completion_reason,
            "termination_source": state.termination_source,
            "output": strip_ansi(state.output.last(2000)),
        })
    }

    /// Ids of the running processes this registry sees.
    fn owned_running(&self) -> Vec<String> {
        self.shared
            .table()
            .running
            .values()
            .filter(|s| self.sees(s))
            .map(|s| s.id.clone())
            .collect()
    }

    /// Forget the finished processes this registry sees (its conversation is gone).
    pub fn forget_finished(&self) {
        let mut table = self.shared.table();
        table.finished.retain(|_, s| !self.sees(s));
        let Table {
            running,
            finished,
            consumed,
        } = &mut *table;
        consumed.retain(|id| running.contains_key(id) || finished.contains_key(id));
    }

    /// Kills every running process this registry sees — all of them unscoped (daemon
    /// shutdown), a conversation's when scoped (it was deleted); returns how many.
    pub async fn kill_all(&self) -> usize {
        let ids = self.owned_running();
        let mut kills = tokio::task::JoinSet::new();
        for id in ids {
            let registry = self.clone();
            kills.spawn(async move { registry.kill_inner(&id, KILL_ALL, false).await });
        }
        let mut killed = 0;
        while let Some(result) = kills.join_next().await {
            if let Ok(value) = result
                && matches!(value["status"].as_str(), Some("killed" | "already_exited"))
            {
                killed += 1;
            }
        }
        // The exits were recorded in the background; make the last state durable now (the
        // daemon may be about to exit).
        let snapshot = Snapshot::of(self.shared.record.as_ref(), &self.shared.table());
        if let Some(snapshot) = snapshot {
            snapshot.save().await;
        }
        killed
    }
}

/// Drops finished sessions older than the TTL, then the oldest finished one
/// when the registry is full (Python's `_prune_if_needed`).
fn prune(table: &mut Table, config: &RegistryConfig) {
    let expired: Vec<String> = table
        .finished
        .iter()
        .filter(|(_, s)| s.started.elapsed() > config.finished_ttl)
        .map(|(id, _)| id.clone())
        .collect();
    for id in expired {
        table.finished.remove(&id);
    }
    if table.running.len() + table.finished.len() >= config.max_processes {
        let oldest = table
            .finished
            .iter()
            .min_by_key(|(_, s)| s.started)
            .map(|(id, _)| id.clone());
        if let Some(id) = oldest {
            table.finished.remove(&id);
        }
    }
    let Table {
        running,
        finished,
        consumed,
    } = table;
    consumed.retain(|id| running.contains_key(id) || finished.contains_key(id));
}
