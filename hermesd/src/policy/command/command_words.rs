//! The command-position words of a command line — wrappers (`sudo`, `env`, `timeout`…, see
//! `wrappers`), assignments and the executable of every command start — and, per top-level
//! segment, each such word with its de-obfuscated spelling, computed once per command for the
//! rules that look at programs.

use std::borrow::Cow;

use super::shell::{command_starts, lowercase, read_word, top_level_segments};
use super::words::deobfuscate_word;
use super::wrappers::{Skipper, Step};

/// How many words at a command start are read for its program (wrappers, their options and
/// assignments included).
const MAX_PREFIX_WORDS: usize = 12;

/// `(start, end)` of every command-position word (wrappers, assignments and the executable).
pub(super) fn command_word_spans(command: &str) -> Vec<(usize, usize)> {
    command_word_spans_at(command, &command_starts(command))
}

/// [`command_word_spans`] given the command starts of `command`. A wrapper's options, their
/// values and its operands (`sudo -u bob`, `timeout 60`) are skipped as the wrapper reads
/// them ([`Skipper`]).
pub(super) fn command_word_spans_at(command: &str, starts: &[usize]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for &command_start in starts {
        let mut pos = command_start;
        let mut skipper = Skipper::default();
        for _ in 0..MAX_PREFIX_WORDS {
            let (start, end) = read_word(command, pos);
            if start == end {
                break;
            }
            pos = end;
            let deobfuscated = deobfuscate_word(&command[start..end]);
            match skipper.step(&lowercase(&deobfuscated)) {
                Step::Argument | Step::CommandLine(_) => {}
                Step::Assignment | Step::Wrapper => spans.push((start, end)),
                Step::Program => {
                    spans.push((start, end));
                    break;
                }
            }
        }
    }
    spans
}

/// One command-position word of a top-level segment: the segment, the word's span in it, and
/// its de-obfuscated spelling.
pub(super) struct CommandWord<'a> {
    pub(super) segment_at: usize,
    pub(super) segment: &'a str,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) executable: Cow<'a, str>,
}

/// Every command-position word of every top-level segment of `command`, in order: computed once
/// per command and shared by the rules that look at the programs it runs.
pub(super) fn segment_command_words(command: &str) -> Vec<CommandWord<'_>> {
    let mut out = Vec::new();
    for (segment_at, segment) in top_level_segments(command) {
        for (start, end) in command_word_spans(segment) {
            out.push(CommandWord {
                segment_at,
                segment,
                start,
                end,
                executable: deobfuscate_word(&segment[start..end]),
            });
        }
    }
    out
}
