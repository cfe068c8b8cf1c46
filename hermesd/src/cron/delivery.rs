//! Where a run's result goes, and what happened to it: `local` (the output file is the
//! delivery), `origin` (the chat the job was created from), or `<platform>[:<chat>]`. No chat
//! platform is connected yet, so a platform target is recorded as pending — never as delivered.
//! A successful run that answers exactly `[SILENT]` is not delivered; a failed one always is,
//! where it can be.

use serde_json::Value;

use super::{jobs::PLATFORMS, prompt::is_silent};

/// The outcome of a run, as delivery sees it.
#[derive(Debug, Clone, Copy)]
pub struct Outcome<'a> {
    pub ok: bool,
    pub answer: &'a str,
}

/// The chat a job was created from: `{"platform": …, "chat_id": …}` for a chat platform, or
/// `{"platform": "cli", "session_id": …}` for a local client.
fn origin_target(origin: Option<&str>) -> Option<(String, String)> {
    let origin: Value = serde_json::from_str(origin?).ok()?;
    let platform = origin.get("platform")?.as_str()?.to_string();
    let chat = origin
        .get("chat_id")
        .map(|c| match c {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    Some((platform, chat))
}

/// Deliver (or not) and say what happened, for the run's record.
pub fn deliver(deliver: &str, origin: Option<&str>, result: Outcome<'_>) -> String {
    if result.ok && is_silent(result.answer) {
        return "silent: the reply was [SILENT], nothing delivered".into();
    }
    if result.ok && result.answer.trim().is_empty() {
        return "nothing delivered: the reply was empty".into();
    }
    let target = if deliver == "origin" {
        match origin_target(origin) {
            Some((platform, chat)) if PLATFORMS.contains(&platform.as_str()) => {
                if chat.is_empty() {
                    platform
                } else {
                    format!("{platform}:{chat}")
                }
            }
            Some((platform, _)) => {
                return format!(
                    "local: created from a {platform} session, which has no chat to deliver to; \
                     the output file is the result"
                );
            }
            None => {
                return "local: the job has no origin chat; the output file is the result".into();
            }
        }
    } else {
        deliver.to_string()
    };
    if target == "local" || target.is_empty() {
        return "local: the output file is the result".into();
    }
    let platform = target.split(':').next().unwrap_or_default();
    format!("pending: no {platform} adapter (for {target})")
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: Outcome<'static> = Outcome {
        ok: true,
        answer: "Here is the digest.",
    };

    #[test]
    fn a_platform_is_pending_not_delivered() {
        let said = deliver("telegram:42", None, OK);
        assert!(said.starts_with("pending: no telegram adapter"), "{said}");
        let origin = r#"{"platform":"discord","chat_id":7}"#;
        let said = deliver("origin", Some(origin), OK);
        assert!(
            said.starts_with("pending: no discord adapter (for discord:7)"),
            "{said}"
        );
    }

    #[test]
    fn silent_only_suppresses_a_successful_run() {
        let silent = Outcome {
            ok: true,
            answer: "[SILENT]",
        };
        assert!(deliver("telegram:42", None, silent).starts_with("silent"));
        let failed = Outcome {
            ok: false,
            answer: "[SILENT]",
        };
        assert!(deliver("telegram:42", None, failed).starts_with("pending"));
    }

    #[test]
    fn local_and_terminal_origins_stay_local() {
        assert!(deliver("local", None, OK).starts_with("local"));
        let origin = r#"{"platform":"cli","session_id":"s1"}"#;
        assert!(deliver("origin", Some(origin), OK).starts_with("local: created from a cli"));
    }
}
