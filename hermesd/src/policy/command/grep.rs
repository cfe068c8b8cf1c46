//! `grep -P` handling of the terminal guard: single-quoted PCRE pattern operands are data, so
//! they are blanked before regex matching (`grep -P '(safe|rm -rf /)'` is not a deletion).

use super::command_words::CommandWord;
use super::exec_flags::split_option;
use super::lex::tokens_with_spans;
use super::shell::{basename, lowercase};

/// Long grep options that own the next argument (space-separated).
const GREP_OPTIONS_WITH_ARG: &str = "--after-context --before-context --binary-files --context --directories \
     --devices --exclude --exclude-dir --exclude-from --include --label --max-count \
     --regexp --file";
const GREP_SHORT_WITH_ARG: &str = "ABCDdefm";

/// Spans of single-quoted `grep -P` pattern operands; `true` when a grep parse was malformed.
fn quoted_grep_pattern_spans(words: &[CommandWord<'_>]) -> (Vec<(usize, usize)>, bool) {
    let mut spans = Vec::new();
    for word in words {
        let (segment_at, segment, start) = (word.segment_at, word.segment, word.start);
        if !matches!(&*lowercase(basename(&word.executable)), "grep" | "egrep") {
            continue;
        }
        let Some(tokens) = tokens_with_spans(segment, start) else {
            return (Vec::new(), true);
        };
        let args = tokens.get(1..).unwrap_or_default();
        let (mut pcre, mut explicit) = (false, false);
        let mut pattern_indexes = Vec::new();
        let mut operand_index = None;
        let mut options = true;
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let token = arg.value.as_str();
            if options && token == "--" {
                options = false;
            } else if options && token.starts_with("--") {
                let (option, value) = split_option(token);
                pcre |= option == "--perl-regexp";
                explicit |= option == "--regexp" || option == "--file";
                if GREP_OPTIONS_WITH_ARG.split(' ').any(|o| o == option) && value.is_none() {
                    if i + 1 >= args.len() {
                        return (Vec::new(), true);
                    }
                    if option == "--regexp" {
                        pattern_indexes.push(i + 1);
                    }
                    i += 1;
                } else if option == "--regexp" {
                    pattern_indexes.push(i);
                }
            } else if options && token.starts_with('-') && token != "-" {
                let letters: Vec<char> = token.chars().skip(1).collect();
                for (j, &c) in letters.iter().enumerate() {
                    pcre |= c == 'P';
                    explicit |= c == 'e' || c == 'f';
                    if GREP_SHORT_WITH_ARG.contains(c) {
                        if j + 1 < letters.len() {
                            if c == 'e' {
                                pattern_indexes.push(i);
                            }
                        } else {
                            if i + 1 >= args.len() {
                                return (Vec::new(), true);
                            }
                            if c == 'e' {
                                pattern_indexes.push(i + 1);
                            }
                            i += 1;
                        }
                        break;
                    }
                }
            } else if operand_index.is_none() {
                operand_index = Some(i);
            }
            i += 1;
        }
        if !explicit {
            match operand_index {
                Some(index) => pattern_indexes.push(index),
                None => return (Vec::new(), pcre),
            }
        }
        if pcre {
            for index in pattern_indexes {
                if let Some(arg) = args.get(index).filter(|a| a.inert_single_quoted) {
                    spans.push((segment_at + arg.start, segment_at + arg.end));
                }
            }
        }
    }
    (spans, false)
}

/// `command` with quoted `grep -P` patterns blanked to spaces, and whether grep parsing failed
/// (then the command is returned untouched).
/// `words` are the command words of `command` ([`super::command_words::segment_command_words`]).
pub(super) fn grep_safe_variant(command: &str, words: &[CommandWord<'_>]) -> (String, bool) {
    let (spans, malformed) = quoted_grep_pattern_spans(words);
    if malformed || spans.is_empty() {
        return (command.to_owned(), malformed);
    }
    let mut out = String::with_capacity(command.len());
    let mut previous = 0;
    for (start, end) in spans {
        if previous < start {
            out.push_str(&command[previous..start]);
        }
        let width = command.get(start..end).map_or(0, |s| s.chars().count());
        out.extend(std::iter::repeat_n(' ', width));
        previous = end;
    }
    out.push_str(command.get(previous..).unwrap_or_default());
    (out, false)
}
