//! The slash commands of the chat client, from one table (the TUI and the chat gateway will use
//! the same names): parsing, help, and a suggestion for a mistyped name.

/// A command the user typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    Help,
    New,
    Sessions,
    Model,
    Tools,
    Busy(Option<String>),
    Stop,
    Usage,
    Verbose,
    /// Show the title, or set it to the rest of the line.
    Title(Option<String>),
    /// Copy the conversation into a new one and continue there (optional title).
    Branch(Option<String>),
    Undo,
    Retry,
    Resume(Option<String>),
    Compress,
    Detach,
    Quit,
}

/// Name, arguments and what it does, in the order `/help` lists them.
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("help", "", "this list"),
    ("new", "", "start a new session (this one goes on)"),
    ("sessions", "", "recent sessions and their state"),
    ("model", "", "the model answering, and the fallbacks"),
    ("tools", "", "the toolsets sessions get"),
    (
        "busy",
        "[queue|steer|interrupt]",
        "what input during a turn does",
    ),
    ("stop", "", "interrupt the running turn"),
    ("usage", "", "tokens and cost of this session"),
    ("verbose", "", "show or hide reasoning and tool details"),
    ("title", "[text]", "show the session's title, or set it"),
    (
        "branch",
        "[title]",
        "copy this conversation and continue in the copy",
    ),
    ("undo", "", "remove the last exchange"),
    (
        "retry",
        "",
        "remove the last exchange and send its message again",
    ),
    ("resume", "ID|TITLE", "switch to another session"),
    ("compress", "", "summarise older turns now to free context"),
    ("detach", "", "leave; the session goes on (also Ctrl-D)"),
    ("quit", "", "leave the client"),
];

/// `Ok(None)` when `line` is not a command; `Err` explains an unknown one.
pub fn parse(line: &str) -> Result<Option<Slash>, String> {
    let Some(rest) = line.trim().strip_prefix('/') else {
        return Ok(None);
    };
    let mut words = rest.split_whitespace();
    let name = words.next().unwrap_or("").to_lowercase();
    let arg = words.next().map(str::to_string);
    let rest_of_line = rest
        .trim_start()
        .split_once(char::is_whitespace)
        .map(|(_, tail)| tail.trim().to_string())
        .filter(|tail| !tail.is_empty());
    Ok(Some(match name.as_str() {
        "help" | "?" => Slash::Help,
        "new" => Slash::New,
        "sessions" => Slash::Sessions,
        "model" => Slash::Model,
        "tools" => Slash::Tools,
        "busy" => Slash::Busy(arg),
        "stop" => Slash::Stop,
        "usage" => Slash::Usage,
        "verbose" => Slash::Verbose,
        "title" => Slash::Title(rest_of_line),
        "branch" | "fork" => Slash::Branch(rest_of_line),
        "undo" => Slash::Undo,
        "retry" => Slash::Retry,
        "resume" => Slash::Resume(rest_of_line),
        "compress" | "compact" => Slash::Compress,
        "detach" => Slash::Detach,
        "quit" | "exit" => Slash::Quit,
        other => return Err(unknown(other)),
    }))
}

fn unknown(name: &str) -> String {
    let by_prefix = COMMANDS
        .iter()
        .map(|(candidate, _, _)| *candidate)
        .find(|candidate| !name.is_empty() && candidate.starts_with(name));
    let by_distance = COMMANDS
        .iter()
        .map(|(candidate, _, _)| (distance(name, candidate), *candidate))
        .min()
        .filter(|(d, _)| *d <= 2)
        .map(|(_, candidate)| candidate);
    match by_prefix.or(by_distance) {
        Some(candidate) => {
            format!("unknown command /{name}; did you mean /{candidate}? (/help lists them)")
        }
        None => format!("unknown command /{name} (/help lists them)"),
    }
}

/// Levenshtein distance, for suggestions.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(current + 1);
            previous = current;
        }
    }
    row[b.len()]
}

/// The `/help` text.
pub fn help() -> String {
    COMMANDS
        .iter()
        .map(|(name, args, what)| format!("  /{name:<9} {args:<24} {what}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_and_typos_get_a_suggestion() {
        assert_eq!(parse("hello"), Ok(None));
        assert_eq!(
            parse("/busy steer"),
            Ok(Some(Slash::Busy(Some("steer".into()))))
        );
        assert_eq!(
            parse("/title  Deploy the web server "),
            Ok(Some(Slash::Title(Some("Deploy the web server".into()))))
        );
        assert_eq!(parse("/title"), Ok(Some(Slash::Title(None))));
        assert_eq!(
            parse("/resume my notes"),
            Ok(Some(Slash::Resume(Some("my notes".into()))))
        );
        assert_eq!(
            parse("/busy steer"),
            Ok(Some(Slash::Busy(Some("steer".into()))))
        );
        assert_eq!(parse(" /Detach "), Ok(Some(Slash::Detach)));
        let err = parse("/detahc").unwrap_err();
        assert!(err.contains("did you mean /detach?"), "{err}");
        let err = parse("/ses").unwrap_err();
        assert!(err.contains("/sessions"), "{err}");
        assert!(!parse("/zzzzzzzz").unwrap_err().contains("did you mean"));
        assert!(help().contains("/verbose"));
    }
}
