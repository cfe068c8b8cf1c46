//! `Sessions.Send`: store the user's message, run one model turn through the provider chain, store
//! the answer. The user's message is stored before the model is called, so a failing model never
//! loses it.

use std::sync::Arc;

use crate::{
    llm::{
        self, ChainNotice, ChatMessage, ChatRequest, Completion, LlmError, Role, StreamEvent, Usage,
    },
    state::DaemonState,
    store::{self, Lineage, NewMessage, NewSession, StoreError},
};

/// What a caller asks for.
#[derive(Debug, Clone)]
pub struct SendInput {
    /// An existing conversation, or `None` for a new session.
    pub session_id: Option<String>,
    pub text: String,
    pub cwd: String,
    pub source: String,
}

/// The result of one turn.
#[derive(Debug, Clone)]
pub struct SendOutcome {
    pub session_id: String,
    pub answer: String,
    pub usage: Usage,
    /// Estimated cost in USD; `None` when the model's prices are unknown.
    pub cost_usd: Option<f64>,
    pub answered_by: String,
    pub iterations: u32,
    pub tool_calls: u32,
}

/// Why a turn failed.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("{0}")]
    Setup(#[from] llm::SettingsError),
    #[error("{0}")]
    Http(String),
    /// The model failed; the session id is where the user's message was stored.
    #[error("{error}")]
    Model { session_id: String, error: LlmError },
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("a message is required")]
    Empty,
}

/// Run one turn.
pub async fn send(state: &Arc<DaemonState>, input: SendInput) -> Result<SendOutcome, TurnError> {
    if input.text.trim().is_empty() {
        return Err(TurnError::Empty);
    }
    let config = state.config();
    let client = state.http_client().await.map_err(TurnError::Http)?;
    let chain = llm::chain_from_config(&config.tree, &config.env, client).await?;
    let model_label = chain
        .endpoints
        .first()
        .map(llm::Endpoint::label)
        .unwrap_or_default();

    let home = state.home.dir.clone();
    let user_text = input.text.clone();
    let (session_id, system, history) = state
        .store
        .write(move |tx| {
            let row = match &input.session_id {
                Some(id) => store::resolve_conversation(tx, id)?,
                None => store::insert_session(
                    tx,
                    &NewSession {
                        source: input.source.clone(),
                        title: None,
                        model: model_label,
                        cwd: input.cwd.clone(),
                        parent_session_id: None,
                        lineage: Lineage::Root,
                    },
                )?,
            };
            let system = match store::system_prompt(tx, &row.id)? {
                Some(prompt) => prompt,
                None => {
                    let prompt = super::identity::identity(&home);
                    store::set_system_prompt(tx, &row.id, &prompt)?;
                    prompt
                }
            };
            store::append_message(
                tx,
                &row.id,
                &NewMessage {
                    role: "user".into(),
                    content: user_text,
                    ..NewMessage::default()
                },
            )?;
            let history = store::list_messages(tx, &row.id, 0, 0)?;
            Ok((row.id, system, history))
        })
        .await?;

    let request = ChatRequest {
        system,
        messages: history
            .into_iter()
            .filter_map(|m| {
                let role = Role::parse(&m.role)?;
                Some(ChatMessage {
                    role: Some(role),
                    content: m.content,
                    tool_calls: m
                        .tool_calls
                        .as_deref()
                        .and_then(|t| serde_json::from_str(t).ok())
                        .unwrap_or_default(),
                    tool_call_id: m.tool_call_id,
                    name: m.tool_name,
                })
            })
            .collect(),
        tools: Vec::new(),
        max_tokens: None,
    };
    let mut ignore_events = |_: StreamEvent| {};
    let mut sink: llm::EventSink<'_> = &mut ignore_events;
    let log_id = session_id.clone();
    let mut notice =
        |n: ChainNotice| tracing::info!(session = %log_id, notice = ?n, "model call recovery");
    let completion = chain
        .complete(&request, &mut sink, &mut notice)
        .await
        .map_err(|error| TurnError::Model {
            session_id: session_id.clone(),
            error,
        })?;
    let cost_usd = chain
        .endpoints
        .iter()
        .find(|e| e.label() == completion.answered_by)
        .and_then(|e| {
            llm::cost_usd(
                &e.provider,
                &e.model,
                completion.usage.input_tokens,
                completion.usage.output_tokens,
            )
        });
    store_answer(state, &session_id, &completion, cost_usd).await?;
    Ok(SendOutcome {
        session_id,
        answer: completion.text,
        usage: completion.usage,
        cost_usd,
        answered_by: completion.answered_by,
        iterations: 1,
        tool_calls: 0,
    })
}

async fn store_answer(
    state: &DaemonState,
    session_id: &str,
    completion: &Completion,
    cost_usd: Option<f64>,
) -> Result<(), StoreError> {
    let id = session_id.to_string();
    let message = NewMessage {
        role: "assistant".into(),
        content: completion.text.clone(),
        reasoning: Some(completion.reasoning.clone()).filter(|r| !r.is_empty()),
        finish_reason: Some(completion.finish_reason.clone()),
        input_tokens: Some(completion.usage.input_tokens as i64),
        output_tokens: Some(completion.usage.output_tokens as i64),
        ..NewMessage::default()
    };
    let model = completion.answered_by.clone();
    state
        .store
        .write(move |tx| {
            store::append_message(tx, &id, &message)?;
            // Cost stays NULL (unknown) until a priced call adds to it.
            tx.execute(
                "UPDATE sessions SET model = ?1,
                     cost_usd = CASE WHEN ?3 IS NULL THEN cost_usd ELSE coalesce(cost_usd, 0) + ?3 END
                 WHERE id = ?2",
                rusqlite::params![model, id, cost_usd],
            )
            .map_err(StoreError::sql("record session model"))?;
            Ok(())
        })
        .await
}
