//! Titles for untitled conversations, written by the auxiliary model after the first exchange
//! (`auxiliary.title_generation`, on by default), in the background so the answer never waits.
//! A title the user set is never replaced.

use super::TurnRunner;
use std::sync::Arc;

use hermes_proto::pb::{self, session_event::Kind};
use tokio_util::sync::CancellationToken;

use super::auxiliary;
use crate::{config::settings::AuxiliaryTask, hub::TurnHandle};
use crate::{
    llm::{ChatMessage, ChatRequest},
    store::{self, StoreError},
};

/// Characters of each side of the exchange shown to the titler.
const EXCERPT_CHARS: usize = 600;
const MAX_TITLE_CHARS: usize = 80;

const INSTRUCTIONS: &str = "Write a short, descriptive title (3-7 words) for a conversation that \
starts with the exchange below: its main topic or intent, in the language the user writes in. \
Reply with the title only: no quotes, no final punctuation, no prefix.";

fn excerpt(text: &str) -> String {
    let mut cut: String = text.chars().take(EXCERPT_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

/// The request for a title of the exchange `user` → `assistant` (no tools).
pub fn request(user: &str, assistant: &str) -> ChatRequest {
    ChatRequest {
        system: INSTRUCTIONS.to_string(),
        messages: vec![ChatMessage::user(format!(
            "User: {}\n\nAssistant: {}",
            excerpt(user),
            excerpt(assistant)
        ))],
        tools: Vec::new(),
        max_tokens: Some(40),
        reasoning_effort: None,
        cache_ttl: None,
    }
}

/// The model's answer as a title: its first line, without quotes, a `Title:` prefix or final
/// punctuation, at most 80 characters; `None` when nothing is left.
pub fn clean(answer: &str) -> Option<String> {
    let line = answer.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line
        .strip_prefix("Title:")
        .or_else(|| line.strip_prefix("title:"))
        .unwrap_or(line)
        .trim();
    let line = line
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '“' | '”' | '*' | '`' | '#'))
        .trim_end_matches(['.', '。', '!', '?', ':', ';'])
        .trim();
    let title: String = line.chars().take(MAX_TITLE_CHARS).collect();
    Some(title).filter(|t| !t.is_empty())
}

/// After a finished turn: title the conversation in the background if it has none yet and
/// this was its first exchange.
pub fn after_turn(state: &Arc<TurnRunner>, live: &TurnHandle, user: &str, answer: &str) {
    if !state.config().settings.auxiliary.title_generation.enabled || answer.trim().is_empty() {
        return;
    }
    let state = Arc::clone(state);
    let live = live.clone();
    let request = request(user, answer);
    tokio::spawn(async move {
        let id = live.id();
        let check = id.clone();
        let untitled = state
            .store
            .read(move |conn| {
                let row = store::resolve_conversation(conn, &check)?;
                Ok(row.title.is_none())
            })
            .await;
        if !matches!(untitled, Ok(true)) {
            return;
        }
        let cancel = state.shutdown.child_token();
        match make(&state, &id, &request, &cancel).await {
            Ok(Some(title)) => live.emit_transient(
                "",
                Kind::Notice(pb::Notice {
                    kind: "title_set".into(),
                    text: title,
                }),
            ),
            Ok(None) => {}
            Err(e) => tracing::warn!(session = %id, error = %e, "no title for the session"),
        }
    });
}

/// Ask for a title and store it unless one was set meanwhile.
async fn make(
    state: &Arc<TurnRunner>,
    id: &str,
    request: &ChatRequest,
    cancel: &CancellationToken,
) -> Result<Option<String>, String> {
    let answer = auxiliary::complete(state, AuxiliaryTask::TitleGeneration, request, cancel)
        .await
        .map_err(|e| e.to_string())?;
    let Some(title) = clean(&answer) else {
        return Ok(None);
    };
    let id = id.to_string();
    let stored = title.clone();
    let set = state
        .store
        .write(move |tx| {
            let row = store::resolve_conversation(tx, &id)?;
            if row.title.is_some() {
                return Ok(false);
            }
            store::set_title(tx, &row.id, Some(&stored))?;
            Ok::<_, StoreError>(true)
        })
        .await
        .map_err(|e| e.to_string())?;
    Ok(set.then_some(title))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_become_clean_titles() {
        assert_eq!(
            clean("\"Deploying nginx on Debian.\"").as_deref(),
            Some("Deploying nginx on Debian")
        );
        assert_eq!(
            clean("Title: Rust build errors\nmore").as_deref(),
            Some("Rust build errors")
        );
        assert_eq!(
            clean("  \n **配置 nginx 反向代理。**").as_deref(),
            Some("配置 nginx 反向代理")
        );
        assert_eq!(clean(" \n \"\" "), None);
        assert_eq!(clean(&"x".repeat(200)).map(|t| t.len()), Some(80));
    }

    #[test]
    fn the_request_carries_the_exchange_and_no_tools() {
        let r = request("how do I list files", &"a".repeat(2000));
        assert!(r.tools.is_empty());
        assert!(r.messages[0].content.contains("User: how do I list files"));
        assert!(r.messages[0].content.len() < 1400);
    }
}
