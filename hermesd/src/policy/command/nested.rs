//! Commands a command runs on its behalf, judged as commands of their own: the text of every
//! `$(…)` and backtick substitution, the program after `find -exec`/`-execdir`/`-ok`/`-okdir`
//! (its `{}` the files find finds: the start directories joined to each `-name` pattern, else
//! unknown), and the program after `xargs` (with the operands xargs appends, unknown).

use super::shell::basename;

/// Text standing for run-time text in a rendered command: the path rules read it as unknown.
const UNKNOWN_TEXT: &str = "\"$@\"";

const FIND_EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];

/// xargs' options that take the next word as their value.
const XARGS_VALUED: &[&str] = &["-I", "-n", "-L", "-P", "-s", "-d", "-E", "-e", "-a"];

/// The programs one segment's `find -exec` or `xargs` runs, as command text.
pub(crate) fn segment_payloads(words: &[String]) -> Vec<String> {
    let Some(at) = words.iter().position(|w| {
        !w.contains('=') && !["sudo", "env", "command", "nohup", "nice"].contains(&w.as_str())
    }) else {
        return Vec::new();
    };
    match words.get(at).map(|w| basename(w)) {
        Some("find") => find_payloads(&words[at + 1..]),
        Some("xargs") => xargs_payload(&words[at + 1..]).into_iter().collect(),
        _ => Vec::new(),
    }
}

fn find_payloads(args: &[String]) -> Vec<String> {
    let mut roots: Vec<&str> = args
        .iter()
        .take_while(|w| !w.starts_with(['-', '(', '!']))
        .map(String::as_str)
        .collect();
    if roots.is_empty() {
        roots.push(".");
    }
    let names: Vec<&str> = args
        .windows(2)
        .filter(|pair| ["-name", "-iname"].contains(&pair[0].as_str()))
        .map(|pair| pair[1].as_str())
        .collect();
    let files: Vec<String> = if names.is_empty() {
        vec![UNKNOWN_TEXT.to_string()]
    } else {
        roots
            .iter()
            .flat_map(|root| {
                names
                    .iter()
                    .map(move |name| quote(&format!("{root}/{name}")))
            })
            .collect()
    };
    let mut out = Vec::new();
    let mut rest = args.iter();
    while let Some(word) = rest.next() {
        if !FIND_EXEC.contains(&word.as_str()) {
            continue;
        }
        let mut program = Vec::new();
        for word in rest.by_ref() {
            if word == ";" || word == "+" {
                break;
            }
            if word.contains("{}") {
                program.extend(files.iter().map(|f| {
                    let parts: Vec<String> = word.split("{}").map(quote).collect();
                    parts.join(f)
                }));
            } else {
                program.push(quote(word));
            }
        }
        if !program.is_empty() {
            out.push(program.join(" "));
        }
    }
    out
}

fn xargs_payload(args: &[String]) -> Option<String> {
    let mut replace: Option<String> = None;
    let mut index = 0;
    while let Some(word) = args.get(index) {
        if !word.starts_with('-') || word == "-" {
            break;
        }
        index += 1;
        if XARGS_VALUED.contains(&word.as_str()) {
            if word == "-I" {
                replace = args.get(index).cloned();
            }
            index += 1;
        } else if let Some(text) = word.strip_prefix("-I") {
            replace = Some(text.to_string());
        } else if word == "-i" || word == "--replace" {
            replace = Some("{}".to_string());
        } else if let Some(text) = word
            .strip_prefix("--replace=")
            .or_else(|| word.strip_prefix("-i"))
        {
            replace = Some(text.to_string());
        }
    }
    let program = args.get(index..).unwrap_or_default();
    let mut words: Vec<String> = match (&replace, program.is_empty()) {
        (_, true) => vec!["echo".to_string()],
        (Some(r), false) if !r.is_empty() => program
            .iter()
            .map(|w| {
                let parts: Vec<String> = w.split(r.as_str()).map(quote).collect();
                parts.join(UNKNOWN_TEXT)
            })
            .collect(),
        _ => program.iter().map(|w| quote(w)).collect(),
    };
    if replace.is_none() {
        words.push(UNKNOWN_TEXT.to_string());
    }
    Some(words.join(" "))
}

/// `word` as shell text: bare if it is plain, else single-quoted; run-time text stays unknown.
fn quote(word: &str) -> String {
    word.split(super::protected::UNKNOWN)
        .map(|part| {
            let plain = !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_./:@%+=,-*?[]~{}".contains(c));
            if plain || part.is_empty() {
                part.to_string()
            } else {
                format!("'{}'", part.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(UNKNOWN_TEXT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::command::protected::split_words;

    fn nested_commands(command: &str) -> Vec<String> {
        let lexed = split_words(command).map(|l| {
            let mut out: Vec<String> = l.substitutions.iter().map(|s| s.to_string()).collect();
            out.extend(segment_payloads(&l.words));
            out
        });
        lexed.unwrap_or_default()
    }

    #[test]
    fn finds_the_programs_commands_run() {
        assert_eq!(nested_commands("find . -exec sh -c 'id' \\;"), ["sh -c id"]);
        assert_eq!(
            nested_commands("find src -name '*.rs' -exec grep -l foo {} +"),
            ["grep -l foo src/*.rs"]
        );
        assert_eq!(nested_commands("xargs sh -c 'id'"), ["sh -c id \"$@\""]);
        assert_eq!(
            nested_commands("xargs -I{} echo item {}"),
            ["echo item \"$@\""]
        );
        assert_eq!(nested_commands("cat $(echo .env)"), ["echo .env"]);
        assert!(nested_commands("git status").is_empty());
        assert_eq!(nested_commands("f''ind . -exec id \\;"), ["id"]);
    }
}
