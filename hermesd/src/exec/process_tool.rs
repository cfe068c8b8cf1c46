//! The `process` tool's actions on background processes, with Python's
//! names and result shapes: list, poll, log, wait, kill, write, submit, close.

use std::path::Path;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use super::output::split_lines;
use super::process::{ProcessRegistry, not_found};
use super::terminal::lenient_int;
use crate::policy::command::{Clearance, complete_commands};

/// The most input held back waiting to complete a command.
const MAX_PENDING_STDIN: usize = 64 * 1024;

/// Who decides whether a write to a background process's stdin may go ahead: the tool layer,
/// which judges it with the command policy and asks the user when the policy says so.
#[async_trait]
pub trait StdinGate: Send + Sync {
    /// Clear writing `data` after `pending` (held back so far) to the stdin of the process
    /// started with `command` in `cwd`; `Err` is the refusal the model is told.
    async fn clear(
        &self,
        command: &str,
        cwd: &Path,
        pending: &str,
        data: &str,
    ) -> Result<Clearance, String>;
}
use crate::policy::strip_ansi;

/// How long a stdin write may block on a process that is not reading.
const STDIN_WRITE_TIMEOUT: Duration = Duration::from_secs(10);
const ACTIONS: &str = "list, poll, log, wait, kill, write, submit, close";

/// True for read-only actions the agent may repeat while waiting (the loop
/// guard must not count them as a stuck loop).
pub fn is_polling_action(action: &str) -> bool {
    matches!(action, "poll" | "wait" | "log" | "list")
}

fn tool_error(message: String) -> Value {
    json!({"error": message})
}

/// `YYYY-MM-DDTHH:MM:SSZ` (UTC) for a wall-clock time.
fn iso_utc(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Civil-from-days (H. Hinnant).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Python slice bounds `[offset : offset + limit]` over `len` items.
fn slice_bounds(len: usize, offset: i64, limit: i64) -> (usize, usize) {
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let clamp = |i: i64| -> usize {
        let i = if i < 0 {
            (len_i + i).max(0)
        } else {
            i.min(len_i)
        };
        usize::try_from(i).unwrap_or(0)
    };
    let start = clamp(offset);
    let stop = clamp(offset.saturating_add(limit));
    (start, stop.max(start))
}

impl ProcessRegistry {
    /// `list`: running and recently finished processes.
    pub fn list(&self) -> Value {
        let sessions: Vec<_> = {
            let table = self.shared.table();
            table
                .running
                .values()
                .chain(table.finished.values())
                .filter(|s| self.sees(s))
                .cloned()
                .collect()
        };
        let mut sessions = sessions;
        sessions.sort_by_key(|s| s.started);
        let processes: Vec<Value> = sessions
            .iter()
            .map(|s| {
                let state = s.state();
                let mut entry = json!({
                    "session_id": s.id,
                    "command": first_chars(&s.command, 200),
                    "cwd": s.cwd.to_string_lossy(),
                    "pid": s.pid,
                    "started_at": iso_utc(s.started_at),
                    "uptime_seconds": s.started.elapsed().as_secs(),
                    "status": if state.exited { "exited" } else { "running" },
                    "output_preview": strip_ansi(state.output.last(200)),
                });
                if state.exited {
                    entry["exit_code"] = json!(state.exit_code);
                }
                entry
            })
            .collect();
        json!({ "processes": processes })
    }

    /// `poll`: status and the last 1,000 characters of output.
    pub fn poll(&self, session_id: &str) -> Value {
        let Some(s) = self.get(session_id) else {
            return not_found(session_id);
        };
        let state = s.state();
        let mut result = json!({
            "session_id": s.id,
            "command": s.command,
            "status": if state.exited { "exited" } else { "running" },
            "pid": s.pid,
            "uptime_seconds": s.started.elapsed().as_secs(),
            "output_preview": strip_ansi(state.output.last(1000)),
        });
        if state.exited {
            result["exit_code"] = json!(state.exit_code);
            result["completion_reason"] = json!(state.completion_reason);
            result["termination_source"] = json!(state.termination_source);
        }
        result
    }

    /// `log`: lines of the retained output; by default the last `limit`
    /// lines, else `lines[offset:offset+limit]` (Python slice semantics).
    pub fn log(&self, session_id: &str, offset: i64, limit: i64) -> Value {
        let Some(s) = self.get(session_id) else {
            return not_found(session_id);
        };
        let (text, exited, dropped, total_bytes) = {
            let state = s.state();
            let out = &state.output;
            (
                strip_ansi(out.view()).into_owned(),
                state.exited,
                out.dropped_output(),
                out.total_bytes(),
            )
        };
        let lines = split_lines(&text);
        let total = lines.len();
        let (selected, observed_end) = if offset == 0 && limit > 0 {
            let (start, _) = slice_bounds(total, -limit, 0);
            (&lines[start..], true)
        } else {
            let (start, stop) = slice_bounds(total, offset, limit);
            (&lines[start..stop], start < stop && stop == total)
        };
        if exited && (observed_end || total == 0) {
            self.mark_consumed(session_id);
        }
        let mut result = json!({
            "session_id": s.id,
            "command": s.command,
            "status": if exited { "exited" } else { "running" },
            "output": selected.join("\n"),
            "total_lines": total,
            "showing": format!("{} lines", selected.len()),
        });
        if dropped {
            result["note"] = json!(format!(
                "earlier output dropped; buffer keeps the last {} chars of {total_bytes} bytes written",
                self.shared.config.max_output_chars
            ));
        }
        result
    }

    /// `wait`: block until the process exits, `timeout` seconds pass (capped
    /// at the configured maximum), or `cancel` fires.
    pub async fn wait(
        &self,
        session_id: &str,
        timeout: Option<u64>,
        cancel: &CancellationToken,
    ) -> Value {
        let max = self.shared.config.max_wait_secs;
        let (effective, clamp_note) = match timeout.filter(|t| *t > 0) {
            Some(t) if t > max => (
                max,
                Some(format!(
                    "Requested wait of {t}s was clamped to configured limit of {max}s"
                )),
            ),
            Some(t) => (t, None),
            None => (max, None),
        };
        let Some(s) = self.get(session_id) else {
            return not_found(session_id);
        };
        let mut done = s.done.subscribe();
        let mut result = tokio::select! {
            biased;
            _ = done.wait_for(|finished| *finished) => {
                self.mark_consumed(session_id);
                let state = s.state();
                json!({
                    "status": "exited",
                    "command": s.command,
                    "exit_code": state.exit_code,
                    "completion_reason": state.completion_reason,
                    "termination_source": state.termination_source,
                    "output": strip_ansi(state.output.last(2000)),
                })
            }
            _ = cancel.cancelled() => json!({
                "status": "interrupted",
                "command": s.command,
                "output": s.output_tail(1000),
                "note": "User sent a new message -- wait interrupted",
            }),
            _ = tokio::time::sleep(Duration::from_secs(effective)) => json!({
                "status": "timeout",
                "command": s.command,
                "output": s.output_tail(1000),
                "timeout_note": format!("Waited {effective}s, process still running"),
            }),
        };
        if let Some(note) = clamp_note {
            result["timeout_note"] = json!(note);
        }
        result
    }

    /// `write`: send data to the process's stdin (no newline added), once `gate` clears it.
    /// Only complete commands reach the process (a newline or `;`, and for a shell also past
    /// open quotes, continuations and here-documents: `complete_commands`); the rest waits for
    /// the write that completes it, and is judged with it.
    pub async fn write_stdin(&self, session_id: &str, data: &str, gate: &dyn StdinGate) -> Value {
        let Some(s) = self.get(session_id) else {
            return not_found(session_id);
        };
        if s.state().exited {
            return json!({"status": "already_exited", "error": "Process has already finished"});
        }
        // Held while the gate judges (and asks), so the text it judged is the text written.
        let mut stdin = s.stdin.lock().await;
        if stdin.pipe.is_none() {
            return json!({"status": "error", "error": "Process stdin not available (non-local backend or stdin closed)"});
        }
        let cleared = match gate.clear(&s.command, &s.cwd, &stdin.pending, data).await {
            Ok(cleared) => cleared,
            Err(refusal) => return json!({"status": "blocked", "error": refusal}),
        };
        if !cleared.covers_stdin(&stdin.pending, data) {
            return json!({"status": "blocked", "error": "the write was not cleared by the command policy"});
        }
        let (complete, rest) = complete_commands(&s.command, &stdin.pending, data);
        if rest.len() > MAX_PENDING_STDIN {
            return json!({"status": "error", "error": format!(
                "input that does not complete a command yet (no newline or `;`, or an open quote, a \
                 trailing backslash or a here-document without its delimiter line) is over \
                 {MAX_PENDING_STDIN} bytes; complete it"
            )});
        }
        let text: String = complete.concat();
        let Some(pipe) = stdin.pipe.as_mut() else {
            return json!({"status": "error", "error": "Process stdin not available (stdin closed)"});
        };
        let write = async {
            pipe.write_all(text.as_bytes()).await?;
            pipe.flush().await
        };
        let result = match tokio::time::timeout(STDIN_WRITE_TIMEOUT, write).await {
            Ok(Ok(())) => {
                let mut reply = json!({"status": "ok", "bytes_written": data.chars().count()});
                if !rest.is_empty() {
                    reply["held"] = json!(format!(
                        "{} characters wait to complete a command (a newline or `;`, a closing \
                         quote or a here-document's delimiter line) before they are sent",
                        rest.chars().count()
                    ));
                }
                reply
            }
            Ok(Err(err)) => {
                json!({"status": "error", "error": format!("write to stdin of {session_id}: {err}")})
            }
            Err(_) => json!({"status": "error", "error": format!(
                "write to stdin of {session_id} timed out after {}s (process is not reading)",
                STDIN_WRITE_TIMEOUT.as_secs()
            )}),
        };
        if result["status"] == "ok" {
            stdin.pending = rest;
        }
        result
    }

    /// `close`: close the process's stdin (EOF) without killing it.
    pub async fn close_stdin(&self, session_id: &str) -> Value {
        let Some(s) = self.get(session_id) else {
            return not_found(session_id);
        };
        if s.state().exited {
            return json!({"status": "already_exited", "error": "Process has already finished"});
        }
        match s.stdin.lock().await.pipe.take() {
            Some(pipe) => {
                drop(pipe);
                json!({"status": "ok", "message": "stdin closed"})
            }
            None => {
                json!({"status": "error", "error": "Process stdin not available (non-local backend or stdin closed)"})
            }
        }
    }

    /// Runs one `process` tool call (`args` as sent by the model) and
    /// returns its JSON result. `cancel` interrupts `wait`.
    pub async fn handle_tool_call(
        &self,
        args: &Value,
        cancel: &CancellationToken,
        gate: &dyn StdinGate,
    ) -> Value {
        let action = args.get("action").and_then(Value::as_str).unwrap_or("");
        let session_id = match args.get("session_id") {
            Some(Value::String(s)) => s.trim().to_owned(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        };
        if action == "list" {
            return self.list();
        }
        if !matches!(
            action,
            "poll" | "log" | "wait" | "kill" | "write" | "submit" | "close"
        ) {
            return tool_error(format!("Unknown process action: {action}. Use: {ACTIONS}"));
        }
        if session_id.is_empty() {
            return tool_error(format!("session_id is required for {action}"));
        }
        let data = match args.get("data") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        match action {
            "poll" => self.poll(&session_id),
            "log" => {
                let offset = lenient_int(args.get("offset")).unwrap_or(0);
                let limit = lenient_int(args.get("limit")).unwrap_or(200);
                self.log(&session_id, offset, limit)
            }
            "wait" => {
                let timeout = lenient_int(args.get("timeout")).and_then(|t| u64::try_from(t).ok());
                self.wait(&session_id, timeout, cancel).await
            }
            "kill" => self.kill(&session_id, "process.kill").await,
            "write" => self.write_stdin(&session_id, &data, gate).await,
            "submit" => {
                self.write_stdin(&session_id, &format!("{data}\n"), gate)
                    .await
            }
            _ => self.close_stdin(&session_id).await,
        }
    }
}

/// The first `n` characters of `text` (Python's `text[:n]`).
fn first_chars(text: &str, n: usize) -> &str {
    match text.char_indices().nth(n) {
        Some((idx, _)) => &text[..idx],
        None => text,
    }
}

#[cfg(test)]
mod unit {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::super::output::last_chars;
    use super::*;

    #[test]
    fn iso_utc_formats_known_instants() {
        assert_eq!(iso_utc(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_709_210_096);
        assert_eq!(iso_utc(t), "2024-02-29T12:34:56Z");
    }

    #[test]
    fn slice_bounds_follow_python() {
        assert_eq!(slice_bounds(10, 2, 3), (2, 5));
        assert_eq!(slice_bounds(10, -3, 200), (7, 10));
        assert_eq!(slice_bounds(10, 8, 200), (8, 10));
        assert_eq!(slice_bounds(10, 20, 5), (10, 10));
        assert_eq!(slice_bounds(3, -10, 0), (0, 0));
    }

    #[test]
    fn prefix_and_polling_actions() {
        assert_eq!(first_chars("héllo", 2), "hé");
        assert_eq!(last_chars("héllo", 2), "lo");
        assert!(is_polling_action("wait") && !is_polling_action("kill"));
    }
}
