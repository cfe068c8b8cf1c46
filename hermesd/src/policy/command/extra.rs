//! Terminal-guard rules this daemon adds on top of Hermes: printing a secret file (`cat .env`)
//! and truncating an existing file with `>` (the only rule that looks at the filesystem).

use std::path::{Path, PathBuf};

use super::Danger;
use super::command_words::CommandWord;
use super::lex::shlex_split;
use super::shell::{basename, lowercase, read_word};
use super::words::deobfuscate_word;

/// Key of the secret-file-read rule.
pub const SECRET_READ_KEY: &str = "read secret file (.env, credentials, private key)";
/// Key of the overwrite-existing-file rule.
pub const OVERWRITE_KEY: &str = "overwrite existing file via > redirection";

/// Commands that print (or encode) a file's contents.
const READERS: [&str; 20] = [
    "cat", "tac", "less", "more", "head", "tail", "bat", "batcat", "nl", "strings", "od", "xxd",
    "hexdump", "base64", "grep", "egrep", "fgrep", "rg", "awk", "view",
];

/// Whether a file name (last path component) names a secret store.
fn is_secret_file(name: &str) -> bool {
    let name = name.to_lowercase();
    match name.as_str() {
        ".env" | ".envrc" | ".netrc" | ".pgpass" | ".npmrc" | ".pypirc" | ".git-credentials"
        | "credentials" | "credentials.json" | "id_rsa" | "id_dsa" | "id_ecdsa" | "id_ed25519" => {
            true
        }
        _ => name.strip_prefix(".env.").is_some_and(|suffix| {
            !matches!(
                suffix,
                "example" | "sample" | "template" | "dist" | "defaults"
            )
        }),
    }
}

/// A reader command (`cat`, `head`, `grep`, …) whose operands or `<` input include a secret file.
/// `words` are the command words of the normalised command
/// ([`super::command_words::segment_command_words`]).
pub(super) fn secret_file_read(words: &[CommandWord<'_>]) -> Option<Danger> {
    for word in words {
        let (segment, end) = (word.segment, word.end);
        if !READERS.contains(&&*lowercase(basename(&word.executable))) {
            continue;
        }
        let Some(args) = shlex_split(&segment[end..], true) else {
            continue;
        };
        let mut after_output_redirect = false;
        for arg in &args {
            if arg.starts_with('>') {
                after_output_redirect = true;
                continue;
            }
            let is_write_target = std::mem::take(&mut after_output_redirect);
            if !is_write_target && !arg.starts_with('-') && is_secret_file(basename(arg)) {
                return Some(Danger::named(SECRET_READ_KEY));
            }
        }
    }
    None
}

/// Offsets of unquoted `>` redirections that truncate their target, each with the offset
/// where the target word starts. Skips `>>`, `<>`, `>(…)` and `>&N` / `>&-`.
fn truncating_redirections(command: &str) -> Vec<usize> {
    let bytes = command.as_bytes();
    let mut targets = Vec::new();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if c == b'\\' && q == b'"' {
                i += 1;
            } else if c == q {
                quote = None;
            }
        } else if c == b'\\' {
            i += 1;
        } else if c == b'\'' || c == b'"' {
            quote = Some(c);
        } else if c == b'>' && (i == 0 || bytes[i - 1] != b'<') {
            let mut after = i + 1;
            match bytes.get(after) {
                Some(b'>') => {
                    i += 2;
                    continue;
                }
                Some(b'(') => {
                    i += 1;
                    continue;
                }
                Some(b'|') => after += 1,
                Some(b'&') => {
                    let rest = command[after + 1..].trim_start();
                    if rest.is_empty() || rest.starts_with(|c: char| c.is_ascii_digit() || c == '-')
                    {
                        i += 2;
                        continue;
                    }
                    after += 1;
                }
                _ => {}
            }
            targets.push(after);
            i = after;
            continue;
        }
        i += 1;
    }
    targets
}

/// Resolve a redirection target to a path (`~` is `user_home`), or `None` when it depends on
/// expansion.
fn resolve_target(target: &str, cwd: &Path, user_home: Option<&Path>) -> Option<PathBuf> {
    if target.is_empty() || target.contains(['$', '`', '*', '?', '[']) {
        return None;
    }
    let path = match target.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            user_home?.join(rest.trim_start_matches('/'))
        }
        Some(_) => return None,
        None => cwd.join(target),
    };
    let device = path.starts_with("/dev") || path.starts_with("/proc");
    (!device).then_some(path)
}

/// A redirection in `normalized` that would truncate an existing regular file (`~` is
/// `user_home`, the policy's, never the process environment's).
pub(super) fn overwritten_existing_file(
    normalized: &str,
    cwd: &Path,
    user_home: Option<&Path>,
) -> Option<Danger> {
    truncating_redirections(normalized)
        .into_iter()
        .find_map(|at| {
            let (start, end) = read_word(normalized, at);
            let target = deobfuscate_word(&normalized[start..end]);
            let path = resolve_target(&target, cwd, user_home)?;
            let is_file = std::fs::metadata(&path).is_ok_and(|m| m.is_file());
            is_file.then_some(Danger::named(OVERWRITE_KEY))
        })
}
