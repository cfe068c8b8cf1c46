//! Context compression, pure parts: estimate, prune, plan, summary request, and the rebuilt conversation.
//!
//! The daemon calls [`prepare`] when [`CompressionSettings::should_compress`] says so, sends
//! [`Prepared::request`] to the auxiliary model (with its own timeout), and hands the outcome to
//! [`assemble`]. Nothing here does I/O.

mod estimate;
mod fallback;
mod plan;
mod prune;
mod summary;
#[cfg(test)]
mod tests;

pub use estimate::{TokenMeter, estimate_messages, estimate_request};
use fallback::fallback_message;
use plan::{PlanLimits, plan};
pub use prune::PruneStats;
use summary::{previous_summary, summary_message};
#[cfg(test)]
use {
    estimate::{estimate_message, estimate_text, estimate_tools},
    plan::Plan,
    prune::{PRUNED_PREFIX, placeholder, prune_tool_results},
    summary::{is_summary_message, summary_request},
};

use crate::llm::{ChatMessage, ChatRequest};

/// When to compress and what to protect.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompressionSettings {
    /// Compress once the prompt reaches this share of the context window.
    pub threshold_ratio: f64,
    /// Messages kept verbatim at the start.
    pub protect_first: usize,
    /// Messages kept verbatim at the end (before token shrinking).
    pub protect_last: usize,
    /// Token budget of a shrunk tail, as a share of the threshold.
    pub tail_ratio: f64,
    /// Old tool results longer than this many characters are pruned.
    pub prune_min_chars: usize,
    /// Ceiling of the summary length in tokens (further capped at 5% of the context window).
    pub max_summary_tokens: u32,
}

impl Default for CompressionSettings {
    /// The configuration's defaults (`compression.*`), and hermesd's own pruning and summary
    /// limits.
    fn default() -> Self {
        let configured = crate::config::settings::CompressionSection::default();
        Self {
            threshold_ratio: configured.threshold,
            protect_first: configured.protect_first_n,
            protect_last: configured.protect_last_n,
            tail_ratio: configured.target_ratio,
            prune_min_chars: 200,
            max_summary_tokens: 10_000,
        }
    }
}

impl CompressionSettings {
    /// Prompt tokens at which compression starts.
    pub fn threshold_tokens(&self, context_length: u64) -> u64 {
        (context_length as f64 * self.threshold_ratio.clamp(0.05, 0.95)) as u64
    }

    /// Token budget of a shrunk tail.
    pub fn tail_token_budget(&self, context_length: u64) -> u64 {
        (self.threshold_tokens(context_length) as f64 * self.tail_ratio.clamp(0.05, 0.8)) as u64
    }

    /// The summary length asked for: `max_summary_tokens`, at most 5% of the window (at least 512).
    pub fn summary_token_limit(&self, context_length: u64) -> u32 {
        let window_share = u32::try_from(context_length / 20).unwrap_or(u32::MAX);
        self.max_summary_tokens.min(window_share).max(512)
    }

    /// Whether a prompt of `estimate` tokens should be compressed for this window.
    pub fn should_compress(&self, estimate: u64, context_length: u64) -> bool {
        context_length > 0 && estimate >= self.threshold_tokens(context_length)
    }
}

/// A conversation cut for compression, with the request that summarises its middle.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Kept at the start (old tool results pruned).
    pub head: Vec<ChatMessage>,
    /// To be replaced by the summary (old tool results pruned; earlier summary excluded).
    pub middle: Vec<ChatMessage>,
    /// Kept verbatim at the end.
    pub tail: Vec<ChatMessage>,
    /// The earlier summary being updated, if there was one.
    pub previous_summary: Option<String>,
    /// The request for the auxiliary model (built from the unpruned middle, no tools).
    pub request: ChatRequest,
    /// What pruning did to head and middle.
    pub pruned: PruneStats,
    /// Estimate of the messages before compression.
    pub tokens_before: u64,
}

/// What the auxiliary model gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryOutcome {
    /// The summary text.
    Summary(String),
    /// No summary: the reason (error, timeout, empty answer).
    Failed(String),
}

/// The continued conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Compressed {
    /// Head, summary (or fallback note) and tail, alternation kept.
    pub messages: Vec<ChatMessage>,
    /// Estimate of the messages before compression.
    pub tokens_before: u64,
    /// Estimate of [`Compressed::messages`].
    pub tokens_after: u64,
    /// How many messages the summary replaced.
    pub summarised: usize,
    /// Whether the fallback note was used instead of a summary.
    pub used_fallback: bool,
}

/// Cuts `messages` for compression; `None` when there is nothing to summarise.
pub fn prepare(
    messages: &[ChatMessage],
    settings: &CompressionSettings,
    context_length: u64,
) -> Option<Prepared> {
    let limits = PlanLimits {
        protect_first: settings.protect_first,
        protect_last: settings.protect_last,
        tail_token_budget: settings.tail_token_budget(context_length),
    };
    let plan = plan(messages, &limits)?;
    let previous = plan
        .summary_index
        .and_then(|i| previous_summary(&messages[i..=i]))
        .map(str::to_owned);
    let middle: Vec<&ChatMessage> = plan
        .middle_indices(messages)
        .map(|i| &messages[i])
        .collect();
    let request = summary::summary_request_for(
        &middle,
        plan.middle_tokens,
        previous.as_deref(),
        settings.summary_token_limit(context_length),
    );
    let head: Vec<&ChatMessage> = messages[..plan.head_end].iter().collect();
    let (head, mut pruned) = prune::pruned_copy(&head, settings.prune_min_chars);
    let (middle, middle_pruned) = prune::pruned_copy(&middle, settings.prune_min_chars);
    pruned.add(middle_pruned);
    Some(Prepared {
        head,
        middle,
        tail: messages[plan.tail_start..].to_vec(),
        previous_summary: previous,
        request,
        pruned,
        tokens_before: plan.total_tokens,
    })
}

/// The continued conversation: head, then the summary (or, on failure or an empty summary,
/// the fallback note keeping the earlier summary), then the tail.
pub fn assemble(prepared: Prepared, outcome: SummaryOutcome) -> Compressed {
    let summarised = prepared.middle.len();
    let (bridge, used_fallback) = match outcome {
        SummaryOutcome::Summary(text) if !text.trim().is_empty() => {
            (summary_message(&text, summarised), false)
        }
        SummaryOutcome::Summary(_) => (
            fallback_message(
                summarised,
                prepared.previous_summary.as_deref(),
                "the summary came back empty",
            ),
            true,
        ),
        SummaryOutcome::Failed(reason) => (
            fallback_message(summarised, prepared.previous_summary.as_deref(), &reason),
            true,
        ),
    };
    let messages = summary::splice(prepared.head, bridge, prepared.tail);
    Compressed {
        tokens_after: estimate_messages(&messages),
        messages,
        tokens_before: prepared.tokens_before,
        summarised,
        used_fallback,
    }
}
