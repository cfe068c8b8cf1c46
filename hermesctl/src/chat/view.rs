//! What the chat client shows for each session event: the answer as streamed Markdown, reasoning
//! as one dim line (in full with `/verbose`), one progress line per tool call, questions, and a
//! footer with usage and cost when a turn ends.

use std::io::Write;

use hermes_proto::pb::session_event::Kind;

use super::markdown::MarkdownStream;

const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// The screen state of a chat.
#[derive(Debug)]
pub struct View {
    pub verbose: bool,
    answer: MarkdownStream,
    width: Option<usize>,
    streamed: bool,
    reasoning_shown: bool,
    /// Our own last input, so its echo from the daemon is not printed twice.
    pub own_input: Option<String>,
}

fn key_argument(arguments: &str) -> String {
    let parsed: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    let value = ["command", "path", "pattern", "query", "question", "action"]
        .iter()
        .find_map(|k| parsed.get(*k).and_then(|v| v.as_str()))
        .unwrap_or("");
    let line = value.replace('\n', " ");
    if line.chars().count() > 80 {
        format!("{}…", line.chars().take(80).collect::<String>())
    } else {
        line
    }
}

impl View {
    pub fn new(width: Option<usize>) -> Self {
        Self {
            verbose: false,
            answer: MarkdownStream::new(width),
            width,
            streamed: false,
            reasoning_shown: false,
            own_input: None,
        }
    }

    fn dim(&self, text: &str) -> String {
        if self.width.is_some() {
            format!("{DIM}{text}{RESET}")
        } else {
            text.to_string()
        }
    }

    fn end_answer(&mut self) -> String {
        self.streamed = false;
        self.reasoning_shown = false;
        self.answer.finish()
    }

    /// Print what `kind` means on screen.
    pub fn show(&mut self, kind: &Kind) {
        let text = self.render(kind);
        if !text.is_empty() {
            let mut out = std::io::stdout();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }

    /// The screen text for `kind`.
    pub fn render(&mut self, kind: &Kind) -> String {
        match kind {
            Kind::UserMessage(m) => {
                if self.own_input.as_deref() == Some(m.text.as_str()) {
                    self.own_input = None;
                    String::new()
                } else {
                    format!("\n› {}\n", m.text)
                }
            }
            Kind::ReasoningDelta(d) if self.verbose => self.dim(&d.text),
            Kind::ReasoningDelta(_) if !self.reasoning_shown => {
                self.reasoning_shown = true;
                self.dim("… thinking (/verbose shows it)\n")
            }
            Kind::TextDelta(d) => {
                self.streamed = true;
                self.answer.push(&d.text)
            }
            Kind::AssistantMessage(m) => {
                let mut out = if self.streamed || m.text.is_empty() {
                    String::new()
                } else {
                    self.answer.push(&m.text)
                };
                out.push_str(&self.end_answer());
                out
            }
            Kind::ToolStarted(t) => {
                let detail = if self.verbose {
                    t.arguments.clone()
                } else {
                    key_argument(&t.arguments)
                };
                format!("{}\n", self.dim(&format!("· {} {detail}", t.name)))
            }
            Kind::ToolOutput(o) if self.verbose => self.dim(&o.chunk),
            Kind::ToolFinished(t) => {
                let mark = if t.ok { "✓" } else { "✗" };
                let summary = if t.ok && !self.verbose {
                    ""
                } else {
                    t.summary.as_str()
                };
                format!(
                    "{}\n",
                    self.dim(&format!("  {mark} {} ms {summary}", t.duration_ms))
                )
            }
            Kind::ApprovalRequested(a) => format!("\n⚠ {}\n  {}\n", a.reason, a.command),
            Kind::ApprovalResolved(a) => self.dim(&format!("  {} ({})\n", a.decision, a.by)),
            Kind::ClarifyRequested(q) => {
                let mut out = format!("\n? {}\n", q.question);
                for (i, choice) in q.choices.iter().enumerate() {
                    out.push_str(&format!("  {}. {choice}\n", i + 1));
                }
                out
            }
            Kind::TurnFinished(f) => {
                let mut out = self.end_answer();
                let u = f.usage.unwrap_or_default();
                let cost = u
                    .cost_usd
                    .map_or_else(|| "cost unknown".to_string(), |c| format!("${c:.4}"));
                out.push_str(&self.dim(&format!(
                    "— {} in / {} out tokens · {cost} · {} model calls, {} tools\n",
                    u.input_tokens, u.output_tokens, f.iterations, f.tool_calls
                )));
                out
            }
            Kind::TurnFailed(f) => {
                let mut out = self.end_answer();
                out.push_str(&format!("✗ {} — {}\n", f.message, f.hint));
                out
            }
            Kind::TurnInterrupted(_) => {
                let mut out = self.end_answer();
                out.push_str(&self.dim("— interrupted\n"));
                out
            }
            Kind::Notice(n) => format!("{}\n", self.dim(&format!("note: {}", n.text))),
            _ => String::new(),
        }
    }
}
