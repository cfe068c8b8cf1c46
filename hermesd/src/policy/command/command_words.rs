//! The command-position words of a command line — wrappers (`sudo`, `env`…), assignments and
//! the executable of every command start — and, per top-level segment, each such word with its
//! de-obfuscated spelling, computed once per command for the rules that look at programs.

use std::borrow::Cow;

use super::shell::{command_starts, lowercase, read_word, top_level_segments};
use super::words::{deobfuscate_word, is_env_assignment};

const COMMAND_WRAPPERS: [&str; 8] = [
    "sudo", "env", "exec", "nohup", "setsid", "time", "command", "builtin",
];
const SUDO_OPTIONS_WITH_ARG: [&str; 10] = [
    "-c",
    "--close-from",
    "-g",
    "--group",
    "-h",
    "--host",
    "-p",
    "--prompt",
    "-u",
    "--user",
];

/// `(start, end)` of every command-position word (wrappers, assignments and the executable).
pub(super) fn command_word_spans(command: &str) -> Vec<(usize, usize)> {
    command_word_spans_at(command, &command_starts(command))
}

/// [`command_word_spans`] given the command starts of `command`.
pub(super) fn command_word_spans_at(command: &str, starts: &[usize]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for &command_start in starts {
        let mut pos = command_start;
        let mut prefix_words = 0;
        let mut skip_wrapper_options = false;
        let mut skip_next_wrapper_arg = false;
        while prefix_words < 12 {
            let (start, end) = read_word(command, pos);
            if start == end {
                break;
            }
            let deobfuscated = deobfuscate_word(&command[start..end]);
            let lower = lowercase(&deobfuscated);
            pos = end;
            prefix_words += 1;
            if skip_next_wrapper_arg {
                skip_next_wrapper_arg = false;
                continue;
            }
            if skip_wrapper_options && lower.starts_with('-') {
                let name = lower.split('=').next().unwrap_or_default();
                skip_next_wrapper_arg =
                    !lower.contains('=') && SUDO_OPTIONS_WITH_ARG.contains(&name);
                continue;
            }
            spans.push((start, end));
            if COMMAND_WRAPPERS.contains(&&*lower) {
                skip_wrapper_options = lower == "sudo" || lower == "env";
                continue;
            }
            if is_env_assignment(&deobfuscated) {
                skip_wrapper_options = false;
                continue;
            }
            break;
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
