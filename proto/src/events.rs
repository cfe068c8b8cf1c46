//! Names of session event kinds: the words the daemon stores in `events.kind` and clients print
//! (`--json` streams, tests), in one table.

use crate::pb::session_event::Kind;

/// The snake_case name of an event kind.
pub fn kind_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::TurnStarted(_) => "turn_started",
        Kind::TurnFinished(_) => "turn_finished",
        Kind::TurnInterrupted(_) => "turn_interrupted",
        Kind::TurnFailed(_) => "turn_failed",
        Kind::TextDelta(_) => "text_delta",
        Kind::ReasoningDelta(_) => "reasoning_delta",
        Kind::AssistantMessage(_) => "assistant_message",
        Kind::ToolStarted(_) => "tool_started",
        Kind::ToolOutput(_) => "tool_output",
        Kind::ToolFinished(_) => "tool_finished",
        Kind::ApprovalRequested(_) => "approval_requested",
        Kind::ApprovalResolved(_) => "approval_resolved",
        Kind::ClarifyRequested(_) => "clarify_requested",
        Kind::ClarifyAnswered(_) => "clarify_answered",
        Kind::StateChanged(_) => "state_changed",
        Kind::ClientsChanged(_) => "clients_changed",
        Kind::Notice(_) => "notice",
        Kind::Lagged(_) => "lagged",
        Kind::ReplayDone(_) => "replay_done",
        Kind::UserMessage(_) => "user_message",
    }
}
