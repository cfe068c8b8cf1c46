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
use crate::tools::messenger::{Destination, Messenger, SendError, Sent};

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
    /// `cron.wrap_response`: the Hermes header and footer around the result.
    pub wrap: bool,
}

/// What delivery did: one clause per target for the run's record, joined by "; ", and the
/// deliveries that wait for their platform (stored with the run's record).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delivered {
    pub said: String,
    pub waiting: Vec<Waiting>,
}

/// A delivery that waits for its platform to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// Resolved: `platform`, `platform:chat` or `platform:chat:thread`.
    pub target: String,
    pub platform: String,
    pub text: String,
    pub reason: String,
}

/// Characters of a failure's reason in its message.
const REASON_CHARS: usize = 180;
/// Characters of a waiting delivery's message that are kept.
const WAITING_MAX_CHARS: usize = 16 * 4096;
/// Targets one job may deliver to.
const MAX_TARGETS: usize = 16;

/// Deliver (or not) and say what happened.
pub async fn deliver(
    messenger: &dyn Messenger,
    store: &Store,
    job: Job<'_>,
    result: Outcome<'_>,
) -> Delivered {
    let said = |s: &str| Delivered {
        said: s.to_string(),
        waiting: Vec::new(),
    };
    if result.ok && is_silent(result.answer) {
        return said("silent: the reply was [SILENT], nothing delivered");
    }
    if result.ok && result.answer.trim().is_empty() {
        return said("nothing delivered: the reply was empty");
    }
    let text = message(job, result);
    let mut done = Delivered::default();
    let mut clauses = Vec::new();
    let mut seen = Vec::new();
    let targets: Vec<&str> = job.deliver.split(',').map(str::trim).collect();
    let needs_homes = targets.len() > 1 || targets.iter().any(|t| matches!(*t, "origin" | "all"));
    let homes = if needs_homes {
        homes(messenger).await
    } else {
        Vec::new()
    };
    let mut destinations = Vec::new();
    for target in targets {
        match expand(store, job, target, &homes).await {
            Ok(found) => destinations.extend(found),
            Err(said) => clauses.push(said),
        }
    }
    for to in destinations.into_iter().take(MAX_TARGETS) {
        // `telegram` and `telegram:<its home>` are one chat: it gets one message.
        let key = same_chat_key(&to, &homes);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        match messenger.send(&to, &text, None).await {
            Ok(sent) => clauses.push(sent_clause(&sent)),
            Err(SendError::Unavailable(why)) => {
                clauses.push(format!("pending: {why} (for {to})"));
                done.waiting.push(Waiting {
                    target: to.to_string(),
                    platform: to.platform.clone(),
                    // What one send can carry (16 Telegram messages); the rest would be cut.
                    text: text.chars().take(WAITING_MAX_CHARS).collect(),
                    reason: why,
                });
            }
            Err(SendError::Refused(why)) => {
                clauses.push(format!("not delivered: {why} (for {to})"));
            }
        }
    }
    clauses.dedup();
    done.said = clauses.join("; ");
    done
}

/// What the run's record says of a message that went.
pub fn sent_clause(sent: &Sent) -> String {
    format!(
        "delivered to {}:{}{}",
        sent.platform,
        sent.chat_id,
        if sent.pieces > 1 {
            format!(" in {} messages", sent.pieces)
        } else {
            String::new()
        }
    )
}

/// One target as the chats it names; `Err` is what the record says instead (`local: …`, or
/// why it names no chat). `origin` without a chat is the first platform with a home channel,
/// and `all` every platform with one, as in Hermes.
async fn expand(
    store: &Store,
    job: Job<'_>,
    target: &str,
    homes: &[(String, String, String)],
) -> Result<Vec<Destination>, String> {
    let home_of = |platform: &str| Destination {
        platform: platform.to_string(),
        chat: String::new(),
        thread_id: String::new(),
    };
    let target = match target {
        "" | "local" => return Err("local: the output file is the result".into()),
        "origin" => match origin_target(store, job.origin).await {
            Ok(Some(chat)) => chat,
            Ok(None) => match homes.first() {
                Some((platform, ..)) => return Ok(vec![home_of(platform)]),
                None => {
                    return Err(
                        "local: the job has no origin chat and no platform has a home \
                                channel; the output file is the result"
                            .into(),
                    );
                }
            },
            Err(e) => return Err(e),
        },
        "all" if homes.is_empty() => {
            return Err("not delivered: no platform has a home channel (for all)".into());
        }
        "all" => return Ok(homes.iter().map(|(p, ..)| home_of(p)).collect()),
        other => other.to_string(),
    };
    Destination::parse(&target)
        .map(|to| vec![to])
        .map_err(|e| format!("not delivered: {e}"))
}

/// Each platform's home chat, to see that two targets name one chat.
async fn homes(messenger: &dyn Messenger) -> Vec<(String, String, String)> {
    messenger
        .targets()
        .await
        .into_iter()
        .filter_map(|p| {
            p.home
                .map(|home| (p.platform, home.chat_id, home.thread_id))
        })
        .collect()
}

fn same_chat_key(to: &Destination, homes: &[(String, String, String)]) -> (String, String, String) {
    if to.chat.is_empty()
        && let Some((platform, chat, thread)) = homes.iter().find(|(p, ..)| *p == to.platform)
    {
        return (platform.clone(), chat.clone(), thread.clone());
    }
    (to.platform.clone(), to.chat.clone(), to.thread_id.clone())
}

/// The message a run delivers: the result (or the failure's summary), in Hermes' wrapper
/// unless `cron.wrap_response` is off.
pub fn message(job: Job<'_>, result: Outcome<'_>) -> String {
    let name = if job.name.is_empty() {
        job.id
    } else {
        job.name
    };
    let content = if result.ok {
        result.answer.trim().to_string()
    } else {
        failure_summary(name, result.error.unwrap_or("the run failed"))
    };
    if !job.wrap {
        return content;
    }
    format!(
        "Cronjob Response: {name}\n(job_id: {})\n-------------\n\n{content}\n\nTo stop or manage \
         this job, send me a new message (e.g. \"stop reminder {name}\").",
        job.id
    )
}

/// Hermes' one-line summary of a failure: provider limits, timeouts and authentication by
/// name, anything else cut to 180 characters.
fn failure_summary(name: &str, error: &str) -> String {
    let lower = error.to_lowercase();
    let has_word = |word: &str| {
        lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == word)
    };
    if lower.contains("429") || lower.contains("rate limit") || lower.contains("usage limit") {
        let reason = if lower.contains("weekly usage limit") {
            "weekly usage limit"
        } else if lower.contains("quota") {
            "quota limit"
        } else {
            "rate limit"
        };
        return format!(
            "⚠️ Cron '{name}' failed: provider {reason}. Fallback chain was exhausted or \
             unavailable. Full details saved in cron output."
        );
    }
    if lower.contains("timed out") || lower.contains("timeout") {
        return format!(
            "⚠️ Cron '{name}' failed: provider timeout. Fallback chain was exhausted or \
             unavailable. Full details saved in cron output."
        );
    }
    if lower.contains("authenticat")
        || lower.contains("authoriz")
        || has_word("401")
        || has_word("403")
    {
        return format!(
            "⚠️ Cron '{name}' failed: provider authentication error. Full details saved in \
             cron output."
        );
    }
    let head: String = error.chars().take(2000).collect();
    let reason = head.split_whitespace().collect::<Vec<_>>().join(" ");
    let reason = if reason.chars().count() > REASON_CHARS {
        let cut: String = reason.chars().take(REASON_CHARS - 3).collect();
        format!("{cut}...")
    } else {
        reason
    };
    format!("⚠️ Cron '{name}' failed: {reason}")
}

/// The chat a job was created from, as a target (`None`: it was not made in a chat). The
/// origin is `{"platform", "chat_id"[, "thread_id"]}` (Hermes' shape, which hermesd stores
/// too) or, for jobs made before chats were stored, `{"platform", "session_id"}`: the
/// session's chat is looked up.
async fn origin_target(store: &Store, origin: Option<&str>) -> Result<Option<String>, String> {
    let Some(origin) = origin.and_then(|o| serde_json::from_str::<Value>(o).ok()) else {
        return Ok(None);
    };
    let text = |key: &str| field(&origin, key);
    let platform = text("platform");
    let (mut chat, mut thread) = (text("chat_id"), text("thread_id"));
    let session = text("session_id");
    if chat.is_empty() && !session.is_empty() {
        let place = store
            .read(move |conn| session_place(conn, &session))
            .await
            .map_err(|e| {
                format!("not delivered: the job's chat cannot be read: {e} (for origin)")
            })?;
        if let Some(place) = place {
            (chat, thread) = (place.chat_id, place.thread_id);
        }
    }
    if platform.is_empty() || chat.is_empty() {
        return Ok(None);
    }
    Ok(Some(if thread.is_empty() {
        format!("{platform}:{chat}")
    } else {
        format!("{platform}:{chat}:{thread}")
    }))
}

fn field(origin: &Value, key: &str) -> String {
    match origin.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// The chat a session talks in, if it is a chat's.
fn session_place(
    conn: &rusqlite::Connection,
    session: &str,
) -> Result<Option<store::ChatPlace>, store::StoreError> {
    let Some(row) = store::get_session(conn, session)? else {
        return Ok(None);
    };
    store::conversation_place(conn, &row.conversation_id)
}

/// A new job's origin with its chat written in (`chat_id`, `thread_id`, `chat_name`), as
/// Hermes stores it, so `origin` delivery does not depend on the session being kept.
pub fn pin_origin(conn: &rusqlite::Connection, origin: &str) -> String {
    let Ok(mut value) = serde_json::from_str::<Value>(origin) else {
        return origin.to_string();
    };
    let session = field(&value, "session_id");
    if session.is_empty() || !field(&value, "chat_id").is_empty() {
        return origin.to_string();
    }
    let Ok(Some(place)) = session_place(conn, &session) else {
        return origin.to_string();
    };
    value["chat_id"] = Value::String(place.chat_id);
    if !place.thread_id.is_empty() {
        value["thread_id"] = Value::String(place.thread_id);
    }
    if !place.name.is_empty() {
        value["chat_name"] = Value::String(place.name);
    }
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOB: Job<'static> = Job {
        id: "j1",
        name: "digest",
        deliver: "local",
        origin: None,
        wrap: true,
    };

    fn failed(error: &str) -> String {
        message(
            JOB,
            Outcome {
                ok: false,
                answer: "",
                error: Some(error),
            },
        )
    }

    #[test]
    fn a_result_is_wrapped_and_a_failure_summarised() {
        let ok = Outcome {
            ok: true,
            answer: " Here is the digest.\n",
            error: None,
        };
        let wrapped = message(JOB, ok);
        assert!(
            wrapped.starts_with(
                "Cronjob Response: digest\n(job_id: j1)\n-------------\n\nHere is the digest.\n\n"
            ),
            "{wrapped}"
        );
        let plain = message(Job { wrap: false, ..JOB }, ok);
        assert_eq!(plain, "Here is the digest.");
        let long = failed(&"x ".repeat(200));
        assert!(long.contains("⚠️ Cron 'digest' failed: x x"), "{long}");
        assert!(
            long.contains("...\n"),
            "cut at {REASON_CHARS} characters: {long}"
        );
        assert!(failed("HTTP 429: slow down").contains("failed: provider rate limit."));
        assert!(failed("weekly usage limit reached").contains("provider weekly usage limit."));
        assert!(failed("the request timed out").contains("provider timeout."));
        assert!(failed("HTTP 401 Unauthorized").contains("provider authentication error."));
        assert!(failed("exit 4010").contains("failed: exit 4010"));
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
        assert!(said.said.starts_with("local"), "{said:?}");
        assert!(said.waiting.is_empty());
        let cli = Job {
            deliver: "origin",
            origin: Some(r#"{"platform":"cli","session_id":"s1"}"#),
            ..JOB
        };
        let said = deliver(&none, &store, cli, ok).await.said;
        assert!(
            said.starts_with("local: the job has no origin chat"),
            "{said}"
        );
        let telegram = Job {
            deliver: "origin,telegram:42,telegram:7",
            origin: Some(r#"{"platform":"telegram","chat_id":7}"#),
            ..JOB
        };
        let done = deliver(&none, &store, telegram, ok).await;
        assert!(
            done.said
                .starts_with("pending: Platform 'telegram' is not configured"),
            "{done:?}"
        );
        assert!(done.said.contains("(for telegram:7); pending:"), "{done:?}");
        let targets: Vec<_> = done.waiting.iter().map(|w| w.target.as_str()).collect();
        assert_eq!(
            targets,
            ["telegram:7", "telegram:42"],
            "one message per chat"
        );
        let silent = Outcome {
            ok: true,
            answer: "[SILENT]",
            error: None,
        };
        let said = deliver(&none, &store, telegram, silent).await;
        assert!(said.said.starts_with("silent") && said.waiting.is_empty());
        let failed = Outcome {
            ok: false,
            answer: "[SILENT]",
            error: Some("boom"),
        };
        let said = deliver(&none, &store, telegram, failed).await;
        assert!(said.waiting[0].text.contains("failed: boom"), "{said:?}");
        let unknown = Job {
            deliver: "all",
            ..JOB
        };
        let said = deliver(&none, &store, unknown, ok).await.said;
        assert_eq!(
            said,
            "not delivered: no platform has a home channel (for all)"
        );
    }
}
