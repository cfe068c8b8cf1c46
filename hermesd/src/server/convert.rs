//! Conversions between store rows and hermes.v1 messages, and store errors to gRPC statuses.

use hermes_proto::pb;
use tonic::Status;

use crate::store::{MessageRow, SessionRow, StoreError};

/// A millisecond Unix timestamp as a protobuf Timestamp.
pub fn timestamp(ms: i64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: ms.div_euclid(1000),
        nanos: (ms.rem_euclid(1000) * 1_000_000) as i32,
    }
}

pub fn session(row: SessionRow) -> pb::Session {
    pb::Session {
        id: row.id,
        title: row.title.unwrap_or_default(),
        source: row.source,
        state: pb::SessionState::Stored as i32,
        clients: 0,
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
        message_count: row.message_count.max(0) as u64,
        parent_session_id: row.parent_session_id.unwrap_or_default(),
        model: row.model,
        cwd: row.cwd,
        usage: Some(pb::Usage {
            input_tokens: row.input_tokens.max(0) as u64,
            output_tokens: row.output_tokens.max(0) as u64,
            cache_read_tokens: row.cache_read_tokens.max(0) as u64,
            cache_write_tokens: row.cache_write_tokens.max(0) as u64,
            reasoning_tokens: row.reasoning_tokens.max(0) as u64,
            cost_usd: row.cost_usd,
            cost_status: pb::CostStatus::Unspecified as i32,
        }),
        last_seq: row.last_seq.max(0) as u64,
        busy_policy: busy_policy(&row.busy_policy) as i32,
    }
}

fn busy_policy(name: &str) -> pb::BusyPolicy {
    match name {
        "steer" => pb::BusyPolicy::Steer,
        "interrupt" => pb::BusyPolicy::Interrupt,
        _ => pb::BusyPolicy::Queue,
    }
}

pub fn message(row: MessageRow) -> pb::Message {
    pb::Message {
        id: row.id.max(0) as u64,
        role: row.role,
        content: row.content,
        tool_calls: row.tool_calls.unwrap_or_default(),
        tool_call_id: row.tool_call_id.unwrap_or_default(),
        name: row.tool_name.unwrap_or_default(),
        reasoning: row.reasoning.unwrap_or_default(),
        created_at: Some(timestamp(row.created_at)),
        input_tokens: row.input_tokens.unwrap_or(0).max(0) as u64,
        output_tokens: row.output_tokens.unwrap_or(0).max(0) as u64,
        finish_reason: row.finish_reason.unwrap_or_default(),
    }
}

/// A finished turn as the `Send` response.
pub fn send_response(outcome: crate::agent::TurnOutcome) -> pb::SendResponse {
    pb::SendResponse {
        session_id: outcome.session_id,
        answer: outcome.answer,
        iterations: outcome.iterations,
        tool_calls: outcome.tool_calls,
        usage: Some(pb::Usage {
            input_tokens: outcome.usage.input_tokens,
            output_tokens: outcome.usage.output_tokens,
            cache_read_tokens: outcome.usage.cache_read_tokens,
            cache_write_tokens: outcome.usage.cache_write_tokens,
            reasoning_tokens: outcome.usage.reasoning_tokens,
            cost_usd: outcome.cost_usd,
            cost_status: crate::agent::pb_cost_status(outcome.cost_status) as i32,
        }),
    }
}

/// Map a store error to a status a client can show as is.
pub fn status(e: StoreError) -> Status {
    match e {
        StoreError::SessionNotFound(id) => {
            Status::not_found(format!("no session `{id}` (see `hermesctl sessions list`)"))
        }
        StoreError::Refused(why) => Status::failed_precondition(why),
        StoreError::BadQuery(why) => Status::invalid_argument(why),
        other => {
            tracing::error!(error = %other, "store error");
            Status::internal(other.to_string())
        }
    }
}

/// The status for an RPC whose behaviour is not built yet, naming what is missing.
pub fn not_built(rpc: &str, missing: &str) -> Status {
    Status::unimplemented(format!("{rpc} is not available yet: {missing}"))
}

/// A requested busy policy; unspecified means the session's own.
pub fn busy_override(policy: i32) -> Option<crate::agent::BusyPolicy> {
    match pb::BusyPolicy::try_from(policy).unwrap_or(pb::BusyPolicy::Unspecified) {
        pb::BusyPolicy::Queue => Some(crate::agent::BusyPolicy::Queue),
        pb::BusyPolicy::Steer => Some(crate::agent::BusyPolicy::Steer),
        pb::BusyPolicy::Interrupt => Some(crate::agent::BusyPolicy::Interrupt),
        pb::BusyPolicy::Unspecified => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_handle_negative_and_sub_second() {
        let t = timestamp(1_500);
        assert_eq!((t.seconds, t.nanos), (1, 500_000_000));
        let t = timestamp(-1);
        assert_eq!((t.seconds, t.nanos), (-1, 999_000_000));
    }
}
