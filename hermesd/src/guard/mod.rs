//! Guards on untrusted input: dangerous shell commands and prompt injection in text that reaches
//! the prompt. (Interim: the full pattern set lands with the guard module.)

use std::sync::LazyLock;

use regex::Regex;

/// A dangerous command pattern that matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Danger {
    pub key: &'static str,
    pub description: &'static str,
}

static DANGEROUS: LazyLock<Vec<(Regex, Danger)>> = LazyLock::new(|| {
    [(
        r"\brm\s+(-[^\s]*\s+)*-[^\s]*[rR]",
        Danger {
            key: "recursive_delete",
            description: "recursive delete",
        },
    )]
    .into_iter()
    .filter_map(|(p, d)| Regex::new(p).ok().map(|r| (r, d)))
    .collect()
});

/// The first dangerous pattern `command` matches.
pub fn detect_dangerous(command: &str) -> Option<Danger> {
    DANGEROUS
        .iter()
        .find(|(re, _)| re.is_match(command))
        .map(|(_, d)| *d)
}

static THREATS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [(
        r"(?i)ignore\s+(previous|all|above|prior)\s+instructions",
        "prompt_injection",
    )]
    .into_iter()
    .filter_map(|(p, id)| Regex::new(p).ok().map(|r| (r, id)))
    .collect()
});

/// Finding ids for a context file's text.
pub fn scan_context_text(text: &str) -> Vec<String> {
    THREATS
        .iter()
        .filter(|(re, _)| re.is_match(text))
        .map(|(_, id)| (*id).to_string())
        .collect()
}

/// What replaces a blocked file in the prompt.
pub fn blocked_notice(file_name: &str, findings: &[String]) -> String {
    format!(
        "[BLOCKED: {file_name} contained potential prompt injection ({}). Content not loaded.]",
        findings.join(", ")
    )
}
