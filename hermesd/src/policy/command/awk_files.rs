//! awk programs read from files (`awk -f prog.awk`, gawk's `--file`, `-E`/`--exec`,
//! `-i`/`--include`): each file is resolved as the file tools resolve it (against the working
//! directory, homes and symlinks followed) and read, at most [`MAX_PROGRAM_BYTES`] of it, and its
//! text gets the check an inline program gets (`system()`, pipes to and from commands). A file
//! that cannot be checked asks: missing, unreadable, not a regular file, too large, denied to the
//! read tools, named by run-time text, written by an earlier part of the same command, or itself
//! including others (`@include`, `@load`). gawk's `-l`/`--load` (a shared library) always asks.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::Danger;
use super::hidden::{AWK_COMMAND_KEY, AWKS, awk_runs};
use super::protected::UNKNOWN;
use super::shell::basename;
use crate::policy::paths::PathPolicy;

/// The largest awk program file that is read; a larger one asks.
pub(super) const MAX_PROGRAM_BYTES: u64 = 64 * 1024;

const UNCHECKED: Danger = Danger {
    key: AWK_COMMAND_KEY,
    description: "awk program file could not be checked (missing, unreadable, too large, \
                  denied, written by the same command, or loading other code)",
};

/// The danger of the program files an awk segment (`words`, split) reads, run from `cwd`
/// (real); `written` holds the files earlier segments of the command may write.
pub(crate) fn awk_file_code(
    words: &[String],
    cwd: &Path,
    paths: &PathPolicy,
    written: &[PathBuf],
) -> Option<Danger> {
    let at = words.iter().position(|w| {
        !w.contains('=')
            && !["sudo", "env", "command", "exec", "nohup", "time"].contains(&w.as_str())
    })?;
    if !AWKS.contains(&basename(&words[at])) {
        return None;
    }
    let mut args = &words[at + 1..];
    if basename(&words[at]) == "busybox" {
        args = args.get(1..).unwrap_or_default();
    }
    match program_files(args) {
        Err(()) => Some(UNCHECKED),
        Ok(files) => files
            .iter()
            .find_map(|file| file_code(file, cwd, paths, written)),
    }
}

/// The program files named by awk's options; `Err` for an option that loads code that cannot
/// be read as text (`-l`, `--load`).
fn program_files(args: &[String]) -> Result<Vec<&str>, ()> {
    let mut files = Vec::new();
    let mut rest = args.iter();
    while let Some(word) = rest.next() {
        let word = word.as_str();
        if word == "--" || !word.starts_with('-') || word == "-" {
            break;
        }
        let (option, value) = match word.split_once('=') {
            Some((option, value)) if option.starts_with("--") => (option, Some(value)),
            _ => (word, None),
        };
        match option {
            "-l" | "--load" => return Err(()),
            _ if option.starts_with("-l") && !option.starts_with("--") => return Err(()),
            "-f" | "--file" | "-E" | "--exec" | "-i" | "--include" => {
                match value.or_else(|| rest.next().map(String::as_str)) {
                    Some(file) => files.push(file),
                    None => return Err(()),
                }
            }
            "-v" | "-F" | "--assign" | "--field-separator" if value.is_none() => {
                rest.next();
            }
            _ if !option.starts_with("--") => {
                // `-fprog.awk`, `-Eprog.awk`, `-iprog.awk`; `-F,`, `-vx=1` hold their values.
                let attached = option.get(2..).filter(|v| !v.is_empty());
                if let (Some(letter), Some(file)) = (option.get(1..2), attached)
                    && ["f", "E", "i"].contains(&letter)
                {
                    files.push(file);
                }
            }
            _ => {}
        }
    }
    Ok(files)
}

/// The danger of one program file.
fn file_code(file: &str, cwd: &Path, paths: &PathPolicy, written: &[PathBuf]) -> Option<Danger> {
    if file.contains(UNKNOWN) || file == "-" {
        return Some(UNCHECKED);
    }
    let path = paths.resolve_in(file, cwd);
    if written.contains(&path) || paths.check_read(&path).is_err() {
        return Some(UNCHECKED);
    }
    let Some(text) = read_program(&path) else {
        return Some(UNCHECKED);
    };
    if text.contains("@include") || text.contains("@load") {
        return Some(UNCHECKED);
    }
    awk_runs(&text).then_some(Danger::named(AWK_COMMAND_KEY))
}

/// The text of a regular file of at most [`MAX_PROGRAM_BYTES`].
fn read_program(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_PROGRAM_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_PROGRAM_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() as u64 > MAX_PROGRAM_BYTES {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
