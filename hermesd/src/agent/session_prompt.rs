//! A session's system prompt: built from its layers on the first turn (identity, guidance, the
//! frozen memory snapshot, the skills index, context files, …, and for a chat's conversation the
//! session context) and stored, then reused byte for byte on every later turn.

use super::TurnRunner;
use std::sync::Arc;

use super::{
    TurnError,
    prompt::{self, PromptInputs},
    session_context::{self, SessionContext},
    settings::TurnSettings,
};
use crate::{
    memory::MemorySettings,
    skills,
    store::{self, SessionRow},
    tools::SessionSkills,
};

/// What a session's prompt is built for: its tools and skills, settings, model and directory.
pub(super) struct PromptFor<'a> {
    pub tools: &'a [&'a str],
    pub session_skills: &'a Arc<SessionSkills>,
    pub settings: &'a TurnSettings,
    pub model: &'a str,
    pub cwd: &'a std::path::Path,
}

/// The session's stored system prompt, built and stored on its first turn.
pub(super) async fn system_prompt(
    state: &Arc<TurnRunner>,
    session: &SessionRow,
    inputs: &PromptFor<'_>,
) -> Result<String, TurnError> {
    let id = session.id.clone();
    if let Some(stored) = state
        .store
        .read(move |conn| store::system_prompt(conn, &id))
        .await?
    {
        return Ok(stored);
    }
    // A segment a compression started (on demand, between turns) continues its parent's prompt.
    let continues = session.conversation_id != session.id;
    let parent = session.parent_session_id.clone().filter(|_| continues);
    if let Some(parent) = parent {
        let old = state
            .store
            .read(move |conn| store::system_prompt(conn, &parent))
            .await?;
        if let Some(old) = old {
            return rebuilt_system_prompt(state, session, &old, inputs).await;
        }
    }
    let built = build(state, session, inputs).await?;
    store_prompt(state, &session.id, built).await
}

/// The prompt of `segment`, the segment a compression just started, whose conversation's prompt
/// was `old`: built again, so what the learning loop saved or removed since (memory, skills)
/// reaches the model. Built from unchanged layers it is `old` byte for byte (the start time is
/// the conversation's), so the provider's prompt cache stays, as in Hermes.
pub(super) async fn rebuilt_system_prompt(
    state: &Arc<TurnRunner>,
    segment: &SessionRow,
    old: &str,
    inputs: &PromptFor<'_>,
) -> Result<String, TurnError> {
    let prompt = build(state, segment, inputs).await?;
    let unchanged = prompt == old;
    tracing::debug!(session = %segment.id, rebuilt = !unchanged, "system prompt after compression");
    store_prompt(state, &segment.id, prompt).await
}

async fn store_prompt(
    state: &Arc<TurnRunner>,
    session_id: &str,
    prompt: String,
) -> Result<String, TurnError> {
    let (id, stored) = (session_id.to_string(), prompt.clone());
    state
        .store
        .write(move |tx| store::set_system_prompt(tx, &id, &stored))
        .await?;
    Ok(prompt)
}

/// Build the prompt from its layers, reading memory and skills as they are now.
async fn build(
    state: &Arc<TurnRunner>,
    session: &SessionRow,
    inputs: &PromptFor<'_>,
) -> Result<String, TurnError> {
    let home = state.home.dir.clone();
    let cwd = inputs.cwd.to_path_buf();
    let tools: Vec<String> = inputs.tools.iter().map(|t| t.to_string()).collect();
    let system_message = inputs.settings.system_message.clone();
    let enforcement = inputs.settings.enforcement.clone();
    let model = inputs.model.to_string();
    let platform = session.source.clone();
    // When the conversation began (its first segment's creation): the same in every segment,
    // so a prompt built again from unchanged layers is the same prompt.
    let conversation = session.conversation_id.clone();
    let began = state
        .store
        .read(move |conn| store::get_session(conn, &conversation))
        .await?
        .map_or(session.created_at, |first| first.created_at);
    let started = chrono::DateTime::from_timestamp_millis(began)
        .map_or_else(chrono::Local::now, |t| t.with_timezone(&chrono::Local))
        .format("%A, %B %d, %Y %H:%M")
        .to_string();
    // Cron runs start without the user's memory, as in Hermes.
    let memory_settings =
        (platform != "cron").then(|| MemorySettings::new(&state.config().settings.memory));
    let skills_index = skills_index(state, inputs.session_skills).await;
    let prompt = tokio::task::spawn_blocking(move || {
        let memory = memory_settings
            .map(|m| m.snapshot_block(&home))
            .unwrap_or_default();
        let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
        prompt::build(&PromptInputs {
            home: &home,
            cwd: &cwd,
            tools: &tools,
            system_message: system_message.as_deref(),
            enforcement,
            memory: Some(&memory),
            skills: Some(&skills_index),
            model: &model,
            platform: &platform,
            started: &started,
        })
    })
    .await
    .map_err(|e| TurnError::Task(e.to_string()))?;
    let prompt = match chat_context(state, session).await {
        Some(block) => format!("{prompt}\n\n{block}"),
        None => prompt,
    };
    Ok(prompt)
}

/// The session-context block of a conversation in a chat (none for the others): built with the
/// prompt, so it stays byte-stable for as long as the prompt does.
async fn chat_context(state: &Arc<TurnRunner>, session: &SessionRow) -> Option<String> {
    let conversation = session.conversation_id.clone();
    let place = state
        .store
        .read(move |conn| store::conversation_place(conn, &conversation))
        .await
        .ok()
        .flatten()?;
    let mut targets = state.tool_services.messenger().targets().await;
    targets.sort_by(|a, b| a.platform.cmp(&b.platform));
    let platforms: Vec<String> = targets.iter().map(|t| t.platform.clone()).collect();
    let homes: Vec<(String, store::ChatPlace)> = targets
        .iter()
        .filter_map(|t| {
            let home = t.home.as_ref()?;
            let place = store::ChatPlace {
                platform: t.platform.clone(),
                chat_id: home.chat_id.clone(),
                thread_id: home.thread_id.clone(),
                name: home.name.clone(),
                ..store::ChatPlace::default()
            };
            Some((t.platform.clone(), place))
        })
        .collect();
    let home_dir = &state.home.dir;
    let shown = state
        .tool_services
        .paths
        .user_home()
        .and_then(|user| home_dir.strip_prefix(user).ok())
        .map_or_else(
            || home_dir.display().to_string(),
            |rest| format!("~/{}", rest.display()),
        );
    Some(session_context::render(&SessionContext {
        place: &place,
        platforms: &platforms,
        homes: &homes,
        redact_pii: state.config().settings.gateway.redact_pii,
        hermes_home: &shown,
    }))
}

/// The skills index for a new session's system prompt: the skills it may see and use; empty
/// without the skill tools. A failure to read the skills leaves the index out (logged).
async fn skills_index(state: &Arc<TurnRunner>, session_skills: &Arc<SessionSkills>) -> String {
    if !session_skills.tools.contains("skill_view") {
        return String::new();
    }
    let services = &state.tool_services;
    let settings = services.skills_settings();
    let view = match services
        .skills
        .view(&state.store, settings.roots(&state.home.dir))
        .await
    {
        Ok(view) => view,
        Err(e) => {
            tracing::warn!(error = %e, "skills left out of the system prompt");
            return String::new();
        }
    };
    skills::build_index(&view.visible, &session_skills.activation(&settings))
}
