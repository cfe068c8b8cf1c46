//! Keeping a turn's requests inside the model's context window: the estimate before each call,
//! compression when it passes the threshold or the provider refuses the request as too large
//! (at most [`compaction::MAX_PASSES`] per request), and limits learned from those refusals.

use super::{
    compaction::{self, Compactor, Trigger},
    compress::{self, TokenMeter},
    session_prompt::{PromptFor, rebuilt_system_prompt},
    turn::{Stop, Tally, Turn, TurnEnd, model_failure},
};
use crate::{
    llm::{self, ChatMessage, Completion, LlmError},
    store::{self, StoreError},
};

impl Turn {
    /// One model call with the context kept under the model's window: compress first when the
    /// estimate passes the threshold, and again when the provider says the request is too
    /// large — at most [`compaction::MAX_PASSES`] compressions for this request.
    pub(super) async fn call_with_room(
        &self,
        messages: &mut Vec<ChatMessage>,
        grace: bool,
        tally: &mut Tally,
        meter: &mut TokenMeter,
    ) -> Result<Result<Completion, TurnEnd>, StoreError> {
        let tools = if grace {
            &[][..]
        } else {
            self.toolbox.schemas()
        };
        let mut passes = 0;
        loop {
            let raw = compress::estimate_request(&self.system_prompt(), tools, messages);
            let estimate = meter.estimate(raw);
            // Below the threshold of the smallest window a model is assumed to have, the real
            // window need not even be looked up.
            let configured = self.state.config().settings.llm.context_length;
            let floor = configured.unwrap_or(llm::CONTEXT_FLOOR);
            let near = self.compaction.enabled
                && self.compaction.compress.should_compress(estimate, floor);
            if near
                && passes < compaction::MAX_PASSES
                && self.compactor().await.over_threshold(estimate)
            {
                passes += 1;
                if self.compress_into(messages, Trigger::Size).await? {
                    continue;
                }
            }
            match self.call_model(messages, grace, tally).await {
                Ok(completion) => {
                    meter.observe(raw, self.prompt_tokens(&completion));
                    return Ok(Ok(completion));
                }
                Err(Stop::Interrupted) => return Ok(Err(TurnEnd::Interrupted)),
                Err(Stop::Failed(end)) => return Ok(Err(end)),
                Err(Stop::TooLarge(e)) => {
                    let known = self.compactor().await.context_length;
                    self.learn_limit(
                        &e,
                        known,
                        compress::estimate_request(&self.system_prompt(), tools, &[]),
                    );
                    passes += 1;
                    if passes > compaction::MAX_PASSES
                        || !self.compress_into(messages, Trigger::Overflow).await?
                    {
                        return Ok(Err(model_failure(&e)));
                    }
                }
            }
        }
    }

    /// Prompt tokens the provider counted for a call (Anthropic reports cached ones apart).
    fn prompt_tokens(&self, completion: &Completion) -> u64 {
        let u = &completion.usage;
        let anthropic = self.chain.endpoints.iter().any(|e| {
            e.label() == completion.answered_by && e.api_mode == llm::ApiMode::AnthropicMessages
        });
        if anthropic {
            u.input_tokens + u.cache_read_tokens + u.cache_write_tokens
        } else {
            u.input_tokens
        }
    }

    async fn compactor(&self) -> Compactor<'_> {
        let context_length = *self
            .context_length
            .get_or_init(|| async {
                let Some(endpoint) = self.chain.endpoints.first() else {
                    return llm::CONTEXT_FLOOR;
                };
                let configured = self.state.config().settings.llm.context_length;
                self.state
                    .model_metadata
                    .context_length(&self.chain.client, endpoint, configured)
                    .await
                    .0
            })
            .await;
        Compactor {
            state: &self.state,
            live: &self.live,
            settings: self.compaction,
            context_length,
            cancel: &self.cancel,
            turn_id: &self.turn_id,
        }
    }

    /// Compress the context into a new segment and go on there; false when nothing changed.
    async fn compress_into(
        &self,
        messages: &mut Vec<ChatMessage>,
        trigger: Trigger,
    ) -> Result<bool, StoreError> {
        self.flush_writes().await?;
        let segment = self.session_id();
        let compactor = self.compactor().await;
        let Ok(done) = compactor.compact(&segment, messages, trigger).await? else {
            return Ok(false);
        };
        if let Ok(mut current) = self.segment.lock() {
            current.clone_from(&done.segment_id);
        }
        *messages = done.messages;
        self.rebuild_system_prompt(&done.segment_id).await?;
        Ok(true)
    }

    /// The segment's system prompt as the next request sends it.
    pub(super) fn system_prompt(&self) -> String {
        self.system.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// After a compression: the new segment's prompt, built again with what memory and skills
    /// hold now (or the old one kept when they did not change). A failure keeps the old one.
    async fn rebuild_system_prompt(&self, segment_id: &str) -> Result<(), StoreError> {
        let id = segment_id.to_string();
        let Some(segment) = self
            .state
            .store
            .read(move |conn| store::get_session(conn, &id))
            .await?
        else {
            return Ok(());
        };
        let old = self.system_prompt();
        let tools = self.toolbox.names();
        let inputs = PromptFor {
            tools: &tools,
            session_skills: &self.tool_settings.skills,
            settings: &self.settings,
            model: &self.model,
            cwd: &self.cwd,
        };
        match rebuilt_system_prompt(&self.state, &segment, &old, &inputs).await {
            Ok(prompt) => {
                if let Ok(mut system) = self.system.lock() {
                    *system = prompt;
                }
            }
            Err(e) => {
                tracing::warn!(session = %segment_id, error = %e, "system prompt not rebuilt; the old one goes on");
                let keep = (segment_id.to_string(), old);
                self.state
                    .store
                    .write(move |tx| store::set_system_prompt(tx, &keep.0, &keep.1))
                    .await?;
            }
        }
        Ok(())
    }

    /// A context limit the provider stated in its error, remembered for this model when it is
    /// plausible (smaller than known, larger than the request's fixed part).
    fn learn_limit(&self, e: &LlmError, known: u64, fixed_part: u64) {
        let Some(stated) = compaction::stated_limit(&e.message) else {
            return;
        };
        let Some(endpoint) = self
            .chain
            .endpoints
            .iter()
            .find(|ep| ep.label() == e.provider)
        else {
            return;
        };
        if compaction::plausible_limit(stated, known, fixed_part) {
            self.state.model_metadata.learn(endpoint, stated);
            tracing::info!(model = %e.provider, tokens = stated, "context length learned from an overflow error");
        }
    }
}
