//! Builds a [`Completion`] from stream events while passing each event on to the caller's sink.

use std::collections::BTreeMap;

use super::types::{Completion, EventSink, StreamEvent, ToolCall, Usage};

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Accumulates one response.
pub struct Assembler<'s, 'a> {
    sink: &'s mut EventSink<'a>,
    completion: Completion,
    calls: BTreeMap<usize, PartialCall>,
}

impl<'s, 'a> Assembler<'s, 'a> {
    pub fn new(sink: &'s mut EventSink<'a>) -> Self {
        Self {
            sink,
            completion: Completion::default(),
            calls: BTreeMap::new(),
        }
    }

    pub fn text(&mut self, text: &str) {
        if !text.is_empty() {
            self.completion.text.push_str(text);
            (self.sink)(StreamEvent::Text(text.to_string()));
        }
    }

    pub fn reasoning(&mut self, text: &str) {
        if !text.is_empty() {
            self.completion.reasoning.push_str(text);
            (self.sink)(StreamEvent::Reasoning(text.to_string()));
        }
    }

    /// A tool call fragment: `id`/`name` on its first fragment (later repeats are ignored),
    /// `arguments` appended.
    pub fn tool_call(
        &mut self,
        index: usize,
        id: Option<&str>,
        name: Option<&str>,
        arguments: &str,
    ) {
        let call = self.calls.entry(index).or_default();
        let is_new = call.name.is_empty();
        if call.id.is_empty()
            && let Some(id) = id
        {
            call.id = id.to_string();
        }
        if call.name.is_empty()
            && let Some(name) = name
        {
            call.name = name.to_string();
        }
        if is_new && !call.name.is_empty() {
            (self.sink)(StreamEvent::ToolCallStarted {
                index,
                id: call.id.clone(),
                name: call.name.clone(),
            });
        }
        if !arguments.is_empty() {
            call.arguments.push_str(arguments);
            (self.sink)(StreamEvent::ToolCallDelta {
                index,
                arguments: arguments.to_string(),
            });
        }
    }

    /// Usage fields reported so far; later reports override non-zero fields.
    pub fn usage(&mut self, usage: Usage) {
        let u = &mut self.completion.usage;
        let pick = |old: u64, new: u64| if new > 0 { new } else { old };
        u.input_tokens = pick(u.input_tokens, usage.input_tokens);
        u.output_tokens = pick(u.output_tokens, usage.output_tokens);
        u.cache_read_tokens = pick(u.cache_read_tokens, usage.cache_read_tokens);
        u.cache_write_tokens = pick(u.cache_write_tokens, usage.cache_write_tokens);
        u.reasoning_tokens = pick(u.reasoning_tokens, usage.reasoning_tokens);
    }

    pub fn finish_reason(&mut self, reason: &str) {
        if !reason.is_empty() {
            self.completion.finish_reason = reason.to_string();
        }
    }

    pub fn has_finish_reason(&self) -> bool {
        !self.completion.finish_reason.is_empty()
    }

    /// The completed response; tool calls in index order, ids filled in where the model gave none.
    pub fn finish(self, answered_by: &str) -> Completion {
        let mut completion = self.completion;
        completion.tool_calls = self
            .calls
            .into_iter()
            .map(|(index, call)| ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{index}")
                } else {
                    call.id
                },
                name: call.name,
                arguments: call.arguments,
            })
            .collect();
        completion.answered_by = answered_by.to_string();
        completion
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_split_over_many_deltas_assemble_in_index_order() {
        let mut seen = Vec::new();
        let mut record = |e: StreamEvent| seen.push(e);
        let mut sink: EventSink<'_> = &mut record;
        let mut asm = Assembler::new(&mut sink);
        asm.tool_call(1, Some("b"), Some("read_file"), "");
        asm.tool_call(0, Some("a"), Some("terminal"), "{\"comm");
        for piece in ["and\": ", "\"ls", " -la\"}"] {
            asm.tool_call(0, None, None, piece);
        }
        asm.tool_call(1, Some("b"), Some("read_file"), "{\"path\":\"x\"}");
        asm.text("done");
        let completion = asm.finish("p:m");
        assert_eq!(completion.tool_calls.len(), 2);
        assert_eq!(completion.tool_calls[0].id, "a");
        assert_eq!(
            completion.tool_calls[0].arguments,
            "{\"command\": \"ls -la\"}"
        );
        assert_eq!(
            completion.tool_calls[0].parsed_arguments().unwrap()["command"],
            "ls -la"
        );
        assert_eq!(completion.tool_calls[1].name, "read_file");
        let starts = seen
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolCallStarted { .. }))
            .count();
        assert_eq!(starts, 2, "each call starts once: {seen:?}");
    }

    #[test]
    fn malformed_arguments_are_an_error_for_the_model() {
        let call = ToolCall {
            id: "c".into(),
            name: "write_file".into(),
            arguments: "{\"path\": \"/tmp/x".into(),
        };
        let err = call.parsed_arguments().unwrap_err();
        assert!(
            err.contains("write_file") && err.contains("not valid JSON"),
            "{err}"
        );
    }
}
