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
        assert_eq!(parse(" /Detach "), Ok(Some(Slash::Detach)));
        let err = parse("/detahc").unwrap_err();
        assert!(err.contains("did you mean /detach?"), "{err}");
        let err = parse("/ses").unwrap_err();
        assert!(err.contains("/sessions"), "{err}");
        assert!(!parse("/zzzzzzzz").unwrap_err().contains("did you mean"));
        assert!(help().contains("/verbose"));
    }
}
