//! Running context compression on a live conversation (the pure parts are in `compress/`):
//! when, with which model and time limit, what happens when the summary fails (a truncating
//! fallback, then a cooldown), and how the result is stored — a new segment that continues the
//! conversation, found under the same conversation by every client.

use super::TurnRunner;
use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use hermes_proto::pb::{self, session_event::Kind};
use tokio_util::sync::CancellationToken;

use super::{
    auxiliary,
    compress::{self, CompressionSettings, SummaryOutcome},
    history,
};
use crate::{
    config::settings::{AuxiliaryTask, CompressionSection},
    hub::TurnHandle,
    llm::{ChatMessage, Role},
    store::{self, NewMessage, StoreError},
};

/// Until when automatic compression of a session skips the summary model after it failed.
#[derive(Default)]
struct Cooldown(Option<Instant>);

/// Passes at most per model request (size- or overflow-triggered).
pub const MAX_PASSES: u32 = 3;
/// After a failed summary, automatic compression waits this long before calling the model again.
const FAILURE_COOLDOWN: Duration = Duration::from_secs(600);

/// What asked for compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The request estimate passed the threshold.
    Size,
    /// The provider said the request is too large.
    Overflow,
    /// `/compress`.
    Manual,
}

/// `compression.*` in config.yaml (Python Hermes' keys).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactionSettings {
    pub enabled: bool,
    pub compress: CompressionSettings,
}

impl CompactionSettings {
    pub fn new(section: &CompressionSection) -> Self {
        Self {
            enabled: section.enabled,
            compress: CompressionSettings {
                threshold_ratio: section.threshold,
                tail_ratio: section.target_ratio,
                protect_first: section.protect_first_n,
                protect_last: section.protect_last_n,
                ..CompressionSettings::default()
            },
        }
    }
}

/// A compression that was stored.
#[derive(Debug, Clone)]
pub struct Compacted {
    /// The new segment the conversation continues in.
    pub segment_id: String,
    pub messages: Vec<ChatMessage>,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub used_fallback: bool,
}

/// Why a compression did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skipped {
    /// `compression.enabled` is off (automatic compression only).
    Disabled,
    /// A summary failed moments ago (automatic, size-triggered compression only).
    CoolingDown,
    /// Head and tail protection leave fewer than two messages to summarise.
    NothingToSummarise,
    /// The summary would not make the context smaller.
    NoGain,
    Interrupted,
}

/// Compression for one live conversation.
pub struct Compactor<'a> {
    pub state: &'a Arc<TurnRunner>,
    pub live: &'a TurnHandle,
    pub settings: CompactionSettings,
    pub context_length: u64,
    pub cancel: &'a CancellationToken,
    pub turn_id: &'a str,
}

impl Compactor<'_> {
    /// Whether a request of `estimate` tokens calls for compression.
    pub fn over_threshold(&self, estimate: u64) -> bool {
        self.settings.enabled
            && self
                .settings
                .compress
                .should_compress(estimate, self.context_length)
    }

    fn cooling_down(&self) -> bool {
        self.live
            .memo(|c: &mut Cooldown| c.0)
            .is_some_and(|until| Instant::now() < until)
    }

    fn start_cooldown(&self) {
        self.live
            .memo(|c: &mut Cooldown| c.0 = Some(Instant::now() + FAILURE_COOLDOWN));
    }

    /// A test hook: with `HERMESD_TEST_HANDOFF_PAUSE_MS` in the daemon's environment, the
    /// hand-off to a new segment pauses there after the segment is stored (announced by a
    /// `test_handoff` notice naming it), so tests can attach and send inside the window.
    async fn handoff_test_pause(&self, new_segment: &str) {
        let pause = self
            .state
            .config()
            .env
            .get("HERMESD_TEST_HANDOFF_PAUSE_MS")
            .and_then(|ms| ms.parse::<u64>().ok());
        if let Some(ms) = pause {
            self.live.emit_transient(
                self.turn_id,
                Kind::Notice(pb::Notice {
                    kind: "test_handoff".into(),
                    text: new_segment.to_string(),
                }),
            );
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
    }

    /// Compress `messages` (the whole context of segment `segment`) and store the result as a
    /// new segment, unless there is nothing to gain (or automatic compression is off or cooling
    /// down after a failure).
    pub async fn compact(
        &self,
        segment: &str,
        messages: &[ChatMessage],
        trigger: Trigger,
    ) -> Result<Result<Compacted, Skipped>, StoreError> {
        if trigger != Trigger::Manual && !self.settings.enabled {
            return Ok(Err(Skipped::Disabled));
        }
        let cooling = trigger != Trigger::Manual && self.cooling_down();
        if cooling && trigger == Trigger::Size {
            return Ok(Err(Skipped::CoolingDown));
        }
        let began = Instant::now();
        let Some(prepared) =
            compress::prepare(messages, &self.settings.compress, self.context_length)
        else {
            return Ok(Err(Skipped::NothingToSummarise));
        };
        let prepare_time = began.elapsed();
        let pruned = prepared.pruned.pruned;
        let outcome = if cooling {
            SummaryOutcome::Failed("an earlier summary failed moments ago".into())
        } else {
            match auxiliary::complete(
                self.state,
                AuxiliaryTask::Compression,
                &prepared.request,
                self.cancel,
            )
            .await
            {
                Ok(text) => SummaryOutcome::Summary(text),
                Err(auxiliary::AuxError::Interrupted) => return Ok(Err(Skipped::Interrupted)),
                Err(e) => {
                    tracing::warn!(session = %segment, error = %e, "compression summary failed");
                    self.start_cooldown();
                    SummaryOutcome::Failed(e.to_string())
                }
            }
        };
        let assembled_at = Instant::now();
        let compressed = compress::assemble(prepared, outcome);
        if compressed.tokens_after >= compressed.tokens_before {
            // A summary that does not help would be asked for again at every request: wait.
            if trigger != Trigger::Manual {
                self.start_cooldown();
            }
            return Ok(Err(Skipped::NoGain));
        }
        let rows = stored_rows(&compressed.messages);
        let from = segment.to_string();
        let row = self
            .state
            .store
            .write(move |tx| store::start_compressed_segment(tx, &from, &rows))
            .await?;
        tracing::debug!(
            session = %segment,
            new_segment = %row.id,
            prepare_us = prepare_time.as_micros() as u64,
            pruned_tool_results = pruned,
            assemble_and_store_us = assembled_at.elapsed().as_micros() as u64,
            "compressed"
        );
        self.handoff_test_pause(&row.id).await;
        // The live session is keyed by its conversation, which the new segment shares: a client
        // or a turn resolving the new id now finds this same live session.
        self.live.continue_in(&row.id);
        let how = if compressed.used_fallback {
            "older messages dropped (no summary could be made)"
        } else {
            "older messages summarised"
        };
        self.live
            .emit_durable(
                self.turn_id,
                Kind::Notice(pb::Notice {
                    kind: "context_compressed".into(),
                    text: format!(
                        "context compressed: {how}, ~{} → ~{} tokens; continuing in segment {}",
                        compressed.tokens_before, compressed.tokens_after, row.id
                    ),
                }),
            )
            .await?;
        tracing::info!(
            session = %segment,
            new_segment = %row.id,
            ?trigger,
            before = compressed.tokens_before,
            after = compressed.tokens_after,
            fallback = compressed.used_fallback,
            "context compressed"
        );
        Ok(Ok(Compacted {
            segment_id: row.id,
            messages: compressed.messages,
            tokens_before: compressed.tokens_before,
            tokens_after: compressed.tokens_after,
            used_fallback: compressed.used_fallback,
        }))
    }
}

/// A compressed context as the rows of its new segment (token counts stay with the originals).
pub fn stored_rows(messages: &[ChatMessage]) -> Vec<NewMessage> {
    messages.iter().map(new_message).collect()
}

fn new_message(message: &ChatMessage) -> NewMessage {
    let role = match message.role() {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    NewMessage {
        role: role.into(),
        content: message.content.clone(),
        tool_calls: history::tool_calls_json(&message.tool_calls),
        tool_call_id: message.tool_call_id.clone(),
        tool_name: message.name.clone(),
        ..NewMessage::default()
    }
}

/// A context limit stated in a provider's overflow error ("maximum context length is 8192
/// tokens", "prompt is too long: 210000 tokens > 200000 maximum", …), if there is one.
pub fn stated_limit(message: &str) -> Option<u64> {
    static PATTERNS: std::sync::OnceLock<Vec<regex::Regex>> = std::sync::OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        [
            r"(?i)maximum context length is (\d[\d,]*)",
            r"(?i)context (?:length|window|size) (?:of|is) (\d[\d,]*)",
            r"(?i)> ?(\d[\d,]*) (?:token )?maximum",
            r"(?i)(?:limit|maximum) of (\d[\d,]*) tokens",
        ]
        .iter()
        .filter_map(|p| regex::Regex::new(p).ok())
        .collect()
    });
    patterns.iter().find_map(|re| {
        re.captures(message)?
            .get(1)?
            .as_str()
            .replace(',', "")
            .parse()
            .ok()
    })
}

/// Whether a limit stated in an error may replace the known context length: smaller than what
/// is known, and larger than the request's fixed part (system prompt and tool schemas), which
/// no compression can shrink.
pub fn plausible_limit(stated: u64, known: u64, fixed_part: u64) -> bool {
    stated < known && stated > fixed_part.saturating_mul(2).max(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_read_from_provider_errors() {
        assert_eq!(
            stated_limit(
                "This model's maximum context length is 8,192 tokens. However, you requested 9000"
            ),
            Some(8192)
        );
        assert_eq!(
            stated_limit("prompt is too long: 210000 tokens > 200000 maximum"),
            Some(200_000)
        );
        assert_eq!(
            stated_limit("the context window of 32768 was exceeded"),
            Some(32_768)
        );
        assert_eq!(stated_limit("payload too large"), None);
    }

    #[test]
    fn only_plausible_limits_are_learned() {
        assert!(plausible_limit(32_000, 128_000, 3_000));
        assert!(!plausible_limit(200_000, 128_000, 3_000), "never raises");
        assert!(
            !plausible_limit(4_000, 128_000, 3_000),
            "never below twice the fixed part"
        );
        assert!(!plausible_limit(500, 128_000, 10), "never absurdly small");
    }
}
