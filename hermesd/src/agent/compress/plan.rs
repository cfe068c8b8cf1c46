//! Chooses what to keep (head, tail) and what to summarise (middle), never splitting a tool-call group.
//!
//! Rules:
//! - The head is the leading system messages plus `protect_first` messages, extended forward over
//!   tool results so it never ends inside a call group. If an earlier summary exists, the head
//!   stops before it: that summary (and its acknowledgements) is updated, not summarised as text.
//! - The tail is the last `protect_last` messages, moved back so it never starts with a tool result.
//!   It never starts before an earlier summary.
//! - The tail is shrunk by the token budget when the middle would hold fewer than
//!   [`MIN_MIDDLE_MESSAGES`] or when it is over twice the budget (a compression that leaves such a
//!   tail would fire again at once). Shrinking keeps at least [`MIN_TAIL_MESSAGES`] (down to
//!   [`ABS_MIN_TAIL_MESSAGES`] when nothing else leaves a middle).
//! - The last real user message is pulled into the tail when that keeps a middle and the tail stays
//!   within twice the budget.

use super::estimate::estimate_message;
use super::summary::{is_summary_message, is_synthetic};
use crate::llm::{ChatMessage, Role};

/// Fewest messages worth summarising.
pub const MIN_MIDDLE_MESSAGES: usize = 2;
/// Fewest messages a shrunk tail keeps when it can.
pub const MIN_TAIL_MESSAGES: usize = 4;
/// Fewest messages a tail ever keeps.
pub const ABS_MIN_TAIL_MESSAGES: usize = 2;

/// The knobs of planning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanLimits {
    /// Messages kept at the start (after leading system messages).
    pub protect_first: usize,
    /// Messages kept at the end, before token shrinking.
    pub protect_last: usize,
    /// Token budget of a shrunk tail.
    pub tail_token_budget: u64,
}

/// Where the conversation is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The head is `messages[..head_end]`.
    pub head_end: usize,
    /// The tail is `messages[tail_start..]`; the middle is what lies between, minus synthetic messages.
    pub tail_start: usize,
    /// Index of the earlier summary message inside the middle range, if any.
    pub summary_index: Option<usize>,
    /// Token estimate of all the messages planned over.
    pub total_tokens: u64,
    /// Token estimate of the middle (synthetic messages excluded).
    pub middle_tokens: u64,
}

impl Plan {
    /// Indices of the messages to summarise (synthetic ones excluded).
    pub fn middle_indices<'a>(
        &self,
        messages: &'a [ChatMessage],
    ) -> impl Iterator<Item = usize> + 'a {
        let range = self.head_end..self.tail_start.min(messages.len());
        range.filter(move |&i| !is_synthetic(&messages[i]))
    }
}

/// Plans a compression of `messages`, or `None` when nothing can be summarised.
pub fn plan(messages: &[ChatMessage], limits: &PlanLimits) -> Option<Plan> {
    let n = messages.len();
    let leading_system = messages
        .iter()
        .take_while(|m| m.role() == Role::System)
        .count();
    let mut head_end = align_forward(messages, (leading_system + limits.protect_first).min(n));
    let mut floor = head_end;
    let summary_index = messages.iter().rposition(is_summary_message);
    if let Some(s) = summary_index {
        let block_start = if s > 0 && is_synthetic(&messages[s - 1]) {
            s - 1
        } else {
            s
        };
        let block_end = if s + 1 < n && is_synthetic(&messages[s + 1]) {
            s + 2
        } else {
            s + 1
        };
        head_end = head_end.min(block_start);
        floor = floor.max(block_end);
    }
    let cuts = Cuts {
        messages,
        tokens: messages.iter().map(estimate_message).collect(),
        head_end,
        floor,
        cap: limits.tail_token_budget.saturating_mul(2),
    };

    let mut cut = cuts.align_back(n.saturating_sub(limits.protect_last).max(floor));
    if cuts.middle_len(cut) < MIN_MIDDLE_MESSAGES || cuts.tail_tokens(cut) > cuts.cap {
        let min_tail = MIN_TAIL_MESSAGES
            .min(limits.protect_last)
            .max(ABS_MIN_TAIL_MESSAGES);
        if let Some(shrunk) = cuts.shrink(limits.tail_token_budget, min_tail) {
            cut = cut.max(shrunk);
        }
    }
    cut = cuts.anchor_last_user(cut);
    if cuts.middle_len(cut) < MIN_MIDDLE_MESSAGES || cut >= n {
        return None;
    }
    Some(Plan {
        head_end,
        tail_start: cut,
        summary_index: summary_index.filter(|&s| s >= head_end && s < cut),
        total_tokens: cuts.tokens.iter().sum(),
        middle_tokens: (head_end..cut)
            .filter(|&i| !is_synthetic(&messages[i]))
            .map(|i| cuts.tokens[i])
            .sum(),
    })
}

fn is_tool(message: &ChatMessage) -> bool {
    message.role() == Role::Tool
}

/// Moves `index` forward past tool results.
fn align_forward(messages: &[ChatMessage], mut index: usize) -> usize {
    while index < messages.len() && is_tool(&messages[index]) {
        index += 1;
    }
    index
}

/// The conversation with per-message token estimates and the fixed bounds of the tail.
struct Cuts<'a> {
    messages: &'a [ChatMessage],
    tokens: Vec<u64>,
    head_end: usize,
    /// The tail never starts before this.
    floor: usize,
    /// A tail above this is too large to keep.
    cap: u64,
}

impl Cuts<'_> {
    fn len(&self) -> usize {
        self.messages.len()
    }

    /// Messages that would be summarised if the tail started at `cut`.
    fn middle_len(&self, cut: usize) -> usize {
        let end = cut.min(self.len());
        if end <= self.head_end {
            return 0;
        }
        self.messages[self.head_end..end]
            .iter()
            .filter(|m| !is_synthetic(m))
            .count()
    }

    fn tail_tokens(&self, cut: usize) -> u64 {
        self.tokens[cut.min(self.len())..].iter().sum()
    }

    /// Moves a tail start back to the assistant message whose results it would split;
    /// forward past the results when going back would cross the floor.
    fn align_back(&self, cut: usize) -> usize {
        let mut index = cut;
        while index > self.floor && index < self.len() && is_tool(&self.messages[index]) {
            index -= 1;
        }
        if index < self.len() && is_tool(&self.messages[index]) {
            align_forward(self.messages, cut)
        } else {
            index
        }
    }

    /// A tail start that fits the token budget, keeping at least `min_tail` messages
    /// (fewer, down to [`ABS_MIN_TAIL_MESSAGES`], when that is what leaves a middle).
    fn shrink(&self, budget: u64, min_tail: usize) -> Option<usize> {
        let n = self.len();
        let mut accumulated = 0u64;
        let mut cut = n;
        for i in (self.floor..n).rev() {
            if accumulated + self.tokens[i] > budget && n - i > min_tail {
                break;
            }
            accumulated += self.tokens[i];
            cut = i;
        }
        let candidates = std::iter::once(cut).chain(
            (ABS_MIN_TAIL_MESSAGES..=min_tail)
                .rev()
                .map(|keep| n.saturating_sub(keep)),
        );
        candidates
            .filter(|&c| c > self.floor)
            .find_map(|c| self.aligned_with_middle(c))
    }

    /// `cut` aligned to a call-group boundary (back if possible, else forward), if a middle remains.
    fn aligned_with_middle(&self, cut: usize) -> Option<usize> {
        let back = self.align_back(cut);
        if self.middle_len(back) >= MIN_MIDDLE_MESSAGES {
            return Some(back);
        }
        let forward = align_forward(self.messages, cut);
        (forward < self.len() && self.middle_len(forward) >= MIN_MIDDLE_MESSAGES).then_some(forward)
    }

    /// Pulls the tail start back to the last real user message when that keeps a middle within the cap.
    fn anchor_last_user(&self, cut: usize) -> usize {
        let last_user = self
            .messages
            .iter()
            .rposition(|m| m.role() == Role::User && !is_synthetic(m));
        match last_user {
            Some(user) if user < cut && user >= self.floor => {
                if self.middle_len(user) >= MIN_MIDDLE_MESSAGES
                    && self.tail_tokens(user) <= self.cap
                {
                    user
                } else {
                    cut
                }
            }
            _ => cut,
        }
    }
}
