//! Session events as JSON lines (`send --json --stream`, `attach --json`): `seq`, `turn_id`, the
//! kind as a snake_case word, and the event's fields under their `.proto` names (a `Notice`'s
//! own `kind` is `notice_kind`, so it does not hide the event's).

use hermes_proto::pb::{self, session_event::Kind};
use serde_json::{Value, json};

/// `actual`, `estimated`, `included`, `unknown`, or null where not recorded.
pub fn cost_status(status: i32) -> Value {
    match pb::CostStatus::try_from(status).unwrap_or_default() {
        pb::CostStatus::Unspecified => Value::Null,
        pb::CostStatus::Actual => "actual".into(),
        pb::CostStatus::Estimated => "estimated".into(),
        pb::CostStatus::Included => "included".into(),
        pb::CostStatus::Unknown => "unknown".into(),
    }
}

fn usage(u: Option<&pb::Usage>) -> Value {
    u.map_or(Value::Null, |u| {
        json!({
            "input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
            "cache_read_tokens": u.cache_read_tokens, "cache_write_tokens": u.cache_write_tokens,
            "reasoning_tokens": u.reasoning_tokens, "cost_usd": u.cost_usd,
            "cost_status": cost_status(u.cost_status),
        })
    })
}

/// One event as a JSON object.
pub fn event_json(event: &pb::SessionEvent) -> Value {
    let fields = match &event.kind {
        Some(Kind::TurnStarted(e)) => json!({"input": e.input, "source_client": e.source_client}),
        Some(Kind::TurnFinished(e)) => {
            json!({"final_text": e.final_text, "usage": usage(e.usage.as_ref()), "iterations": e.iterations, "tool_calls": e.tool_calls})
        }
        Some(Kind::TurnInterrupted(e)) => json!({"by": e.by}),
        Some(Kind::TurnFailed(e)) => {
            json!({"error_class": e.error_class, "message": e.message, "hint": e.hint})
        }
        Some(Kind::TextDelta(e)) => json!({"text": e.text}),
        Some(Kind::ReasoningDelta(e)) => json!({"text": e.text}),
        Some(Kind::AssistantMessage(e)) => {
            json!({"message_id": e.message_id, "text": e.text, "reasoning": e.reasoning, "tool_calls": e.tool_calls})
        }
        Some(Kind::UserMessage(e)) => json!({"message_id": e.message_id, "text": e.text}),
        Some(Kind::ToolStarted(e)) => {
            json!({"call_id": e.call_id, "name": e.name, "arguments": e.arguments})
        }
        Some(Kind::ToolOutput(e)) => json!({"call_id": e.call_id, "chunk": e.chunk}),
        Some(Kind::ToolFinished(e)) => {
            json!({"call_id": e.call_id, "ok": e.ok, "summary": e.summary, "duration_ms": e.duration_ms})
        }
        Some(Kind::ApprovalRequested(e)) => {
            json!({"id": e.id, "command": e.command, "reason": e.reason, "choices": e.choices})
        }
        Some(Kind::ApprovalResolved(e)) => json!({"id": e.id, "decision": e.decision, "by": e.by}),
        Some(Kind::ClarifyRequested(e)) => {
            json!({"id": e.id, "question": e.question, "choices": e.choices})
        }
        Some(Kind::ClarifyAnswered(e)) => json!({"id": e.id, "answer": e.answer, "by": e.by}),
        Some(Kind::StateChanged(e)) => json!({"state": e.state}),
        Some(Kind::ClientsChanged(e)) => json!({"clients": e.clients}),
        Some(Kind::Notice(e)) => json!({"notice_kind": e.kind, "text": e.text}),
        Some(Kind::Lagged(e)) => json!({"last_delivered_seq": e.last_delivered_seq}),
        Some(Kind::ReplayDone(e)) => json!({"last_seq": e.last_seq}),
        None => json!({}),
    };
    let kind = event
        .kind
        .as_ref()
        .map_or("unknown", hermes_proto::events::kind_name);
    let mut doc = json!({"seq": event.seq, "turn_id": event.turn_id, "kind": kind});
    if let (Value::Object(doc), Value::Object(fields)) = (&mut doc, fields) {
        doc.extend(fields);
    }
    doc
}
