//! The turn loop: build the request, call the model, run the tools it asks for, feed the results
//! back — until it answers, is interrupted, trips the loop guard or spends its iteration budget
//! (then one grace call without tools lets it conclude). Every message is stored as it is
//! produced and every step is a session event.

use super::TurnRunner;
use std::{path::PathBuf, sync::Arc};

use hermes_proto::pb::{self, session_event::Kind};
use tokio_util::sync::CancellationToken;

use super::{
    compaction::CompactionSettings, compress::TokenMeter, history, loop_guard::LoopGuard,
    port::LivePort, repair, settings::TurnSettings,
};
use crate::{
    hub::{PendingWrite, TurnHandle},
    llm::{
        self, Chain, ChainNotice, ChatMessage, ChatRequest, Completion, ErrorClass, LlmError, Role,
        StreamEvent, ToolCall, Usage,
    },
    store::{self, NewMessage, StoreError},
    tools::{ToolSettings, Toolbox},
};

/// What ended a turn.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEnd {
    Finished,
    Interrupted,
    Failed {
        class: pb::ErrorClass,
        message: String,
        hint: String,
    },
}

/// The result of a turn.
#[derive(Debug, Clone)]
pub struct TurnOutcome {
    pub session_id: String,
    pub answer: String,
    pub usage: Usage,
    /// Cost in USD; `None` when a call's price is unknown.
    pub cost_usd: Option<f64>,
    /// How `cost_usd` is known (the least certain of the turn's calls).
    pub cost_status: llm::CostStatus,
    pub answered_by: String,
    pub iterations: u32,
    pub tool_calls: u32,
    /// Model calls that asked for tools.
    pub tool_iterations: u32,
    /// Names of the tools called, in first-use order.
    pub tools_used: Vec<String>,
    pub end: TurnEnd,
}

/// Everything a running turn holds.
pub(super) struct Turn {
    pub state: Arc<TurnRunner>,
    pub live: TurnHandle,
    /// The conversation's newest segment: changes when the context is compressed mid-turn.
    pub segment: std::sync::Mutex<String>,
    pub turn_id: String,
    pub cancel: CancellationToken,
    pub chain: Chain,
    pub toolbox: Toolbox,
    pub settings: TurnSettings,
    /// The segment's system prompt (built again when a compression starts a new segment).
    pub system: std::sync::Mutex<String>,
    /// The primary endpoint's label (`provider:model`), as the prompt names it.
    pub model: String,
    pub cwd: PathBuf,
    pub port: Arc<LivePort>,
    pub tool_settings: Arc<ToolSettings>,
    pub compaction: CompactionSettings,
    /// The primary model's context window, looked up (or read from `model.context_length`) the
    /// first time a request could be near it.
    pub context_length: tokio::sync::OnceCell<u64>,
    /// Writes queued but not yet confirmed: the loop goes on while they are stored (in order,
    /// before their events are published) and the turn waits for all of them before it ends.
    pub writes: std::sync::Mutex<Vec<PendingWrite>>,
    /// The images requests carry, for a model that takes them (`None`: text only).
    pub media: Option<Arc<super::media::TurnMedia>>,
    /// For a model that does not see: the user's images as descriptions.
    pub described: Option<Arc<super::described::TurnDescriptions>>,
    /// A segment whose messages precede the session's own (see `TurnInput::context_from`).
    pub context_from: Option<String>,
    /// What the conversation owns that tools use (its task list, its processes).
    pub scope: crate::tools::SessionScope,
}

/// Why the loop stopped early.
pub(super) enum Stop {
    Interrupted,
    /// The request is too large for the model: compress and try again.
    TooLarge(LlmError),
    Failed(TurnEnd),
}

/// Counters of a turn.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) usage: Usage,
    pub(super) cost_usd: Option<f64>,
    /// `None` until a call is counted.
    pub(super) cost_status: Option<llm::CostStatus>,
    pub(super) answered_by: String,
    pub(super) iterations: u32,
    pub(super) tool_calls: u32,
    pub(super) tool_iterations: u32,
    pub(super) tools_used: Vec<String>,
    /// Time spent running tools (for the per-iteration overhead log).
    pub(super) tool_time: std::time::Duration,
}

/// How a cost is known, on the wire.
pub fn pb_cost_status(status: llm::CostStatus) -> pb::CostStatus {
    match status {
        llm::CostStatus::Actual => pb::CostStatus::Actual,
        llm::CostStatus::Estimated => pb::CostStatus::Estimated,
        llm::CostStatus::Included => pb::CostStatus::Included,
        llm::CostStatus::Unknown => pb::CostStatus::Unknown,
    }
}

fn pb_class(class: ErrorClass) -> pb::ErrorClass {
    match class {
        ErrorClass::RateLimit => pb::ErrorClass::RateLimit,
        ErrorClass::Auth => pb::ErrorClass::Auth,
        ErrorClass::Billing => pb::ErrorClass::Billing,
        ErrorClass::PayloadTooLarge => pb::ErrorClass::PayloadTooLarge,
        ErrorClass::ContextOverflow => pb::ErrorClass::ContextOverflow,
        ErrorClass::Server => pb::ErrorClass::Server,
        ErrorClass::StreamCut => pb::ErrorClass::StreamInterrupted,
        ErrorClass::BadRequest => pb::ErrorClass::BadRequest,
        ErrorClass::Timeout => pb::ErrorClass::Timeout,
    }
}

pub(super) fn model_failure(e: &LlmError) -> TurnEnd {
    let hint = match e.class {
        ErrorClass::Auth => "check the API key (`hermesctl auth list`, `hermesctl model show`)",
        ErrorClass::Billing => {
            "the provider's quota or credit is used up: add a key (`hermesctl auth add`) or a fallback provider"
        }
        ErrorClass::RateLimit => "wait a moment, or add a fallback provider",
        ErrorClass::ContextOverflow | ErrorClass::PayloadTooLarge => {
            "the conversation is too long for the model; start a new session"
        }
        ErrorClass::Timeout | ErrorClass::Server | ErrorClass::StreamCut => {
            "the provider is unreachable or failing; try again or add a fallback provider"
        }
        ErrorClass::BadRequest => "the provider refused the request; see the message",
    };
    TurnEnd::Failed {
        class: pb_class(e.class),
        message: format!("the model failed ({}): {e}", e.class.as_str()),
        hint: hint.to_string(),
    }
}

impl Turn {
    /// Run the turn for `input`, already validated.
    pub async fn drive(&self, input: &str, source_client: &str) -> Result<TurnOutcome, StoreError> {
        self.live
            .emit_durable(
                &self.turn_id,
                Kind::TurnStarted(pb::TurnStarted {
                    input: input.to_string(),
                    source_client: source_client.to_string(),
                }),
            )
            .await?;
        let text = input.to_string();
        self.queue_message(
            NewMessage {
                role: "user".into(),
                content: text.clone(),
                ..NewMessage::default()
            },
            move |id| {
                Kind::UserMessage(pb::UserMessage {
                    message_id: id as u64,
                    text,
                })
            },
        )
        .wait()
        .await?;
        let session = self.session_id();
        let context = self.context_from.clone();
        let rows = self
            .state
            .store
            .read(move |conn| {
                let mut rows = match &context {
                    Some(segment) => store::list_messages(conn, segment, 0, 0)?,
                    None => Vec::new(),
                };
                rows.extend(store::list_messages(conn, &session, 0, 0)?);
                Ok(rows)
            })
            .await?;
        let mut messages: Vec<ChatMessage> =
            rows.into_iter().filter_map(history::to_chat).collect();
        let mut tally = Tally::default();
        let end = self.iterate(&mut messages, &mut tally).await?;
        let answer = match &end {
            TurnEnd::Finished => messages
                .last()
                .filter(|m| m.role() == Role::Assistant)
                .map(|m| m.content.clone())
                .unwrap_or_default(),
            _ => String::new(),
        };
        self.finish(&end, &answer, &tally).await?;
        Ok(TurnOutcome {
            session_id: self.session_id(),
            answer,
            usage: tally.usage,
            cost_usd: tally.cost_usd,
            cost_status: tally.cost_status.unwrap_or(llm::CostStatus::Unknown),
            answered_by: tally.answered_by,
            iterations: tally.iterations,
            tool_calls: tally.tool_calls,
            tool_iterations: tally.tool_iterations,
            tools_used: tally.tools_used,
            end,
        })
    }

    async fn iterate(
        &self,
        messages: &mut Vec<ChatMessage>,
        tally: &mut Tally,
    ) -> Result<TurnEnd, StoreError> {
        let mut guard = LoopGuard::new(self.settings.loop_guard);
        let max = self.settings.max_iterations;
        let mut meter = TokenMeter::new();
        loop {
            if self.cancel.is_cancelled() {
                return Ok(TurnEnd::Interrupted);
            }
            // A store slower than the turn slows the turn, rather than growing its queue.
            self.live.room().await;
            self.take_steered(messages)?;
            let grace = tally.iterations >= max;
            let began = std::time::Instant::now();
            let completion = match self
                .call_with_room(messages, grace, tally, &mut meter)
                .await?
            {
                Ok(c) => c,
                Err(end) => return Ok(end),
            };
            let model_time = began.elapsed();
            let calls = if grace {
                Vec::new()
            } else {
                completion.tool_calls.clone()
            };
            let stored = self.store_assistant(&completion, &calls)?;
            let mut commit_wait = std::time::Duration::ZERO;
            if self.toolbox.any_effects(&calls) {
                // The calls are durable before any of them runs: a crash or power loss while a
                // tool works leaves the request that started it, never an effect without a cause.
                let waiting = std::time::Instant::now();
                stored.wait().await?;
                commit_wait = waiting.elapsed();
            } else {
                // Reads (or no call) change nothing before the commit completes; a failed
                // commit still ends the turn, at the next write or at its end.
                self.track(stored);
            }
            messages.push(ChatMessage {
                role: Some(Role::Assistant),
                content: completion.text.clone(),
                tool_calls: calls.clone(),
                provider_items: completion.provider_items.clone(),
                ..ChatMessage::default()
            });
            if grace && (!completion.tool_calls.is_empty() || completion.text.is_empty()) {
                return Ok(TurnEnd::Failed {
                    class: pb::ErrorClass::BudgetExhausted,
                    message: format!(
                        "the iteration budget ({max} model calls) ran out before the model gave an answer"
                    ),
                    hint: "raise agent.max_turns, or ask for less in one turn".into(),
                });
            }
            if calls.is_empty() {
                // Input steered in while the model answered makes the turn go on.
                if self.take_steered(messages)? {
                    continue;
                }
                return Ok(TurnEnd::Finished);
            }
            tally.tool_iterations += 1;
            let tools_before = tally.tool_time;
            let stop = self.run_tools(&calls, messages, &mut guard, tally).await?;
            let tool_time = tally.tool_time - tools_before;
            let overhead = began
                .elapsed()
                .saturating_sub(model_time + tool_time + commit_wait);
            tracing::debug!(
                session = %self.session_id(),
                iteration = tally.iterations,
                model_us = model_time.as_micros() as u64,
                tools_us = tool_time.as_micros() as u64,
                commit_wait_us = commit_wait.as_micros() as u64,
                overhead_us = overhead.as_micros() as u64,
                "iteration"
            );
            if let Some(stop) = stop {
                return Ok(stop);
            }
        }
    }

    /// The conversation's newest segment.
    pub(super) fn session_id(&self) -> String {
        self.segment
            .lock()
            .map(|s| s.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }

    /// Add input steered into the turn as user messages; true when there was any.
    fn take_steered(&self, messages: &mut Vec<ChatMessage>) -> Result<bool, StoreError> {
        let steered = self.live.take_steered();
        for text in &steered {
            let shown = text.clone();
            self.persist(
                NewMessage {
                    role: "user".into(),
                    content: text.clone(),
                    ..NewMessage::default()
                },
                move |id| {
                    Kind::UserMessage(pb::UserMessage {
                        message_id: id as u64,
                        text: shown,
                    })
                },
            )?;
            messages.push(ChatMessage::user(text.clone()));
        }
        Ok(!steered.is_empty())
    }

    /// One model call; a grace call offers no tools and asks for the final answer.
    pub(super) async fn call_model(
        &self,
        messages: &[ChatMessage],
        grace: bool,
        tally: &mut Tally,
    ) -> Result<Completion, Stop> {
        let mut api_messages = messages.to_vec();
        repair::repair(&mut api_messages);
        if let Some(media) = &self.media {
            let media = Arc::clone(media);
            // Reading and encoding the files happens on the blocking pool.
            api_messages = tokio::task::spawn_blocking(move || {
                media.attach(&mut api_messages);
                api_messages
            })
            .await
            .map_err(|e| {
                Stop::Failed(TurnEnd::Failed {
                    class: pb::ErrorClass::Internal,
                    message: format!("preparing the request's images failed: {e}"),
                    hint: "see hermesd.log".into(),
                })
            })?;
        }
        if let Some(described) = &self.described {
            described.apply(&mut api_messages, &self.cancel).await;
        }
        if grace && let Some(last) = api_messages.last_mut() {
            last.content.push_str(
                "\n\n[The iteration budget is spent: no more tool calls. Reply now with your \
                 final answer: what was done, and what remains.]",
            );
        }
        let request = ChatRequest {
            system: self.system_prompt(),
            messages: api_messages,
            tools: if grace {
                Vec::new()
            } else {
                self.toolbox.schemas().to_vec()
            },
            max_tokens: None,
            reasoning_effort: self.settings.reasoning_effort.clone(),
            cache_ttl: self.settings.cache_ttl_1h.then(|| "1h".to_string()),
        };
        tally.iterations += 1;
        let live = self.live.clone();
        let turn_id = self.turn_id.clone();
        let mut forward = move |event: StreamEvent| match event {
            StreamEvent::Text(text) => {
                live.emit_transient(&turn_id, Kind::TextDelta(pb::TextDelta { text }))
            }
            StreamEvent::Reasoning(text) => {
                live.emit_transient(&turn_id, Kind::ReasoningDelta(pb::ReasoningDelta { text }))
            }
            StreamEvent::Reset => live.emit_transient(
                &turn_id,
                Kind::Notice(pb::Notice {
                    kind: "stream_restarted".into(),
                    text: "the response is being fetched again; discard the partial text".into(),
                }),
            ),
            StreamEvent::ToolCallStarted { .. } | StreamEvent::ToolCallDelta { .. } => {}
        };
        let mut sink: llm::EventSink<'_> = &mut forward;
        let live = self.live.clone();
        let turn_id = self.turn_id.clone();
        let mut notice = move |n: ChainNotice| {
            let (kind, text) = match n {
                ChainNotice::Retrying {
                    provider,
                    wait,
                    reason,
                } => (
                    "rate_limit_retry",
                    format!(
                        "{provider}: {reason}; retrying in {:.1} s",
                        wait.as_secs_f64()
                    ),
                ),
                ChainNotice::FallingBack { from, to, reason } => (
                    "fallback_provider",
                    format!("{from} failed ({reason}); using {to}"),
                ),
            };
            live.emit_transient(
                &turn_id,
                Kind::Notice(pb::Notice {
                    kind: kind.into(),
                    text,
                }),
            );
        };
        let completion = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return Err(Stop::Interrupted),
            result = self.chain.complete(&request, &mut sink, &mut notice) => result,
        }
        .map_err(|e| {
            if e.class.needs_compression() {
                Stop::TooLarge(e)
            } else {
                Stop::Failed(model_failure(&e))
            }
        })?;
        tally.usage.add(&completion.usage);
        let (priced, status) = self
            .chain
            .endpoints
            .iter()
            .find(|e| e.label() == completion.answered_by)
            .map_or((None, llm::CostStatus::Unknown), |e| {
                let includes_cache = e.api_mode != llm::ApiMode::AnthropicMessages;
                llm::call_cost(&e.provider, &e.model, &completion.usage, includes_cache)
            });
        if let Some(cost) = priced {
            tally.cost_usd = Some(tally.cost_usd.unwrap_or(0.0) + cost);
        }
        tally.cost_status = Some(tally.cost_status.map_or(status, |s| s.combine(status)));
        tally.answered_by = completion.answered_by.clone();
        Ok(completion)
    }

    /// Queue the assistant message; its write is returned so the caller can wait for it.
    fn store_assistant(
        &self,
        completion: &Completion,
        calls: &[ToolCall],
    ) -> Result<PendingWrite, StoreError> {
        let text = completion.text.clone();
        let reasoning = completion.reasoning.clone();
        let calls_json = history::tool_calls_json(calls);
        let message = NewMessage {
            role: "assistant".into(),
            content: text.clone(),
            tool_calls: calls_json.clone(),
            reasoning: Some(reasoning.clone()).filter(|r| !r.is_empty()),
            finish_reason: Some(completion.finish_reason.clone()),
            input_tokens: Some(completion.usage.input_tokens as i64),
            output_tokens: Some(completion.usage.output_tokens as i64),
            provider_items: completion.provider_items.clone(),
            ..NewMessage::default()
        };
        self.check_writes()?;
        Ok(self.queue_message(message, move |id| {
            Kind::AssistantMessage(pb::AssistantMessage {
                message_id: id as u64,
                text,
                reasoning,
                tool_calls: calls_json.unwrap_or_default(),
            })
        }))
    }

    /// Queue a message and the event that announces it, stored in one transaction.
    fn queue_message(
        &self,
        message: NewMessage,
        event: impl FnOnce(i64) -> Kind + Send + 'static,
    ) -> PendingWrite {
        let session = self.session_id();
        let bytes = message.content.len()
            + message.tool_calls.as_ref().map_or(0, String::len)
            + message.reasoning.as_ref().map_or(0, String::len);
        self.live.queue_durable_sized(
            &self.turn_id,
            bytes,
            Box::new(move |tx| {
                let id = store::append_message(tx, &session, &message)?;
                Ok((event(id), id))
            }),
        )
    }

    /// Queue a message without waiting for it; a failed earlier write stops the turn here.
    pub(super) fn persist(
        &self,
        message: NewMessage,
        event: impl FnOnce(i64) -> Kind + Send + 'static,
    ) -> Result<(), StoreError> {
        self.check_writes()?;
        let pending = self.queue_message(message, event);
        self.track(pending);
        Ok(())
    }

    pub(super) fn track(&self, pending: PendingWrite) {
        if let Ok(mut writes) = self.writes.lock() {
            writes.push(pending);
        }
    }

    /// Drop confirmed writes; the first failure becomes the turn's error.
    fn check_writes(&self) -> Result<(), StoreError> {
        let Ok(mut writes) = self.writes.lock() else {
            return Ok(());
        };
        let mut failure = None;
        writes.retain_mut(|w| match w.poll_done() {
            None => true,
            Some(Ok(_)) => false,
            Some(Err(e)) => {
                failure.get_or_insert(e);
                false
            }
        });
        failure.map_or(Ok(()), Err)
    }

    /// Wait for every queued write.
    pub(super) async fn flush_writes(&self) -> Result<(), StoreError> {
        let pending: Vec<PendingWrite> = match self.writes.lock() {
            Ok(mut writes) => writes.drain(..).collect(),
            Err(_) => Vec::new(),
        };
        for write in pending {
            write.wait().await?;
        }
        Ok(())
    }

    /// The closing event, with the session's model and cost brought up to date.
    async fn finish(&self, end: &TurnEnd, answer: &str, tally: &Tally) -> Result<(), StoreError> {
        self.flush_writes().await?;
        let kind = match end {
            TurnEnd::Finished => Kind::TurnFinished(pb::TurnFinished {
                final_text: answer.to_string(),
                usage: Some(pb::Usage {
                    input_tokens: tally.usage.input_tokens,
                    output_tokens: tally.usage.output_tokens,
                    cache_read_tokens: tally.usage.cache_read_tokens,
                    cache_write_tokens: tally.usage.cache_write_tokens,
                    reasoning_tokens: tally.usage.reasoning_tokens,
                    cost_usd: tally.cost_usd,
                    cost_status: tally
                        .cost_status
                        .map_or(pb::CostStatus::Unspecified, pb_cost_status)
                        as i32,
                }),
                iterations: tally.iterations,
                tool_calls: tally.tool_calls,
            }),
            TurnEnd::Interrupted => Kind::TurnInterrupted(pb::TurnInterrupted {
                by: self.live.interrupted_by(),
            }),
            TurnEnd::Failed {
                class,
                message,
                hint,
            } => Kind::TurnFailed(pb::TurnFailed {
                error_class: *class as i32,
                message: message.clone(),
                hint: hint.clone(),
            }),
        };
        let session = self.session_id();
        let model = Some(tally.answered_by.clone()).filter(|m| !m.is_empty());
        let cost = tally.cost_usd;
        self.live
            .emit_durable_with(
                &self.turn_id,
                Box::new(move |tx| {
                    // Cost stays NULL (unknown) until a priced call adds to it.
                    tx.execute(
                        "UPDATE sessions SET model = coalesce(?1, model),
                             cost_usd = CASE WHEN ?3 IS NULL THEN cost_usd ELSE coalesce(cost_usd, 0) + ?3 END
                         WHERE id = ?2",
                        rusqlite::params![model, session, cost],
                    )
                    .map_err(StoreError::sql("record the session's model and cost"))?;
                    Ok((kind, 0))
                }),
            )
            .await
            .map(|_| ())
    }
}
