//! Running one batch of tool calls for a turn: the loop guard's verdicts, concurrency (the
//! whole batch at once when every call allows it, else one by one), start and finish events, and
//! each result stored in call order with the guard's and the budget's notes inside.

use std::sync::Arc;

use futures_util::StreamExt;
use hermes_proto::pb::{self, session_event::Kind};
use serde_json::Value;

use super::{
    loop_guard::{LoopGuard, Verdict},
    turn::{Tally, Turn, TurnEnd},
};
use crate::{
    llm::{ChatMessage, Role, ToolCall},
    store::{NewMessage, StoreError},
    tools::{self, ToolContext, ToolOutcome},
};

impl Turn {
    fn context(&self, call: &ToolCall) -> ToolContext {
        ToolContext {
            session_id: self.session_id(),
            scope: self.scope.clone(),
            call_id: call.id.clone(),
            cwd: self.cwd.clone(),
            cancel: self.cancel.clone(),
            turn: Arc::clone(&self.port) as Arc<dyn tools::TurnPort>,
            services: Arc::clone(&self.state.tool_services),
            settings: Arc::clone(&self.tool_settings),
            toolbox: self.toolbox.clone(),
        }
    }

    /// Run a batch of calls (in parallel when safe), storing each result in call order.
    /// Returns how the turn ends when it must stop here.
    pub(super) async fn run_tools(
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
        let last_index = calls.len().saturating_sub(1);
        let mut index = 0;
        loop {
            let waited = std::time::Instant::now();
            let Some(mut outcome) = results.next().await else {
                break;
            };
            tally.tool_time += waited.elapsed();
            let call = &calls[index];
            // What the call's output stream held back goes out before its ToolFinished.
            self.port.finish_output(&call.id);
            if let Verdict::Warn(warning) = &verdicts[index] {
                outcome.content = annotate(&outcome.content, "_loop_warning", warning);
            }
            if index == last_index
                && let Some(note) = self.budget_note(tally.iterations)
            {
                outcome.content = annotate(&outcome.content, "_budget_warning", &note);
            }
            tally.tool_calls += 1;
            if !tally.tools_used.contains(&call.name) {
                tally.tools_used.push(call.name.clone());
            }
            self.store_result(
                call,
                &outcome.content,
                outcome.ok,
                &outcome.summary,
                outcome.duration_ms,
                messages,
            )?;
            self.live.room().await;
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
