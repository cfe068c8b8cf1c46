//! Where a run's result goes, and what happened to it. `deliver` is one target or several,
//! comma-separated: `local` (the output file is the delivery), `origin` (the chat the job was
//! created from), `<platform>` (its home channel) or `<platform>:<chat>[:<thread>]`. Chat
//! targets go through the gateway ([`Messenger`]); a target that cannot be reached (platform
//! down or not configured, no home channel) is recorded with the reason, never as delivered.
//! A successful run that answers `[SILENT]` (`prompt::is_silent`) is not delivered; a failed
//! one always is.

use serde_json::Value;

use super::prompt::is_silent;
use crate::store::{self, Store};
use crate::tools::messenger::{Destination, Messenger};

/// The outcome of a run, as delivery sees it.
#[derive(Debug, Clone, Copy)]
pub struct Outcome<'a> {
    pub ok: bool,
    pub answer: &'a str,
    /// Why a failed run failed.
    pub error: Option<&'a str>,
}

/// The job, as delivery sees it.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub deliver: &'a str,
    pub origin: Option<&'a str>,
}

/// Characters of a failure's reason in its message.
const REASON_CHARS: usize = 180;

/// Deliver (or not) and say what happened, for the run's record: one clause per target,
/// joined by "; ".
pub async fn deliver(
    messenger: &dyn Messenger,
    store: &Store,
    job: Job<'_>,
    result: Outcome<'_>,
) -> String {
    if result.ok && is_silent(result.answer) {
        return "silent: the reply was [SILENT], nothing delivered".into();
    }
    if result.ok && result.answer.trim().is_empty() {
        return "nothing delivered: the reply was empty".into();
    }
    let text = message(job, result);
    let mut said = Vec::new();
    for target in job.deliver.split(',').map(str::trim) {
        said.push(deliver_one(messenger, store, job, target, &text).await);
    }
    said.join("; ")
}

async fn deliver_one(
    messenger: &dyn Messenger,
    store: &Store,
    job: Job<'_>,
    target: &str,
    text: &str,
) -> String {
    let target = if target == "origin" {
        match origin_target(store, job.origin).await {
            Ok(target) => target,
            Err(local) => return local,
        }
    } else {
        target.to_string()
    };
    if target == "local" || target.is_empty() {
        return "local: the output file is the result".into();
    }
    let to = match Destination::parse(&target) {
        Ok(to) => to,
        Err(e) => return format!("not delivered: {e}"),
    };
    match messenger.send(&to, text, None).await {
        Ok(sent) => format!(
            "delivered to {}:{}{}",
            sent.platform,
            sent.chat_id,
            if sent.pieces > 1 {
                format!(" in {} messages", sent.pieces)
            } else {
                String::new()
            }
        ),
        Err(why) => format!("pending: {why} (for {to})"),
    }
}

/// The message a run delivers, in Hermes' wrapper.
fn message(job: Job<'_>, result: Outcome<'_>) -> String {
    let name = if job.name.is_empty() {
        job.id
    } else {
        job.name
    };
    let content = if result.ok {
        result.answer.trim().to_string()
    } else {
        let reason: String = result
            .error
            .unwrap_or("the run failed")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let reason = if reason.chars().count() > REASON_CHARS {
            let cut: String = reason.chars().take(REASON_CHARS - 3).collect();
            format!("{cut}...")
        } else {
            reason
        };
        format!("⚠️ Cron '{name}' failed: {reason}")
    };
    format!(
        "Cronjob Response: {name}\n(job_id: {})\n-------------\n\n{content}\n\nTo stop or manage \
         this job, send me a new message (e.g. \"stop reminder {name}\").",
        job.id
    )
}

/// The chat a job was created from, as a target; `Err` says why the run stays local. The
/// origin is `{"platform", "chat_id"[, "thread_id"]}` (imported from Hermes) or `{"platform",
/// "session_id"}` (made here: the session's chat is looked up).
async fn origin_target(store: &Store, origin: Option<&str>) -> Result<String, String> {
    let none = || "local: the job has no origin chat; the output file is the result".to_string();
    let origin: Value = serde_json::from_str(origin.ok_or_else(none)?).map_err(|_| none())?;
    let text = |key: &str| match origin.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let platform = text("platform");
    let (mut chat, mut thread) = (text("chat_id"), text("thread_id"));
    let session = text("session_id");
    if chat.is_empty() && !session.is_empty() {
        let place = store
            .read(move |conn| {
                let Some(row) = store::get_session(conn, &session)? else {
                    return Ok(None);
                };
                store::conversation_place(conn, &row.conversation_id)
            })
            .await
            .ok()
            .flatten();
        if let Some(place) = place {
            (chat, thread) = (place.chat_id, place.thread_id);
        }
    }
    if chat.is_empty() {
        return Err(format!(
            "local: created from a {platform} session, which has no chat to deliver to; the \
             output file is the result"
        ));
    }
    Ok(if thread.is_empty() {
        format!("{platform}:{chat}")
    } else {
        format!("{platform}:{chat}:{thread}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOB: Job<'static> = Job {
        id: "j1",
        name: "digest",
        deliver: "local",
        origin: None,
    };

    #[test]
    fn a_result_is_wrapped_and_a_failure_summarised() {
        let ok = message(
            JOB,
            Outcome {
                ok: true,
                answer: " Here is the digest.\n",
                error: None,
            },
        );
        assert!(
            ok.starts_with(
                "Cronjob Response: digest\n(job_id: j1)\n-------------\n\nHere is the digest.\n\n"
            ),
            "{ok}"
        );
        let long = "x ".repeat(200);
        let failed = message(
            JOB,
            Outcome {
                ok: false,
                answer: "",
                error: Some(&long),
            },
        );
        assert!(failed.contains("⚠️ Cron 'digest' failed: x x"), "{failed}");
        assert!(
            failed.contains("...\n"),
            "cut at {REASON_CHARS} characters: {failed}"
        );
    }

    #[tokio::test]
    async fn local_and_terminal_origins_stay_local() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let none = crate::tools::messenger::NoPlatforms;
        let ok = Outcome {
            ok: true,
            answer: "report",
            error: None,
        };
        let said = deliver(&none, &store, JOB, ok).await;
        assert!(said.starts_with("local"), "{said}");
        let cli = Job {
            deliver: "origin",
            origin: Some(r#"{"platform":"cli","session_id":"s1"}"#),
            ..JOB
        };
        let said = deliver(&none, &store, cli, ok).await;
        assert!(said.starts_with("local: created from a cli"), "{said}");
        let telegram = Job {
            deliver: "origin,telegram:42",
            origin: Some(r#"{"platform":"telegram","chat_id":7}"#),
            ..JOB
        };
        let said = deliver(&none, &store, telegram, ok).await;
        assert!(
            said.starts_with("pending: Platform 'telegram' is not configured"),
            "{said}"
        );
        assert!(said.contains("(for telegram:7); pending:"), "{said}");
        let silent = Outcome {
            ok: true,
            answer: "[SILENT]",
            error: None,
        };
        assert!(
            deliver(&none, &store, telegram, silent)
                .await
                .starts_with("silent")
        );
        let failed = Outcome {
            ok: false,
            answer: "[SILENT]",
            error: Some("boom"),
        };
        assert!(
            deliver(&none, &store, telegram, failed)
                .await
                .starts_with("pending")
        );
    }
}
