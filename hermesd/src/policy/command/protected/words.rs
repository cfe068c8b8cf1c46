//! The words of one segment as the path rules see them: split as the shell splits them, quotes
//! removed, and every expansion the rules cannot evaluate (`$X`, `${X}`, `$(…)`, backticks)
//! replaced by [`UNKNOWN`] — a leading home (`$HOME`, `${HOME}`, `$HERMES_HOME`,
//! `${HERMES_HOME}`) is kept, the resolver expands it. Also the roles of words: redirection
//! targets, operands, the `VAR=value` and `@file` forms.

use crate::policy::command::shell::{backtick_end, dollar_paren_end};

/// Stands for text the shell makes at run time (a variable, a command's output).
pub(in crate::policy::command) const UNKNOWN: char = '\u{1}';

/// Home variables the resolver expands at the start of a word.
const HOMES: [&str; 2] = ["HOME", "HERMES_HOME"];

/// One segment split into words, with the commands its substitutions run.
pub(in crate::policy::command) struct Lexed<'a> {
    pub(in crate::policy::command) words: Vec<String>,
    /// The text inside every `$(…)` and backtick pair, each a command of its own.
    pub(in crate::policy::command) substitutions: Vec<&'a str>,
}

/// `segment` split into words; `None` on unbalanced quoting.
pub(in crate::policy::command) fn split(segment: &str) -> Option<Lexed<'_>> {
    let mut lexed = Lexed {
        words: Vec::new(),
        substitutions: Vec::new(),
    };
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = segment.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('\''), _) => word.push(c),
            (None, ' ' | '\t' | '\r' | '\n') => {
                if std::mem::take(&mut in_word) {
                    lexed.words.push(std::mem::take(&mut word));
                }
            }
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (_, '\\') => {
                let (_, next) = chars.next()?;
                let kept = quote.is_none() || matches!(next, '$' | '`' | '"' | '\\' | '\n');
                if quote.is_some() && !kept {
                    word.push('\\');
                }
                if next != '\n' {
                    word.push(next);
                }
                in_word = true;
            }
            (_, '$' | '`') => {
                in_word = true;
                let end = expansion_end(segment, at);
                let text = &segment[at..end];
                if let Some(inner) = text
                    .strip_prefix("$(")
                    .map(|t| t.strip_suffix(')').unwrap_or(t))
                    .or_else(|| {
                        text.strip_prefix('`')
                            .map(|t| t.strip_suffix('`').unwrap_or(t))
                    })
                {
                    lexed.substitutions.push(inner);
                }
                let name = text
                    .strip_prefix("${")
                    .and_then(|t| t.strip_suffix('}'))
                    .or_else(|| text.strip_prefix('$'));
                if text == "$" {
                    word.push('$');
                } else if word.is_empty() && name.is_some_and(|n| HOMES.contains(&n)) {
                    word.push_str(text);
                } else {
                    word.push(UNKNOWN);
                }
                while chars.peek().is_some_and(|&(next, _)| next < end) {
                    chars.next();
                }
            }
            _ => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        lexed.words.push(word);
    }
    Some(lexed)
}

/// The offset just past the expansion starting at `at` (a `$` or a backtick); `at + 1` for a
/// `$` that starts none (`$'…'`, a lone `$`).
fn expansion_end(s: &str, at: usize) -> usize {
    let rest = &s[at..];
    if rest.starts_with('`') {
        return backtick_end(s, at).unwrap_or(s.len());
    }
    if rest.starts_with("$(") {
        return dollar_paren_end(s, at).unwrap_or(s.len());
    }
    if rest.starts_with("${") {
        return rest.find('}').map_or(s.len(), |end| at + end + 1);
    }
    let name = rest[1..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len() - 1);
    match rest[1..].chars().next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => at + 1 + name,
        Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => at + 2,
        _ => at + 1,
    }
}

/// Whether `word` is nothing but text made at run time (`"$f"`, `$(cat list)`).
pub(super) fn all_unknown(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|c| c == UNKNOWN)
}

pub(super) fn is_redirect_operator(word: &str) -> bool {
    let stripped = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
    matches!(stripped, ">" | ">>" | ">|" | "<>")
}

/// The path-like part of `word` and whether it is a redirection target. A descriptor
/// duplication (`2>&1`, `>&-`) names no file.
pub(super) fn redirect_target(word: &str, after_redirect: bool) -> (Option<&str>, bool) {
    if after_redirect {
        return (Some(word), true);
    }
    let stripped = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
    if let Some(rest) = stripped
        .strip_prefix(">>")
        .or_else(|| stripped.strip_prefix('>'))
    {
        let rest = rest.trim_start_matches('|');
        if let Some(fd) = rest.strip_prefix('&')
            && (fd == "-" || (!fd.is_empty() && fd.bytes().all(|b| b.is_ascii_digit())))
        {
            return (None, true);
        }
        let rest = rest.strip_prefix('&').unwrap_or(rest);
        return ((!rest.is_empty()).then_some(rest), true);
    }
    let value = match word.split_once('=') {
        Some((name, value)) if !name.is_empty() && !value.is_empty() => value,
        _ => word,
    };
    let value = value
        .strip_prefix('@')
        .filter(|v| !v.is_empty())
        .unwrap_or(value);
    (
        Some(value).filter(|v| !v.is_empty() && !v.starts_with('-')),
        false,
    )
}

/// The indexes of a command's operands: not the command, not an option, not a redirection.
pub(super) fn operands(words: &[String]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut after_redirect = false;
    for (index, word) in words.iter().enumerate().skip(1) {
        let redirect = is_redirect_operator(word);
        let attached = redirect_target(word, false).1;
        if !std::mem::replace(&mut after_redirect, redirect)
            && !redirect
            && !attached
            && !word.starts_with('-')
        {
            out.push(index);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        split(text).map(|l| l.words).unwrap_or_default()
    }

    #[test]
    fn expansions_are_unknown_homes_are_kept() {
        let u = UNKNOWN;
        assert_eq!(
            words("sqlite3 ~/.hermes/$D.db \"$HOME/x\" '$y' ${HERMES_HOME}/a"),
            [
                "sqlite3",
                &format!("~/.hermes/{u}.db"),
                "$HOME/x",
                "$y",
                "${HERMES_HOME}/a"
            ]
        );
        assert_eq!(
            words("cat \"$(ls -a | grep en)\" `echo x`d.db a\\ b"),
            ["cat", &u.to_string(), &format!("{u}d.db"), "a b"]
        );
        let lexed = split("cat $(echo .env) x").map(|l| l.substitutions);
        assert_eq!(lexed, Some(vec!["echo .env"]));
        assert!(split("echo 'open").is_none());
    }

    #[test]
    fn descriptor_duplications_name_no_file() {
        assert_eq!(redirect_target("2>&1", false), (None, true));
        assert_eq!(redirect_target(">&-", false), (None, true));
        assert_eq!(redirect_target(">&out.log", false), (Some("out.log"), true));
        assert_eq!(redirect_target("2>err", false), (Some("err"), true));
    }
}
