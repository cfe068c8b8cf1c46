//! The learning loop: after a turn, counters decide whether a background review runs — a
//! separate agent in its own session (source `review`, a subagent of the conversation) that gets
//! the conversation as messages, a small budget, and only the memory and skill tools, and decides
//! what to remember and which skill to create or patch. It never blocks the user's turn, never
//! reviews itself, and what it saved is announced on the conversation as a `Notice`.

use super::TurnRunner;
use std::sync::Arc;

use hermes_proto::pb::{self, session_event::Kind};
use serde_json::Value;

use super::{
    TurnInput, history::parse_tool_calls, review_prompts, session::spawn_turn, turn::TurnOutcome,
};
use crate::{
    config::settings::ReviewSection,
    hub::TurnHandle,
    llm,
    store::{self, Lineage, NewSession, SessionRow},
};

/// The source of review sessions (they are hidden from `sessions list` unless asked for).
pub const REVIEW_SOURCE: &str = "review";
/// The tools a review may use.
pub const REVIEW_TOOLS: [&str; 4] = ["memory", "skills_list", "skill_view", "skill_manage"];

/// Per-session counters (kept while the session is loaded, as Hermes keeps them per agent).
#[derive(Debug, Default)]
pub struct LearningCounters {
    turns_since_memory: u32,
    iters_since_skill: u32,
}

/// What a review looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Memory,
    Skills,
    Both,
}

impl LearningCounters {
    /// Count a finished turn; the focus of the review it calls for, if any (counters reset).
    fn count(
        &mut self,
        nudges: &ReviewSection,
        outcome: &TurnOutcome,
        tools: &[&str],
    ) -> Option<Focus> {
        let used = |name: &str| outcome.tools_used.iter().any(|t| t == name);
        let memory = nudges.memory_interval > 0 && tools.contains(&"memory");
        let skills = nudges.skill_interval > 0 && tools.contains(&"skill_manage");
        if memory {
            self.turns_since_memory = if used("memory") {
                0
            } else {
                self.turns_since_memory + 1
            };
        }
        if skills {
            self.iters_since_skill = if used("skill_manage") {
                0
            } else {
                self.iters_since_skill + outcome.tool_iterations
            };
        }
        let review_memory = memory && self.turns_since_memory >= nudges.memory_interval;
        let review_skills = skills && self.iters_since_skill >= nudges.skill_interval;
        if review_memory {
            self.turns_since_memory = 0;
        }
        if review_skills {
            self.iters_since_skill = 0;
        }
        match (review_memory, review_skills) {
            (true, true) => Some(Focus::Both),
            (true, false) => Some(Focus::Memory),
            (false, true) => Some(Focus::Skills),
            (false, false) => None,
        }
    }
}

/// After a finished turn of `session`: count it, and start a review in the background when due.
pub fn after_turn(
    state: &Arc<TurnRunner>,
    live: &TurnHandle,
    session: &SessionRow,
    outcome: &TurnOutcome,
    tools: &[&str],
) {
    let reviewed = ![REVIEW_SOURCE, "cron", super::delegation::SUBAGENT_SOURCE]
        .contains(&session.source.as_str());
    if !reviewed {
        return;
    }
    let nudges = state.config().settings.review;
    let focus =
        live.memo(|counters: &mut LearningCounters| counters.count(&nudges, outcome, tools));
    if let Some(focus) = focus {
        let state = Arc::clone(state);
        let session = session.clone();
        let hub_state = Arc::clone(&state);
        // Tracked by the hub: a stopping daemon interrupts the review's turn and waits for it.
        drop(hub_state.hub.spawn(async move {
            if let Err(e) = review(&state, &session, focus).await {
                tracing::warn!(session = %session.id, error = %e, "background review failed");
            }
        }));
    }
}

/// Run one review of `parent` and announce what it saved.
async fn review(state: &Arc<TurnRunner>, parent: &SessionRow, focus: Focus) -> Result<(), String> {
    let config = state.config();
    let client = state.http_client().await.map_err(|e| e.to_string())?;
    let chain = llm::chain_from_config(
        &config.settings.llm,
        &config.env,
        client,
        &state.credentials,
    )
    .await
    .map_err(|e| e.to_string())?;
    let new = NewSession {
        source: REVIEW_SOURCE.into(),
        title: Some(format!("background review of {}", parent.id)),
        model: chain
            .endpoints
            .first()
            .map(llm::Endpoint::label)
            .unwrap_or_default(),
        cwd: parent.cwd.clone(),
        parent_session_id: Some(parent.id.clone()),
        lineage: Lineage::Subagent,
    };
    let parent_id = parent.id.clone();
    let (row, newest) = state
        .store
        .write(move |tx| {
            let row = store::insert_session(tx, &new)?;
            // The conversation as it stands now (a compression may have moved it on).
            let newest = store::resolve_conversation(tx, &parent_id)?;
            Ok((row, newest.id))
        })
        .await
        .map_err(|e| e.to_string())?;
    tracing::info!(session = %parent.id, review = %row.id, ?focus, "background review started");
    let input = TurnInput {
        text: review_prompts::prompt(focus).to_string(),
        source_client: "hermesd review".into(),
        yolo: false,
        busy: None,
        toolsets: Vec::new(),
        // The conversation is read, not copied: the review session holds only its own work.
        context_from: Some(newest),
        turn_id: None,
        stop: None,
        delegated: None,
    };
    let review_id = row.id.clone();
    let outcome = spawn_turn(state, row, chain, input)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let saved = saved_changes(state, &review_id).await?;
    tracing::info!(
        session = %parent.id, review = %review_id, calls = outcome.tool_calls,
        saved = saved.len(), "background review finished"
    );
    announce(state, &parent.id, &saved).await
}

/// One change a review made, as the user is told.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Saved {
    kind: &'static str,
    text: String,
}

/// The successful memory and skill writes of the review session (its messages are its own).
async fn saved_changes(state: &Arc<TurnRunner>, review_id: &str) -> Result<Vec<Saved>, String> {
    let id = review_id.to_string();
    let rows = state
        .store
        .read(move |conn| store::list_messages(conn, &id, 0, 0))
        .await
        .map_err(|e| e.to_string())?;
    let mut calls = std::collections::HashMap::new();
    let mut saved = Vec::new();
    for row in rows {
        if let Some(text) = row.tool_calls.as_deref() {
            for call in parse_tool_calls(text) {
                calls.insert(call.id.clone(), call);
            }
            continue;
        }
        let (Some(call_id), "tool") = (row.tool_call_id.as_deref(), row.role.as_str()) else {
            continue;
        };
        let Some(call) = calls.get(call_id) else {
            continue;
        };
        let result: Value = serde_json::from_str(&row.content).unwrap_or(Value::Null);
        if result.get("success") != Some(&Value::Bool(true)) {
            continue;
        }
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let arg = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or_default();
        let change = match (call.name.as_str(), arg("action")) {
            ("memory", action) => Saved {
                kind: "memory_saved",
                text: format!(
                    "{} {}: {}",
                    if arg("target") == "user" {
                        "user profile"
                    } else {
                        "memory"
                    },
                    past_tense(action),
                    preview(if arg("content").is_empty() {
                        arg("old_text")
                    } else {
                        arg("content")
                    })
                ),
            },
            ("skill_manage", "create") => Saved {
                kind: "skill_created",
                text: format!("saved a skill: {}", arg("name")),
            },
            ("skill_manage", action) => Saved {
                kind: "skill_patched",
                text: format!("{} skill {}", past_tense(action), arg("name")),
            },
            _ => continue,
        };
        if !saved.contains(&change) {
            saved.push(change);
        }
    }
    Ok(saved)
}

fn past_tense(action: &str) -> &'static str {
    match action {
        "add" => "added",
        "replace" => "updated",
        "remove" => "removed",
        "patch" | "edit" => "improved",
        "write_file" => "added a file to",
        "remove_file" => "removed a file from",
        "delete" => "deleted",
        _ => "changed",
    }
}

fn preview(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// Tell the conversation's clients (and its event log) what the review saved.
async fn announce(state: &Arc<TurnRunner>, parent_id: &str, saved: &[Saved]) -> Result<(), String> {
    if saved.is_empty() {
        return Ok(());
    }
    let id = parent_id.to_string();
    let parent = state
        .store
        .read(move |conn| store::resolve_conversation(conn, &id))
        .await
        .map_err(|e| e.to_string())?;
    let live = state.hub.load(&parent);
    for change in saved {
        let notice = Kind::Notice(pb::Notice {
            kind: change.kind.into(),
            text: change.text.clone(),
        });
        if let Err(e) = live.emit_durable("", notice).await {
            tracing::warn!(session = %parent.id, error = %e, "review notice not stored");
        }
    }
    state.hub.release(live);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{agent::turn::TurnEnd, llm::Usage};

    fn outcome(tools_used: &[&str], tool_iterations: u32) -> TurnOutcome {
        TurnOutcome {
            session_id: "s".into(),
            answer: String::new(),
            usage: Usage::default(),
            cost_usd: None,
            cost_status: crate::llm::CostStatus::Unknown,
            answered_by: String::new(),
            iterations: tool_iterations + 1,
            tool_calls: tool_iterations,
            tool_iterations,
            tools_used: tools_used.iter().map(|t| t.to_string()).collect(),
            end: TurnEnd::Finished,
        }
    }

    const TOOLS: [&str; 3] = ["memory", "skill_manage", "terminal"];

    #[test]
    fn memory_review_every_n_user_turns_reset_by_using_memory() {
        let nudges = ReviewSection {
            memory_interval: 3,
            skill_interval: 0,
            budget: 8,
        };
        let mut c = LearningCounters::default();
        assert_eq!(c.count(&nudges, &outcome(&[], 0), &TOOLS), None);
        assert_eq!(c.count(&nudges, &outcome(&["memory"], 1), &TOOLS), None);
        assert_eq!(c.count(&nudges, &outcome(&[], 0), &TOOLS), None);
        assert_eq!(c.count(&nudges, &outcome(&[], 0), &TOOLS), None);
        assert_eq!(
            c.count(&nudges, &outcome(&[], 0), &TOOLS),
            Some(Focus::Memory)
        );
        assert_eq!(c.count(&nudges, &outcome(&[], 0), &TOOLS), None);
    }

    #[test]
    fn skill_review_after_n_tool_iterations_without_skill_manage() {
        let nudges = ReviewSection {
            memory_interval: 0,
            skill_interval: 10,
            budget: 8,
        };
        let mut c = LearningCounters::default();
        assert_eq!(c.count(&nudges, &outcome(&["terminal"], 6), &TOOLS), None);
        assert_eq!(
            c.count(&nudges, &outcome(&["terminal"], 4), &TOOLS),
            Some(Focus::Skills)
        );
        assert_eq!(c.count(&nudges, &outcome(&["terminal"], 9), &TOOLS), None);
        assert_eq!(
            c.count(&nudges, &outcome(&["skill_manage"], 12), &TOOLS),
            None
        );
    }

    #[test]
    fn no_review_without_the_tools_or_with_zero_intervals() {
        let nudges = ReviewSection {
            memory_interval: 1,
            skill_interval: 1,
            budget: 8,
        };
        let mut c = LearningCounters::default();
        assert_eq!(c.count(&nudges, &outcome(&[], 5), &["terminal"]), None);
        let off = ReviewSection {
            memory_interval: 0,
            skill_interval: 0,
            budget: 8,
        };
        assert_eq!(c.count(&off, &outcome(&[], 50), &TOOLS), None);
        assert_eq!(
            c.count(&nudges, &outcome(&[], 1), &TOOLS),
            Some(Focus::Both)
        );
    }
}
