//! `/compress` (`Sessions.Compress`): compressing a conversation on demand, while no turn runs in
//! it, whatever its size; the cooldown after a failed summary does not apply.

use super::TurnRunner;
use std::sync::Arc;

use super::{
    compaction::{Compacted, CompactionSettings, Compactor, Skipped, Trigger},
    compress, history,
};
use crate::{
    llm::{self, ChatMessage},
    store::{self, StoreError},
};

/// Why `/compress` did nothing.
#[derive(Debug, thiserror::Error)]
pub enum CompressError {
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("a turn is running in session {0}; compress when it is over")]
    Busy(String),
    #[error("{0}")]
    Setup(String),
    #[error("nothing to compress: {0}")]
    Skipped(String),
}

/// `/compress`: compress the conversation `id` now, whatever its size (the cooldown after a
/// failed summary does not apply), while no turn runs in it.
pub async fn compress_conversation(
    state: &Arc<TurnRunner>,
    id: &str,
) -> Result<Compacted, CompressError> {
    let lookup = id.to_string();
    let row = state
        .store
        .read(move |conn| store::resolve_reference(conn, &lookup))
        .await?;
    let live = state.hub.load(&row);
    let result = async {
        let Ok(_turn) = live.turn_lock.try_lock() else {
            return Err(CompressError::Busy(row.id.clone()));
        };
        // The newest segment now that no turn can move it.
        let segment = live.id();
        let lookup = segment.clone();
        let messages: Vec<ChatMessage> = state
            .store
            .read(move |conn| store::list_messages(conn, &lookup, 0, 0))
            .await?
            .into_iter()
            .filter_map(history::to_chat)
            .collect();
        let config = state.config();
        let client = state.http_client().await.map_err(CompressError::Setup)?;
        let chain = llm::chain_from_config(&config.settings.llm, &config.env, client, &state.credentials)
            .await
            .map_err(|e| CompressError::Setup(e.to_string()))?;
        let context_length = match chain.endpoints.first() {
            Some(endpoint) => {
                state
                    .model_metadata
                    .context_length(
                        &chain.client,
                        endpoint,
                        config.settings.llm.context_length,
                    )
                    .await
                    .0
            }
            None => llm::CONTEXT_FLOOR,
        };
        let cancel = state.shutdown.child_token();
        let compactor = Compactor {
            state,
            live: &crate::hub::TurnHandle::new(std::sync::Arc::clone(&live)),
            settings: CompactionSettings::new(&config.settings.compression),
            context_length,
            cancel: &cancel,
            turn_id: "",
        };
        let tokens = compress::estimate_messages(&messages);
        compactor
            .compact(&segment, &messages, Trigger::Manual)
            .await?
            .map_err(|why| {
                CompressError::Skipped(match why {
                    Skipped::NoGain => format!(
                        "a summary would not be smaller than the {} messages (~{tokens} tokens) it replaces",
                        messages.len()
                    ),
                    Skipped::Interrupted => "the daemon is stopping".into(),
                    _ => format!(
                        "the conversation is only {} messages; the first and last ones are always kept",
                        messages.len()
                    ),
                })
            })
    }
    .await;
    state.hub.release(live);
    result
}
