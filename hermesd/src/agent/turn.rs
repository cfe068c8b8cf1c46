//! The turn loop: build the request, call the model, run the tools it asks for, feed the results
//! back — until it answers, is interrupted, trips the loop guard or spends its iteration budget
//! (then one grace call without tools lets it conclude). Every message is stored as it is
//! produced and every step is a session event.

use std::{path::PathBuf, sync::Arc};

use futures_util::StreamExt;
use hermes_proto::pb::{self, session_event::Kind};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{
    history,
    live::{LiveSession, PendingWrite},
    loop_guard::{LoopGuard, Verdict},
    port::LivePort,
    repair,
    settings::TurnSettings,
};
use crate::{
    llm::{
        self, Chain, ChainNotice, ChatMessage, ChatRequest, Completion, ErrorClass, LlmError, Role,
        StreamEvent, ToolCall, Usage,
    },
    state::DaemonState,
    store::{self, NewMessage, StoreError},
    tools::{self, ToolContext, ToolOutcome, ToolSettings, Toolbox},
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
    /// Estimated cost in USD; `None` when no call had known prices.
    pub cost_usd: Option<f64>,
    pub answered_by: String,
    pub iterations: u32,
    pub tool_calls: u32,
    pub end: TurnEnd,
}

/// Everything a running turn holds.
pub(super) struct Turn {
    pub state: Arc<DaemonState>,
    pub live: Arc<LiveSession>,
    pub session_id: String,
    pub turn_id: String,
    pub cancel: CancellationToken,
    pub chain: Chain,
    pub toolbox: Toolbox,
    pub settings: TurnSettings,
    pub system: String,
    pub cwd: PathBuf,
    pub port: Arc<LivePort>,
    pub tool_settings: Arc<ToolSettings>,
    /// Writes queued but not yet confirmed: the loop goes on while they are stored (in order,
    /// before their events are published) and the turn waits for all of them before it ends.
    pub writes: std::sync::Mutex<Vec<PendingWrite>>,
}

/// Why the loop stopped early.
enum Stop {
    Interrupted,
    Failed(TurnEnd),
}

/// Counters of a turn.
#[derive(Default)]
struct Tally {
    usage: Usage,
    cost_usd: Option<f64>,
    answered_by: String,
    iterations: u32,
    tool_calls: u32,
    /// Time spent running tools (for the per-iteration overhead log).
    tool_time: std::time::Duration,
}

fn pb_class(class: ErrorClass) -> pb::ErrorClass {
    match class {
        ErrorClass::RateLimit => pb::ErrorClass::RateLimit,
        ErrorClass::Auth => pb::ErrorClass::Auth,
        ErrorClass::PayloadTooLarge => pb::ErrorClass::PayloadTooLarge,
        ErrorClass::ContextOverflow => pb::ErrorClass::ContextOverflow,
        ErrorClass::Server => pb::ErrorClass::Server,
        ErrorClass::StreamCut => pb::ErrorClass::StreamInterrupted,
        ErrorClass::BadRequest => pb::ErrorClass::BadRequest,
        ErrorClass::Timeout => pb::ErrorClass::Timeout,
    }
}

fn model_failure(e: &LlmError) -> TurnEnd {
    let hint = match e.class {
        ErrorClass::Auth => "check the API key (`hermesctl model show`)",
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
        let session = self.session_id.clone();
        let rows = self
            .state
            .store
            .read(move |conn| store::list_messages(conn, &session, 0, 0))
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
            session_id: self.session_id.clone(),
            answer,
            usage: tally.usage,
            cost_usd: tally.cost_usd,
            answered_by: tally.answered_by,
            iterations: tally.iterations,
            tool_calls: tally.tool_calls,
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
        loop {
            if self.cancel.is_cancelled() {
                return Ok(TurnEnd::Interrupted);
            }
            let grace = tally.iterations >= max;
            let began = std::time::Instant::now();
            let completion = match self.call_model(messages, grace, tally).await {
                Ok(c) => c,
                Err(Stop::Interrupted) => return Ok(TurnEnd::Interrupted),
                Err(Stop::Failed(end)) => return Ok(end),
            };
            let model_time = began.elapsed();
            let calls = if grace {
                Vec::new()
            } else {
                completion.tool_calls.clone()
            };
            self.store_assistant(&completion, &calls)?;
            messages.push(ChatMessage {
                role: Some(Role::Assistant),
                content: completion.text.clone(),
                tool_calls: calls.clone(),
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
                return Ok(TurnEnd::Finished);
            }
            let tools_before = tally.tool_time;
            let stop = self.run_tools(&calls, messages, &mut guard, tally).await?;
            let tool_time = tally.tool_time - tools_before;
            let overhead = began.elapsed().saturating_sub(model_time + tool_time);
            tracing::debug!(
                session = %self.session_id,
                iteration = tally.iterations,
                model_us = model_time.as_micros() as u64,
                tools_us = tool_time.as_micros() as u64,
                overhead_us = overhead.as_micros() as u64,
                "iteration"
            );
            if let Some(stop) = stop {
                return Ok(stop);
            }
        }
    }

    /// One model call; a grace call offers no tools and asks for the final answer.
    async fn call_model(
        &self,
        messages: &[ChatMessage],
        grace: bool,
        tally: &mut Tally,
    ) -> Result<Completion, Stop> {
        let mut api_messages = messages.to_vec();
        repair::repair(&mut api_messages);
        if grace && let Some(last) = api_messages.last_mut() {
            last.content.push_str(
                "\n\n[The iteration budget is spent: no more tool calls. Reply now with your \
                 final answer: what was done, and what remains.]",
            );
        }
        let request = ChatRequest {
            system: self.system.clone(),
            messages: api_messages,
            tools: if grace {
                Vec::new()
            } else {
                self.toolbox.schemas().to_vec()
            },
            max_tokens: None,
        };
        tally.iterations += 1;
        let live = Arc::clone(&self.live);
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
        let live = Arc::clone(&self.live);
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
        .map_err(|e| Stop::Failed(model_failure(&e)))?;
        tally.usage.add(&completion.usage);
        let priced = self
            .chain
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
        if let Some(cost) = priced {
            tally.cost_usd = Some(tally.cost_usd.unwrap_or(0.0) + cost);
        }
        tally.answered_by = completion.answered_by.clone();
        Ok(completion)
    }

    fn store_assistant(
        &self,
        completion: &Completion,
        calls: &[ToolCall],
    ) -> Result<(), StoreError> {
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
            ..NewMessage::default()
        };
        self.persist(message, move |id| {
            Kind::AssistantMessage(pb::AssistantMessage {
                message_id: id as u64,
                text,
                reasoning,
                tool_calls: calls_json.unwrap_or_default(),
            })
        })
    }

    /// Queue a message and the event that announces it, stored in one transaction.
    fn queue_message(
        &self,
        message: NewMessage,
        event: impl FnOnce(i64) -> Kind + Send + 'static,
    ) -> PendingWrite {
        let session = self.session_id.clone();
        self.live.queue_durable(
            &self.turn_id,
            Box::new(move |tx| {
                let id = store::append_message(tx, &session, &message)?;
                Ok((event(id), id))
            }),
        )
    }

    /// Queue a message without waiting for it; a failed earlier write stops the turn here.
    fn persist(
        &self,
        message: NewMessage,
        event: impl FnOnce(i64) -> Kind + Send + 'static,
    ) -> Result<(), StoreError> {
        self.check_writes()?;
        let pending = self.queue_message(message, event);
        self.track(pending);
        Ok(())
    }

    fn track(&self, pending: PendingWrite) {
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
    async fn flush_writes(&self) -> Result<(), StoreError> {
        let pending: Vec<PendingWrite> = match self.writes.lock() {
            Ok(mut writes) => writes.drain(..).collect(),
            Err(_) => Vec::new(),
        };
        for write in pending {
            write.wait().await?;
        }
        Ok(())
    }

    fn context(&self, call: &ToolCall) -> ToolContext {
        ToolContext {
            session_id: self.session_id.clone(),
            call_id: call.id.clone(),
            cwd: self.cwd.clone(),
            cancel: self.cancel.clone(),
            turn: Arc::clone(&self.port) as Arc<dyn tools::TurnPort>,
            services: Arc::clone(&self.state.tool_services),
            settings: Arc::clone(&self.tool_settings),
        }
    }

    /// Run a batch of calls (in parallel when safe), storing each result in call order.
    /// Returns how the turn ends when it must stop here.
    async fn run_tools(
        &self,
        calls: &[ToolCall],
        messages: &mut Vec<ChatMessage>,
        guard: &mut LoopGuard,
        tally: &mut Tally,
    ) -> Result<Option<TurnEnd>, StoreError> {
        let verdicts: Vec<Verdict> = calls
            .iter()
            .map(|c| guard.check(c, self.toolbox.is_polling(c)))
            .collect();
        let stop = verdicts.iter().find_map(|v| match v {
            Verdict::Stop(reason) => Some(reason.clone()),
            _ => None,
        });
        if let Some(reason) = stop {
            for call in calls {
                let content =
                    serde_json::json!({ "error": format!("not run: {reason}") }).to_string();
                self.store_result(call, &content, false, "not run (loop guard)", 0, messages)?;
            }
            return Ok(Some(TurnEnd::Failed {
                class: pb::ErrorClass::LoopDetected,
                message: format!("the turn was {reason}"),
                hint: "the model kept repeating itself; rephrase the request or try another model"
                    .into(),
            }));
        }
        let concurrency: Vec<tools::Concurrency> = calls
            .iter()
            .map(|c| self.toolbox.concurrency(c, &self.cwd))
            .collect();
        let width = if tools::plan_batch(&concurrency) {
            tools::MAX_PARALLEL
        } else {
            1
        };
        let parallel = width > 1;
        if parallel {
            // The whole batch starts at once: every start is announced before any finish.
            for call in calls {
                self.announce_start(call);
            }
        }
        let toolbox = &self.toolbox;
        let mut pending = Vec::with_capacity(calls.len());
        for call in calls {
            let ctx = self.context(call);
            pending.push(async move {
                if ctx.cancel.is_cancelled() {
                    return interrupted_outcome();
                }
                if !parallel {
                    self.announce_start(call);
                }
                toolbox.dispatch(call, &ctx).await
            });
        }
        let mut results = futures_util::stream::iter(pending).buffered(width);
        let last_index = calls.len() - 1;
        let mut index = 0;
        loop {
            let waited = std::time::Instant::now();
            let Some(mut outcome) = results.next().await else {
                break;
            };
            tally.tool_time += waited.elapsed();
            let call = &calls[index];
            if let Verdict::Warn(warning) = &verdicts[index] {
                outcome.content = annotate(&outcome.content, "_loop_warning", warning);
            }
            if index == last_index
                && let Some(note) = self.budget_note(tally.iterations)
            {
                outcome.content = annotate(&outcome.content, "_budget_warning", &note);
            }
            tally.tool_calls += 1;
            self.store_result(
                call,
                &outcome.content,
                outcome.ok,
                &outcome.summary,
                outcome.duration_ms,
                messages,
            )?;
            index += 1;
        }
        Ok(None)
    }

    fn announce_start(&self, call: &ToolCall) {
        let started = Kind::ToolStarted(pb::ToolStarted {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        let pending = self
            .live
            .queue_durable(&self.turn_id, Box::new(move |_| Ok((started, 0))));
        self.track(pending);
    }

    fn budget_note(&self, used: u32) -> Option<String> {
        let max = self.settings.max_iterations;
        let left = max.saturating_sub(used);
        if used * 10 >= max * 9 {
            Some(format!(
                "{left} of {max} iterations left: give your final answer now."
            ))
        } else if used * 10 >= max * 7 {
            Some(format!(
                "{left} of {max} iterations left: start wrapping up."
            ))
        } else {
            None
        }
    }

    fn store_result(
        &self,
        call: &ToolCall,
        content: &str,
        ok: bool,
        summary: &str,
        duration_ms: u64,
        messages: &mut Vec<ChatMessage>,
    ) -> Result<(), StoreError> {
        let finished = pb::ToolFinished {
            call_id: call.id.clone(),
            ok,
            summary: summary.to_string(),
            duration_ms,
        };
        self.persist(
            NewMessage {
                role: "tool".into(),
                content: content.to_string(),
                tool_call_id: Some(call.id.clone()),
                tool_name: Some(call.name.clone()),
                ..NewMessage::default()
            },
            move |_| Kind::ToolFinished(finished),
        )?;
        messages.push(ChatMessage {
            role: Some(Role::Tool),
            content: content.to_string(),
            tool_call_id: Some(call.id.clone()),
            name: Some(call.name.clone()),
            ..ChatMessage::default()
        });
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
                }),
                iterations: tally.iterations,
                tool_calls: tally.tool_calls,
            }),
            TurnEnd::Interrupted => {
                Kind::TurnInterrupted(pb::TurnInterrupted { by: "user".into() })
            }
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
        let session = self.session_id.clone();
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

fn interrupted_outcome() -> ToolOutcome {
    ToolOutcome {
        content: serde_json::json!({"error": "interrupted by the user"}).to_string(),
        ok: false,
        summary: "interrupted".into(),
        duration_ms: 0,
    }
}

/// Add a note to a tool result: a key in a JSON object, else a line of text.
fn annotate(content: &str, key: &str, note: &str) -> String {
    match serde_json::from_str::<Value>(content) {
        Ok(Value::Object(mut map)) => {
            map.insert(key.to_string(), Value::String(note.to_string()));
            Value::Object(map).to_string()
        }
        _ => format!("{content}\n\n[{note}]"),
    }
}
