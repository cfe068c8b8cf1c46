//! The turn as tools see it ([`TurnPort`]): progress output becomes events, masked of secrets
//! as it streams ([`OutputStreams`]); approvals and questions go to the attached interactive
//! clients and wait for the first answer, the timeout (a deny), or an interrupt.

use std::{collections::HashMap, sync::Arc, time::Duration};

use async_trait::async_trait;
use hermes_proto::pb::{self, session_event::Kind};
use tokio_util::sync::CancellationToken;

use crate::hub::{Answer, TurnHandle};
use crate::{
    ids,
    policy::{SecretMasker, StreamMasker},
    store::{Store, StoreError},
    tools::{ApprovalDecision, ApprovalRequest, TurnPort},
};

/// How dangerous commands are approved in this turn.
#[derive(Debug, Clone)]
pub struct ApprovalPolicy {
    /// `approvals.mode: off` or `--yolo` (or `approvals.cron_mode: approve` in a cron run):
    /// everything runs.
    pub off: bool,
    /// A cron run under `approvals.cron_mode: deny`: nobody is asked, dangerous commands are
    /// refused.
    pub unattended: bool,
    /// No answer within this is a deny.
    pub timeout: Duration,
    /// Pattern keys approved forever (config `command_allowlist` and "always" answers).
    pub allowlist: Vec<String>,
}

/// Where a delegated child's approvals are asked: the user's conversation, whose clients see the
/// request labelled with the child.
pub struct Asker {
    pub live: TurnHandle,
    pub label: String,
}

pub struct LivePort {
    pub live: TurnHandle,
    /// A child's approvals go to the user's conversation instead of its own.
    pub asker: Option<Asker>,
    pub turn_id: String,
    pub store: Store,
    pub policy: ApprovalPolicy,
    pub cancel: CancellationToken,
    /// The secret masker of the turn's progress output (and of the commands it asks about).
    pub output: OutputStreams,
}

/// The progress output of the turn's calls on its way to clients: each call's chunks pass
/// through its own stream masker, so a secret split between two chunks is masked whole.
pub struct OutputStreams {
    masker: Arc<SecretMasker>,
    calls: std::sync::Mutex<HashMap<String, StreamMasker>>,
}

impl OutputStreams {
    pub fn new(masker: Arc<SecretMasker>) -> Self {
        Self {
            masker,
            calls: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// What of `chunk` (with what call `call_id` held back) can be shown now, masked.
    fn push(&self, call_id: &str, chunk: &str) -> String {
        let Ok(mut calls) = self.calls.lock() else {
            return String::new();
        };
        calls
            .entry(call_id.to_string())
            .or_insert_with(|| self.masker.stream())
            .push(chunk)
    }

    /// The masked rest of call `call_id`'s output, once the call is over.
    fn finish(&self, call_id: &str) -> String {
        let stream = self.calls.lock().ok().and_then(|mut c| c.remove(call_id));
        stream.map(|mut s| s.finish()).unwrap_or_default()
    }
}

enum Waited {
    Answer(Answer),
    TimedOut,
    Interrupted,
}

impl LivePort {
    /// Wait for the answer to a question registered with `LiveSession::ask` (registered before
    /// the question is published, so an answer can never arrive before anyone listens).
    async fn wait(
        &self,
        asking: &TurnHandle,
        question_id: &str,
        answer: tokio::sync::oneshot::Receiver<Answer>,
    ) -> Waited {
        let waited = tokio::select! {
            answer = answer => answer.map_or(Waited::Interrupted, Waited::Answer),
            () = tokio::time::sleep(self.policy.timeout) => Waited::TimedOut,
            () = self.cancel.cancelled() => Waited::Interrupted,
        };
        asking.forget(question_id);
        waited
    }

    /// The session whose clients answer this turn's approvals, and how the request is labelled.
    fn asking(&self) -> (&TurnHandle, Option<&str>) {
        match &self.asker {
            Some(asker) => (&asker.live, Some(asker.label.as_str())),
            None => (&self.live, None),
        }
    }

    async fn remember_always(&self, key: String) {
        let result = self
            .store
            .write(move |tx| {
                tx.execute(
                    "INSERT OR IGNORE INTO command_allowlist (pattern_key, created_at) VALUES (?1, ?2)",
                    rusqlite::params![key, chrono::Utc::now().timestamp_millis()],
                )
                .map_err(StoreError::sql("remember an approval"))?;
                Ok(())
            })
            .await;
        if let Err(e) = result {
            tracing::warn!(error = %e, "cannot store an 'always' approval");
        }
    }

    /// Call `call_id` is over: show what its output stream still held.
    pub fn finish_output(&self, call_id: &str) {
        let rest = self.output.finish(call_id);
        self.emit_output(call_id, rest);
    }

    fn emit_output(&self, call_id: &str, chunk: String) {
        if chunk.is_empty() {
            return;
        }
        self.live.emit_transient(
            &self.turn_id,
            Kind::ToolOutput(pb::ToolOutput {
                call_id: call_id.to_string(),
                chunk,
            }),
        );
    }

    async fn emit(&self, kind: Kind) {
        self.emit_on(&self.live, kind).await;
    }

    async fn emit_on(&self, live: &TurnHandle, kind: Kind) {
        if let Err(e) = live.emit_durable(&self.turn_id, kind).await {
            tracing::warn!(error = %e, "cannot store an approval event");
        }
    }
}

/// Whether `request` is approved forever: its rule's key is on the list, or (as in Hermes) a
/// list entry with glob characters matches the whole command.
fn allowlisted(allowlist: &[String], request: &ApprovalRequest) -> bool {
    allowlist.iter().any(|entry| {
        let entry = entry.trim();
        entry == request.pattern_key
            || entry == request.command
            || (entry.contains(['*', '?', '['])
                && globset::GlobBuilder::new(entry)
                    .literal_separator(false)
                    .build()
                    .is_ok_and(|g| g.compile_matcher().is_match(&request.command)))
    })
}

/// The `pattern_key`s approved forever in this database.
pub fn stored_allowlist(conn: &rusqlite::Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT pattern_key FROM command_allowlist")
        .map_err(StoreError::sql("read the command allowlist"))?;
    let keys = stmt
        .query_map([], |row| row.get(0))
        .map_err(StoreError::sql("read the command allowlist"))?
        .collect::<Result<_, _>>()
        .map_err(StoreError::sql("read the command allowlist"))?;
    Ok(keys)
}

#[async_trait]
impl TurnPort for LivePort {
    fn tool_output(&self, call_id: &str, chunk: &str) {
        let shown = self.output.push(call_id, chunk);
        self.emit_output(call_id, shown);
    }

    async fn approve(&self, request: ApprovalRequest) -> ApprovalDecision {
        if self.policy.off {
            return ApprovalDecision::Approved;
        }
        let (asking, label) = self.asking();
        let session_ok = asking.approved_for_session(&request.pattern_key);
        if session_ok || allowlisted(&self.policy.allowlist, &request) {
            return ApprovalDecision::Approved;
        }
        if self.policy.unattended {
            return ApprovalDecision::Denied(format!(
                "BLOCKED: this is an unattended scheduled run and approvals.cron_mode is deny, so \
                 a command that needs approval ({}) is refused. Do not retry it another way; say \
                 in your response that the job needs it approved (config command_allowlist, or \
                 approvals.cron_mode: approve).",
                request.reason
            ));
        }
        if asking.interactive_clients() == 0 {
            return ApprovalDecision::Denied(format!(
                "BLOCKED: approval required ({}) but no interactive user is attached to approve it. \
                 Do not retry; ask the user to run it, or to approve from `hermesctl chat`.",
                request.reason
            ));
        }
        let id = ids::short_id("appr");
        let answer = asking.ask(&id);
        let reason = match label {
            Some(label) => format!("[{label}] {}", request.reason),
            None => request.reason.clone(),
        };
        self.emit_on(
            asking,
            Kind::ApprovalRequested(pb::ApprovalRequested {
                id: id.clone(),
                // Shown masked, as Hermes shows it; the command runs as written.
                command: self.output.masker.mask(&request.command).into_owned(),
                reason,
                choices: ["once", "session", "always", "deny"]
                    .map(String::from)
                    .to_vec(),
            }),
        )
        .await;
        self.live
            .set_state(&self.turn_id, pb::SessionState::WaitingApproval);
        let waited = self.wait(asking, &id, answer).await;
        self.live
            .set_state(&self.turn_id, pb::SessionState::Running);
        let (decision, by) = match &waited {
            Waited::Answer(answer) => (answer.text.trim().to_lowercase(), answer.by.clone()),
            Waited::TimedOut => ("deny".to_string(), "timeout".to_string()),
            Waited::Interrupted => ("deny".to_string(), "interrupt".to_string()),
        };
        self.emit_on(
            asking,
            Kind::ApprovalResolved(pb::ApprovalResolved {
                id,
                decision: decision.clone(),
                by,
            }),
        )
        .await;
        match decision.as_str() {
            "once" | "yes" | "y" | "approve" => ApprovalDecision::Approved,
            "session" => {
                asking.approve_for_session(&request.pattern_key);
                ApprovalDecision::Approved
            }
            "always" => {
                self.remember_always(request.pattern_key).await;
                ApprovalDecision::Approved
            }
            _ => {
                let reason = match waited {
                    Waited::TimedOut => format!(
                        "timed out: nobody answered within {} s",
                        self.policy.timeout.as_secs()
                    ),
                    Waited::Interrupted => "interrupted".to_string(),
                    Waited::Answer(_) => "denied by user".to_string(),
                };
                ApprovalDecision::Denied(format!(
                    "BLOCKED: Action {reason}. The user has NOT consented to this action. Do NOT \
                     retry it, do NOT rephrase it, and do NOT attempt the same outcome another way."
                ))
            }
        }
    }

    async fn clarify(&self, question: &str, choices: &[String]) -> Result<String, String> {
        if self.live.interactive_clients() == 0 {
            return Err(
                "Clarify is not available: no user is attached to answer. Decide yourself and say so."
                    .into(),
            );
        }
        let id = ids::short_id("ask");
        let answer = self.live.ask(&id);
        self.emit(Kind::ClarifyRequested(pb::ClarifyRequested {
            id: id.clone(),
            question: question.to_string(),
            choices: choices.to_vec(),
        }))
        .await;
        self.live
            .set_state(&self.turn_id, pb::SessionState::WaitingClarify);
        let waited = self.wait(&self.live, &id, answer).await;
        self.live
            .set_state(&self.turn_id, pb::SessionState::Running);
        match waited {
            Waited::Answer(answer) => {
                self.emit(Kind::ClarifyAnswered(pb::ClarifyAnswered {
                    id,
                    answer: answer.text.clone(),
                    by: answer.by,
                }))
                .await;
                Ok(answer.text)
            }
            Waited::TimedOut => Err(format!(
                "the user did not answer within {} s; decide yourself and say so",
                self.policy.timeout.as_secs()
            )),
            Waited::Interrupted => Err("interrupted by the user".into()),
        }
    }
}
