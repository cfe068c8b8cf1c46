//! One session's conversation as the TUI holds it: blocks built from the session's events
//! (replayed and live), each event applied once by its seq, so a re-attach after a lost
//! connection neither loses nor repeats text. Bounded: the oldest blocks go past
//! [`MAX_BLOCKS`], a tool's output is kept to its last [`MAX_TOOL_OUTPUT`] bytes.

use hermes_proto::pb::{self, session_event::Kind};

/// Blocks kept per conversation; older ones are dropped (the store keeps them all).
pub const MAX_BLOCKS: usize = 4_000;
/// Bytes of one tool call's streamed output kept for its block.
pub const MAX_TOOL_OUTPUT: usize = 32 * 1024;

/// What a block of the conversation shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    User {
        text: String,
        message_id: u64,
    },
    /// The answer; `streaming` while its deltas arrive.
    Assistant {
        text: String,
        message_id: u64,
        streaming: bool,
    },
    /// The model's reasoning, folded to one line unless expanded.
    Reasoning {
        text: String,
    },
    Tool(ToolCall),
    /// A dim line: memory saved, skill created, compressed, fallback used, a resolved question…
    Notice {
        text: String,
    },
    /// The end of a turn: usage and cost.
    TurnEnd {
        text: String,
    },
    Error {
        message: String,
        hint: String,
    },
}

/// One tool call and what became of it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolCall {
    pub call_id: String,
    pub name: String,
    pub arguments: String,
    pub output: String,
    /// `None` while it runs.
    pub ok: Option<bool>,
    pub summary: String,
    pub duration_ms: u64,
}

/// A block and its revision (bumped on every change, so a rendering cache knows it is stale).
#[derive(Debug, Clone)]
pub struct Entry {
    pub block: Block,
    pub rev: u64,
    pub expanded: bool,
}

/// A question the session waits on.
#[derive(Debug, Clone, PartialEq)]
pub enum Pending {
    Approval(pb::ApprovalRequested),
    Clarify(pb::ClarifyRequested),
}

/// One session's conversation.
#[derive(Debug, Default)]
pub struct Conversation {
    pub entries: Vec<Entry>,
    /// The last seq applied; events at or below it are already here.
    pub last_seq: u64,
    /// True between a turn's start and its end.
    pub running: bool,
    pub pending: Option<Pending>,
    /// Input tokens of the newest model call: the context in use.
    pub context_tokens: u64,
    /// The replay of the first attach has ended.
    pub replayed: bool,
    next_rev: u64,
    /// Blocks dropped from the front, so positions stay comparable.
    pub dropped: usize,
}

impl Conversation {
    /// Apply one event from the attach stream; `false` when it was already applied (or carries
    /// nothing to show).
    pub fn apply(&mut self, event: &pb::SessionEvent) -> bool {
        if event.seq > 0 {
            if event.seq <= self.last_seq {
                return false;
            }
            self.last_seq = event.seq;
        }
        let Some(kind) = &event.kind else {
            return false;
        };
        match kind {
            Kind::TurnStarted(_) => self.running = true,
            Kind::UserMessage(m) => self.push(Block::User {
                text: m.text.clone(),
                message_id: m.message_id,
            }),
            Kind::TextDelta(d) => self.append_answer(&d.text),
            Kind::ReasoningDelta(d) => self.append_reasoning(&d.text),
            Kind::AssistantMessage(m) => self.finish_answer(m),
            Kind::ToolStarted(t) => self.push(Block::Tool(ToolCall {
                call_id: t.call_id.clone(),
                name: t.name.clone(),
                arguments: t.arguments.clone(),
                ..ToolCall::default()
            })),
            Kind::ToolOutput(o) => self.tool_output(&o.call_id, &o.chunk),
            Kind::ToolFinished(f) => self.tool_finished(f),
            Kind::ApprovalRequested(a) => self.pending = Some(Pending::Approval(a.clone())),
            Kind::ApprovalResolved(a) => {
                self.clear_pending(&a.id);
                self.push(Block::Notice {
                    text: format!("approval: {} (by {})", a.decision, a.by),
                });
            }
            Kind::ClarifyRequested(q) => self.pending = Some(Pending::Clarify(q.clone())),
            Kind::ClarifyAnswered(a) => {
                self.clear_pending(&a.id);
                self.push(Block::Notice {
                    text: format!("answered: {} (by {})", a.answer, a.by),
                });
            }
            Kind::TurnFinished(f) => {
                self.end_turn();
                self.push(Block::TurnEnd {
                    text: turn_summary(f),
                });
            }
            Kind::TurnFailed(f) => {
                self.end_turn();
                self.push(Block::Error {
                    message: f.message.clone(),
                    hint: f.hint.clone(),
                });
            }
            Kind::TurnInterrupted(i) => {
                self.end_turn();
                let by = if i.by.is_empty() { "" } else { " by " };
                self.push(Block::Notice {
                    text: format!("interrupted{by}{}", i.by),
                });
            }
            Kind::Notice(n) => self.push(Block::Notice {
                text: n.text.clone(),
            }),
            Kind::StateChanged(s) => {
                if s.state != pb::SessionState::Idle as i32 && s.state != 0 {
                    self.running = true;
                }
            }
            Kind::ReplayDone(_) => self.replayed = true,
            Kind::ClientsChanged(_) | Kind::Lagged(_) => return false,
        }
        true
    }

    /// A line of the client's own (the outcome of a slash command), outside the event stream.
    pub fn note(&mut self, text: String) {
        self.push(Block::Notice { text });
    }

    fn bump(&mut self) -> u64 {
        self.next_rev += 1;
        self.next_rev
    }

    fn push(&mut self, block: Block) {
        let rev = self.bump();
        self.entries.push(Entry {
            block,
            rev,
            expanded: false,
        });
        if self.entries.len() > MAX_BLOCKS {
            let excess = self.entries.len() - MAX_BLOCKS;
            self.entries.drain(..excess);
            self.dropped += excess;
        }
    }

    /// The last block, when it is of the kind `pick` accepts, marked changed.
    fn last_mut<T>(&mut self, pick: impl FnOnce(&mut Block) -> Option<T>) -> Option<T> {
        let rev = self.next_rev + 1;
        let entry = self.entries.last_mut()?;
        let found = pick(&mut entry.block)?;
        entry.rev = rev;
        self.next_rev = rev;
        Some(found)
    }

    fn append_answer(&mut self, text: &str) {
        let appended = self.last_mut(|block| match block {
            Block::Assistant {
                text: answer,
                streaming: true,
                ..
            } => {
                answer.push_str(text);
                Some(())
            }
            _ => None,
        });
        if appended.is_none() {
            self.push(Block::Assistant {
                text: text.to_string(),
                message_id: 0,
                streaming: true,
            });
        }
    }

    fn append_reasoning(&mut self, text: &str) {
        let appended = self.last_mut(|block| match block {
            Block::Reasoning { text: so_far } => {
                so_far.push_str(text);
                Some(())
            }
            _ => None,
        });
        if appended.is_none() {
            self.push(Block::Reasoning {
                text: text.to_string(),
            });
        }
    }

    /// The whole message replaces what was streamed of it (the replay of a turn that finished
    /// while this client was away holds the message, not its deltas).
    fn finish_answer(&mut self, m: &pb::AssistantMessage) {
        if !m.reasoning.is_empty() && !self.has_open_reasoning() {
            self.push(Block::Reasoning {
                text: m.reasoning.clone(),
            });
        }
        let replaced = self.last_mut(|block| match block {
            Block::Assistant {
                text,
                message_id,
                streaming: streaming @ true,
            } => {
                *text = m.text.clone();
                *message_id = m.message_id;
                *streaming = false;
                Some(())
            }
            _ => None,
        });
        if replaced.is_none() && !m.text.is_empty() {
            self.push(Block::Assistant {
                text: m.text.clone(),
                message_id: m.message_id,
                streaming: false,
            });
        }
    }

    fn has_open_reasoning(&self) -> bool {
        matches!(
            self.entries.last().map(|e| &e.block),
            Some(Block::Reasoning { .. })
        )
    }

    fn tool_mut(&mut self, call_id: &str) -> Option<&mut Entry> {
        self.entries
            .iter_mut()
            .rev()
            .take(64)
            .find(|e| matches!(&e.block, Block::Tool(t) if t.call_id == call_id))
    }

    fn tool_output(&mut self, call_id: &str, chunk: &str) {
        let rev = self.bump();
        if let Some(entry) = self.tool_mut(call_id)
            && let Block::Tool(t) = &mut entry.block
        {
            t.output.push_str(chunk);
            if t.output.len() > MAX_TOOL_OUTPUT {
                let mut cut = t.output.len() - MAX_TOOL_OUTPUT;
                while !t.output.is_char_boundary(cut) {
                    cut += 1;
                }
                t.output.drain(..cut);
            }
            entry.rev = rev;
        }
    }

    fn tool_finished(&mut self, f: &pb::ToolFinished) {
        let rev = self.bump();
        if let Some(entry) = self.tool_mut(&f.call_id)
            && let Block::Tool(t) = &mut entry.block
        {
            t.ok = Some(f.ok);
            t.summary = f.summary.clone();
            t.duration_ms = f.duration_ms;
            entry.rev = rev;
        }
    }

    fn clear_pending(&mut self, id: &str) {
        let matches = match &self.pending {
            Some(Pending::Approval(a)) => a.id == id,
            Some(Pending::Clarify(q)) => q.id == id,
            None => false,
        };
        if matches {
            self.pending = None;
        }
    }

    /// A turn ended: nothing streams or waits any more.
    fn end_turn(&mut self) {
        self.running = false;
        self.pending = None;
        let rev = self.bump();
        for entry in self.entries.iter_mut().rev().take(64) {
            match &mut entry.block {
                Block::Assistant { streaming, .. } if *streaming => {
                    *streaming = false;
                    entry.rev = rev;
                }
                Block::Tool(t) if t.ok.is_none() => {
                    t.ok = Some(false);
                    t.summary = "did not finish".into();
                    entry.rev = rev;
                }
                _ => {}
            }
        }
    }

    /// Fold or unfold every tool and reasoning block.
    pub fn set_expanded(&mut self, expanded: bool) {
        let rev = self.bump();
        for entry in &mut self.entries {
            if matches!(entry.block, Block::Tool(_) | Block::Reasoning { .. }) {
                entry.expanded = expanded;
                entry.rev = rev;
            }
        }
    }

    /// Index of the block holding message `id`.
    pub fn position_of_message(&self, id: u64) -> Option<usize> {
        self.entries.iter().position(|e| match &e.block {
            Block::User { message_id, .. } | Block::Assistant { message_id, .. } => {
                *message_id == id
            }
            _ => false,
        })
    }
}

/// "— 1,204 in / 88 out tokens · $0.0031 · 2 model calls, 1 tool"
fn turn_summary(f: &pb::TurnFinished) -> String {
    let u = f.usage.unwrap_or_default();
    let cost = u
        .cost_usd
        .map_or_else(|| "cost unknown".to_string(), |c| format!("${c:.4}"));
    format!(
        "{} in / {} out tokens · {cost} · {} model calls, {} tools",
        u.input_tokens, u.output_tokens, f.iterations, f.tool_calls
    )
}

#[cfg(test)]
mod tests;
