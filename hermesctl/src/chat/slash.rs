//! The slash commands of the chat client: the names and aliases of the one shared table
//! (`hermes_proto::commands`, which the TUI and the gateway use too) parsed into what this
//! client does, its help, and a suggestion for a mistyped name.

/// A command the user typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    Help,
    New,
    Sessions,
    Model,
    Tools,
    /// Attach the image at the rest of the line to the next message.
    Image(Option<String>),
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
    ReloadMcp,
    Detach,
    Quit,
}

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
    let canonical = hermes_proto::commands::lookup(&name)
        .filter(|c| c.in_terminal())
        .map_or(name.as_str(), |c| c.name);
    Ok(Some(match canonical {
        "help" => Slash::Help,
        "new" => Slash::New,
        "sessions" => Slash::Sessions,
        "model" => Slash::Model,
        "tools" => Slash::Tools,
        "image" => Slash::Image(rest_of_line),
        "busy" => Slash::Busy(arg),
        "stop" => Slash::Stop,
        "usage" => Slash::Usage,
        "verbose" => Slash::Verbose,
        "title" => Slash::Title(rest_of_line),
        "branch" => Slash::Branch(rest_of_line),
        "undo" => Slash::Undo,
        "retry" => Slash::Retry,
        "resume" => Slash::Resume(rest_of_line),
        "compress" => Slash::Compress,
        "reload_mcp" => Slash::ReloadMcp,
        "detach" => Slash::Detach,
        "quit" => Slash::Quit,
        other => return Err(unknown(other)),
    }))
}

fn unknown(name: &str) -> String {
    match hermes_proto::commands::suggest(name, terminal_commands().map(|c| c.name)) {
        Some(candidate) => {
            format!("unknown command /{name}; did you mean /{candidate}? (/help lists them)")
        }
        None => format!("unknown command /{name} (/help lists them)"),
    }
}

/// The commands a terminal client offers, in `/help` order.
pub fn terminal_commands() -> impl Iterator<Item = &'static hermes_proto::commands::Command> + Clone
{
    hermes_proto::commands::COMMANDS
        .iter()
        .filter(|c| c.in_terminal())
}

/// The `/help` text.
pub fn help() -> String {
    terminal_commands()
        .map(|c| format!("  /{:<9} {:<24} {}", c.name, c.args, c.description))
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
