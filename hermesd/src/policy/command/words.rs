//! De-obfuscation of shell words for the terminal guard: quotes, escapes, `${x:-default}` /
//! `${x/a/b}` expansions and tiny literal `$(echo rm)` substitutions, without executing anything.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::lex::shlex_split;
use super::shell::{backtick_end, char_len_at, dollar_paren_end};

static SIMPLE_LITERAL: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\A[A-Za-z0-9_./:@%+=,-]+\z").ok());
static ECHO_FLAGS: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\A-[nEe]+\z").ok());
static PARAM_REPLACEMENT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\$\{[^}/\s]+/[^}/]*/(?P<r>[^}]*)\}").ok());
static PARAM_DEFAULT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\$\{[^}:}\s]+:-(?P<r>[^}]*)\}").ok());
static ENV_ASSIGNMENT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\A[A-Za-z_][A-Za-z0-9_]*=[^\n]*\z").ok());

/// Every lazily compiled regex of this file, for the compile test.
#[cfg(test)]
pub(super) fn all_regexes_compile() -> bool {
    [
        &SIMPLE_LITERAL,
        &ECHO_FLAGS,
        &PARAM_REPLACEMENT,
        &PARAM_DEFAULT,
        &ENV_ASSIGNMENT,
    ]
    .iter()
    .all(|re| re.is_some())
}

fn regex_matches(re: &LazyLock<Option<Regex>>, text: &str) -> bool {
    re.as_ref().is_some_and(|re| re.is_match(text))
}

fn is_simple_literal(value: &str) -> bool {
    regex_matches(&SIMPLE_LITERAL, value)
}

/// Whether `word` is a `NAME=value` environment assignment.
pub(super) fn is_env_assignment(word: &str) -> bool {
    word.contains('=') && regex_matches(&ENV_ASSIGNMENT, word)
}

/// Output of a tiny literal `echo x` / `printf x` / `printf %s x` substitution, if that simple.
fn literal_substitution_output(script: &str) -> Option<String> {
    let tokens = shlex_split(script, false)?;
    let (command, mut args) = tokens.split_first()?;
    match command.to_lowercase().as_str() {
        "echo" => {
            while args
                .first()
                .is_some_and(|arg| regex_matches(&ECHO_FLAGS, arg))
            {
                args = &args[1..];
            }
            match args {
                [only] if is_simple_literal(only) => Some(only.clone()),
                _ => None,
            }
        }
        "printf" => match args {
            [only] if is_simple_literal(only) => Some(only.clone()),
            [format, value] if format == "%s" && is_simple_literal(value) => Some(value.clone()),
            _ => None,
        },
        _ => None,
    }
}

fn replace_simple_command_substitutions(word: &str) -> String {
    let bytes = word.as_bytes();
    let mut out = String::with_capacity(word.len());
    let mut i = 0;
    while i < bytes.len() {
        let substitution = if bytes[i] == b'$' && bytes.get(i + 1) == Some(&b'(') {
            dollar_paren_end(word, i).map(|end| (end, &word[i + 2..end - 1]))
        } else if bytes[i] == b'`' {
            backtick_end(word, i).map(|end| (end, &word[i + 1..end - 1]))
        } else {
            None
        };
        if let Some((end, script)) = substitution
            && let Some(output) = literal_substitution_output(script)
        {
            out.push_str(&output);
            i = end;
            continue;
        }
        let len = char_len_at(word, i);
        out.push_str(&word[i..i + len]);
        i += len;
    }
    out
}

fn replace_param(re: &LazyLock<Option<Regex>>, text: String) -> String {
    match re.as_ref() {
        Some(re) if re.is_match(&text) => re.replace_all(&text, "${r}").into_owned(),
        _ => text,
    }
}

fn replace_simple_expansions(word: &str) -> String {
    let mut word = replace_simple_command_substitutions(word);
    if word.contains("${") {
        word = replace_param(&PARAM_REPLACEMENT, word);
        word = replace_param(&PARAM_DEFAULT, word);
    }
    word
}

/// Remove quotes and backslash escapes from a word.
fn strip_word_syntax(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut quote: Option<char> = None;
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == '\\' && q == '"' && chars.peek().is_some() => {
                out.extend(chars.next());
            }
            Some(q) if c == q => quote = None,
            Some(_) => out.push(c),
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '\\' && chars.peek().is_some() => out.extend(chars.next()),
            None => out.push(c),
        }
    }
    out
}

/// Approximate how quoting, escapes and literal substitutions spell a command word. A word
/// without quotes, escapes or expansions is its own spelling (borrowed, nothing allocated).
pub(super) fn deobfuscate_word(word: &str) -> Cow<'_, str> {
    if !word.contains(['\'', '"', '\\', '$', '`']) {
        return Cow::Borrowed(word);
    }
    let mut current = word.to_owned();
    for _ in 0..2 {
        let next = strip_word_syntax(&replace_simple_expansions(&current));
        if next == current {
            break;
        }
        current = next;
    }
    Cow::Owned(current)
}
