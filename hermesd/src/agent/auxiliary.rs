//! Calls to the auxiliary model (titles, compression summaries, `vision_analyze`): the model configured under
//! `auxiliary.<task>`, else the main one, with the main chain as fallback; no tool schemas, no
//! streaming to clients, a time limit, and cancellable.

use super::TurnRunner;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::{
    config::settings::{AuxiliaryTask, ImageInputMode},
    llm::{self, Chain, ChatRequest},
};

/// Why an auxiliary call gave no text.
#[derive(Debug, thiserror::Error)]
pub enum AuxError {
    #[error("{0}")]
    Setup(String),
    #[error("{0}")]
    Model(#[from] llm::LlmError),
    #[error("no answer within {0:.0} s")]
    TimedOut(f64),
    #[error("interrupted")]
    Interrupted,
    #[error("the model returned no text")]
    Empty,
}

/// The chain for `task`: its own endpoint first when configured, then the main chain.
pub async fn chain(state: &Arc<TurnRunner>, task: AuxiliaryTask) -> Result<Chain, AuxError> {
    let config = state.config();
    let client = state.http_client().await.map_err(AuxError::Setup)?;
    let llm_section = &config.settings.llm;
    let mut chain = llm::chain_from_config(llm_section, &config.env, client, &state.credentials)
        .await
        .map_err(|e| AuxError::Setup(e.to_string()))?;
    // Images go only to models that take them: the main chain backs the vision model up only
    // when the main model sees.
    if task == AuxiliaryTask::Vision && !main_sees_images(state, &chain, true).await {
        chain.endpoints.clear();
    }
    let own = &config.settings.auxiliary.task(task).endpoint;
    if let Some(own) = llm::auxiliary_endpoint(llm_section, own, task.key(), &config.env)
        .map_err(|e| AuxError::Setup(e.to_string()))?
    {
        chain.endpoints.insert(0, own);
    }
    Ok(chain)
}

/// Whether `chain`'s main model takes images: `agent.image_input_mode: native` says so, else
/// `model.supports_vision`, else what its endpoint says (asked when `ask` and not yet known),
/// else the shipped table.
pub async fn main_sees_images(state: &TurnRunner, chain: &Chain, ask: bool) -> bool {
    let config = state.config();
    if config.settings.agent.image_input_mode == ImageInputMode::Native {
        return true;
    }
    let setting = config.settings.llm.supports_vision;
    match chain.endpoints.first() {
        Some(endpoint) if ask => {
            let metadata = &state.model_metadata;
            metadata
                .supports_vision(&chain.client, endpoint, setting)
                .await
        }
        Some(endpoint) => state
            .model_metadata
            .supports_vision_known(endpoint, setting),
        None => false,
    }
}

/// Run `request` on `task`'s chain within `auxiliary.<task>.timeout`; the text of the answer.
pub async fn complete(
    state: &Arc<TurnRunner>,
    task: AuxiliaryTask,
    request: &ChatRequest,
    cancel: &CancellationToken,
) -> Result<String, AuxError> {
    let limit = state.config().settings.auxiliary.task(task).timeout;
    let chain = chain(state, task).await?;
    let mut ignore = |_: llm::StreamEvent| {};
    let mut sink: llm::EventSink<'_> = &mut ignore;
    let mut notices = |_: llm::ChainNotice| {};
    let call = chain.complete(request, &mut sink, &mut notices);
    let completion = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(AuxError::Interrupted),
        result = tokio::time::timeout(limit, call) => match result {
            Ok(done) => done?,
            Err(_) => return Err(AuxError::TimedOut(limit.as_secs_f64())),
        },
    };
    let text = completion.text.trim().to_string();
    if text.is_empty() {
        return Err(AuxError::Empty);
    }
    Ok(text)
}
