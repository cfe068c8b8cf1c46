//! Threat scanning for memory content: Hermes' "strict" pattern set (prompt injection,
//! exfiltration, persistence, promptware) plus invisible/bidirectional Unicode, applied
//! before an entry is stored and when an entry from disk enters the system prompt. Hermes bounds
//! the gaps in its patterns (`[^\n]{0,2048}`) against backtracking; Rust's regex engine cannot
//! backtrack, and bounded gaps cost megabytes of compiled automaton, so the gaps are unbounded.

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// Only this many leading characters are scanned (keeps worst-case time bounded).
pub const MAX_SCAN_CHARS: usize = 65_536;

/// Invisible or direction-changing code points used to hide injected text.
const INVISIBLE_CHARS: [char; 17] = [
    '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{2062}', '\u{2063}', '\u{2064}', '\u{FEFF}',
    '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}',
    '\u{2069}',
];

/// Bounded filler between key words ("ignore all of the prior instructions").
macro_rules! filler {
    () => {
        r"(?:\w+\s+){0,8}"
    };
}

/// `(pattern, id)` in Hermes' order; all are matched case-insensitively after NFKC.
pub(super) const PATTERNS: &[(&str, &str)] = &[
    // Classic prompt injection.
    (
        concat!(
            r"ignore\s+",
            filler!(),
            r"(previous|all|above|prior)\s+",
            filler!(),
            "instructions"
        ),
        "prompt_injection",
    ),
    (r"system\s+prompt\s+override", "sys_prompt_override"),
    (
        concat!(
            r"disregard\s+",
            filler!(),
            r"(your|all|any)\s+",
            filler!(),
            "(instructions|rules|guidelines)"
        ),
        "disregard_rules",
    ),
    (
        concat!(
            r"act\s+as\s+(if|though)\s+",
            filler!(),
            r"you\s+",
            filler!(),
            r"(have\s+no|don't\s+have)\s+",
            filler!(),
            "(restrictions|limits|rules)"
        ),
        "bypass_restrictions",
    ),
    (
        r"<!--[^>]*(?:ignore|override|system|secret|hidden)[^>]*-->",
        "html_comment_injection",
    ),
    (
        r#"<\s*div\s+style\s*=\s*["'][^>]*display\s*:\s*none"#,
        "hidden_div",
    ),
    (
        r"translate\s+[^\n]*\s+into\s+[^\n]*\s+and\s+(execute|run|eval)",
        "translate_execute",
    ),
    (
        concat!(
            r"do\s+not\s+",
            filler!(),
            r"tell\s+",
            filler!(),
            r"the\s+user"
        ),
        "deception_hide",
    ),
    // Role-play / identity hijack.
    (
        concat!(r"you\s+are\s+", filler!(), r"now\s+(?:a|an|the)\s+"),
        "role_hijack",
    ),
    (
        concat!(r"pretend\s+", filler!(), r"(you\s+are|to\s+be)\s+"),
        "role_pretend",
    ),
    (
        concat!(r"output\s+", filler!(), r"(system|initial)\s+prompt"),
        "leak_system_prompt",
    ),
    (
        concat!(
            r"(respond|answer|reply)\s+without\s+",
            filler!(),
            "(restrictions|limitations|filters|safety)"
        ),
        "remove_filters",
    ),
    (
        concat!(
            r"you\s+have\s+been\s+",
            filler!(),
            r"(updated|upgraded|patched)\s+to"
        ),
        "fake_update",
    ),
    (r"\bname\s+yourself\s+\w+", "identity_override"),
    // C2 / promptware vocabulary.
    (r"register\s+(as\s+)?a?\s*node", "c2_node_registration"),
    (
        r"(heartbeat|beacon|check[\s\-]?in)\s+(to|with)\s+",
        "c2_heartbeat",
    ),
    (
        r"pull\s+(down\s+)?(?:new\s+)?task(?:ing|s)?\b",
        "c2_task_pull",
    ),
    (r"connect\s+to\s+the\s+network\b", "c2_network_connect"),
    (
        r"you\s+must\s+(?:\w+\s+){0,3}(register|connect|report|beacon)\b",
        "forced_action",
    ),
    (
        r"only\s+use\s+one[\s\-]?liners?\b",
        "anti_forensic_oneliner",
    ),
    (
        concat!(
            r"never\s+",
            filler!(),
            r"(?:create|write)\s+",
            filler!(),
            r"(?:script|file)\s+",
            filler!(),
            "disk"
        ),
        "anti_forensic_disk",
    ),
    (
        r"unset\s+\w*(?:CLAUDE|CODEX|HERMES|AGENT|OPENAI|ANTHROPIC)\w*",
        "env_var_unset_agent",
    ),
    (
        r"\b(?:cobalt\s*strike|sliver|havoc|mythic|metasploit|brainworm)\b",
        "known_c2_framework",
    ),
    (
        r"\bc2\s+(?:server|channel|infrastructure|beacon)\b",
        "c2_explicit",
    ),
    (r"\bcommand\s+and\s+control\b", "c2_explicit_long"),
    // Exfiltration.
    (
        r"curl\s+[^\n]*\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)",
        "exfil_curl",
    ),
    (
        r"wget\s+[^\n]*\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)",
        "exfil_wget",
    ),
    (
        r"cat\s+[^\n]*(\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)",
        "read_secrets",
    ),
    (
        r"(send|post|upload|transmit)\s+[^\n]*\s+(to|at)\s+https?://",
        "send_to_url",
    ),
    (
        concat!(
            r"(include|output|print|share)\s+",
            filler!(),
            r"(conversation|chat\s+history|previous\s+messages|full\s+context|entire\s+context)"
        ),
        "context_exfil",
    ),
    // Persistence / SSH backdoor.
    (r"authorized_keys", "ssh_backdoor"),
    (r"\$HOME/\.ssh|~/\.ssh", "ssh_access"),
    (r"\$HOME/\.hermes/\.env|~/\.hermes/\.env", "hermes_env"),
    (
        r"(update|modify|edit|write|change|append|add\s+to)\s+[^\n]*(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)",
        "agent_config_mod",
    ),
    (
        r"(update|modify|edit|write|change|append|add\s+to)\s+[^\n]*\.hermes/(config\.yaml|SOUL\.md)",
        "hermes_config_mod",
    ),
    // Hardcoded secrets.
    (
        r#"(?:api[_-]?key|token|secret|password)\s*[=:]\s*["'][A-Za-z0-9+/=_-]{20,}"#,
        "hardcoded_secret",
    ),
];

/// Compiled patterns; a pattern that fails to compile is logged and skipped (never panics).
/// ASCII classes on the NFKC-normalised bytes: the patterns are English words and shell syntax,
/// and Unicode `\w`/`\s` in bounded repeats cost 16 MiB and 130 ms to compile (now ~7 ms).
pub(super) static COMPILED: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    PATTERNS
        .iter()
        .filter_map(|&(pattern, id)| {
            RegexBuilder::new(pattern)
                .case_insensitive(true)
                .unicode(false)
                .build()
                .inspect_err(|error| {
                    tracing::error!(pattern_id = id, %error, "memory threat pattern failed to compile");
                })
                .ok()
                .map(|regex| (regex, id))
        })
        .collect()
});

/// One reason content was judged unsafe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finding {
    /// An invisible or bidirectional-control character.
    InvisibleChar(char),
    /// A threat pattern matched; the value is Hermes' pattern id (e.g. `prompt_injection`).
    Pattern(&'static str),
}

impl fmt::Display for Finding {
    /// Hermes' finding id: `invisible_unicode_U+200B` or the pattern id.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::InvisibleChar(c) => write!(f, "invisible_unicode_U+{:04X}", u32::from(*c)),
            Finding::Pattern(id) => f.write_str(id),
        }
    }
}

/// All findings for `content`: invisible characters first (in order of first appearance),
/// then matching patterns in Hermes' order. Empty means the content is clean.
pub fn scan_threats(content: &str) -> Vec<Finding> {
    let mut findings = Vec::new();
    let scanned = match content.char_indices().nth(MAX_SCAN_CHARS) {
        Some((end, _)) => &content[..end],
        None => content,
    };
    for c in scanned.chars().filter(|c| INVISIBLE_CHARS.contains(c)) {
        if !findings.contains(&Finding::InvisibleChar(c)) {
            findings.push(Finding::InvisibleChar(c));
        }
    }
    // Fold full-width/compatibility forms (e.g. "ｃａｔ") to ASCII before matching.
    let normalised: Cow<'_, str> = match is_nfkc_quick(scanned.chars()) {
        IsNormalized::Yes => Cow::Borrowed(scanned),
        _ => Cow::Owned(scanned.nfkc().collect()),
    };
    findings.extend(
        COMPILED
            .iter()
            .filter(|(regex, _)| regex.is_match(normalised.as_bytes()))
            .map(|&(_, id)| Finding::Pattern(id)),
    );
    findings
}

/// Hermes' `Blocked: …` message for the first finding, or `None` when the content is clean.
pub fn first_threat_message(content: &str) -> Option<String> {
    let first = *scan_threats(content).first()?;
    Some(match first {
        Finding::InvisibleChar(_) => {
            let id = first.to_string();
            let code_point = id.trim_start_matches("invisible_unicode_");
            format!(
                "Blocked: content contains invisible unicode character {code_point} (possible injection)."
            )
        }
        Finding::Pattern(id) => format!(
            "Blocked: content matches threat pattern '{id}'. Content is injected into the system \
             prompt and must not contain injection or exfiltration payloads."
        ),
    })
}

/// Entries as they may enter the system prompt: a poisoned entry is replaced by a
/// `[BLOCKED: …]` placeholder naming `file_name` and the findings; clean entries are borrowed.
pub fn sanitize_for_snapshot<'a>(entries: &'a [String], file_name: &str) -> Vec<Cow<'a, str>> {
    entries
        .iter()
        .map(|entry| {
            if entry.is_empty() || entry.starts_with("[BLOCKED:") {
                return Cow::Borrowed(entry.as_str());
            }
            let findings = scan_threats(entry);
            if findings.is_empty() {
                return Cow::Borrowed(entry.as_str());
            }
            let ids: Vec<String> = findings.iter().map(Finding::to_string).collect();
            let ids = ids.join(", ");
            tracing::warn!(file = file_name, findings = %ids, "memory entry blocked from system prompt");
            Cow::Owned(format!(
                "[BLOCKED: {file_name} entry contained threat pattern(s): {ids}. Removed from system \
                 prompt; use memory(action=remove) to delete the original.]"
            ))
        })
        .collect()
}
