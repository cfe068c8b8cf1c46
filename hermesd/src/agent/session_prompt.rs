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

/// The session's stored system prompt, built and stored on its first turn.
pub(super) async fn system_prompt(
    state: &Arc<TurnRunner>,
    session: &SessionRow,
    tools: &[&'static str],
    session_skills: &Arc<SessionSkills>,
    settings: &TurnSettings,
    model: &str,
    cwd: &std::path::Path,
) -> Result<String, TurnError> {
    let id = session.id.clone();
    if let Some(stored) = state
        .store
        .read(move |conn| store::system_prompt(conn, &id))
        .await?
    {
        return Ok(stored);
    }
    let home = state.home.dir.clone();
    let cwd = cwd.to_path_buf();
    let tools: Vec<&'static str> = tools.to_vec();
    let system_message = settings.system_message.clone();
    let enforcement = settings.enforcement.clone();
    let model = model.to_string();
    let platform = session.source.clone();
    let started = chrono::Local::now()
        .format("%A, %B %d, %Y %H:%M")
        .to_string();
    // Cron runs start without the user's memory, as in Hermes.
    let memory_settings =
        (platform != "cron").then(|| MemorySettings::new(&state.config().settings.memory));
    let skills_index = skills_index(state, session_skills).await;
    let built = tokio::task::spawn_blocking(move || {
        let memory = memory_settings
            .map(|m| m.snapshot_block(&home))
            .unwrap_or_default();
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
    let built = match chat_context(state, session).await {
        Some(block) => format!("{built}\n\n{block}"),
        None => built,
    };
    let id = session.id.clone();
    let prompt = built.clone();
    state
        .store
        .write(move |tx| store::set_system_prompt(tx, &id, &prompt))
        .await?;
    Ok(built)
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
