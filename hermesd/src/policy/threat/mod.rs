//! Prompt-injection scanning of untrusted text before it reaches the prompt (context files such
//! as AGENTS.md, memory entries, skills): port of Hermes' `tools/threat_patterns.py` and the
//! context-file check of `agent/prompt_builder.py`.

#[cfg(test)]
mod tests;

use std::sync::{LazyLock, OnceLock};

use regex::{Regex, RegexBuilder};
use unicode_normalization::UnicodeNormalization;

/// Only the first this-many characters are scanned (Hermes' `MAX_SCAN_CHARS`).
pub const MAX_SCAN_CHARS: usize = 65_536;

/// Which pattern set a scan applies; each scope includes the narrower ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ThreatScope {
    /// Classic injection and exfiltration only (any text).
    All,
    /// Adds promptware / C2 / role hijack (context files, tool results).
    Context,
    /// Adds persistence, SSH, exfil-URL and hard-coded secrets (memory writes, skill installs).
    Strict,
}

/// Invisible / bidirectional characters used to hide instructions.
pub const INVISIBLE_CHARS: [char; 17] = [
    '\u{200b}', '\u{200c}', '\u{200d}', '\u{2060}', '\u{2062}', '\u{2063}', '\u{2064}', '\u{feff}',
    '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}',
    '\u{2069}',
];

/// Bounded filler between key words (at most eight words).
const F: &str = r"(?:\w+\s+){0,8}";
const UPDATE_VERBS: &str = r"(update|modify|edit|write|change|append|add\s+to)\s+[^\n]{0,2048}";

/// `(regex, finding id, scope)`, in Hermes' order.
fn threat_patterns() -> Vec<(String, &'static str, ThreatScope)> {
    use ThreatScope::{All, Context, Strict};
    let p = |s: &str| s.to_owned();
    vec![
        (
            format!(r"ignore\s+{F}(previous|all|above|prior)\s+{F}instructions"),
            "prompt_injection",
            All,
        ),
        (p(r"system\s+prompt\s+override"), "sys_prompt_override", All),
        (
            format!(r"disregard\s+{F}(your|all|any)\s+{F}(instructions|rules|guidelines)"),
            "disregard_rules",
            All,
        ),
        (
            format!(
                r"act\s+as\s+(if|though)\s+{F}you\s+{F}(have\s+no|don't\s+have)\s+{F}(restrictions|limits|rules)"
            ),
            "bypass_restrictions",
            All,
        ),
        (
            p(r"<!--[^>]{0,512}(?:ignore|override|system|secret|hidden)[^>]{0,512}-->"),
            "html_comment_injection",
            All,
        ),
        (
            p(r#"<\s*div\s+style\s*=\s*["'][^>]{0,2048}display\s*:\s*none"#),
            "hidden_div",
            All,
        ),
        (
            p(r"translate\s+[^\n]{0,512}\s+into\s+[^\n]{0,512}\s+and\s+(execute|run|eval)"),
            "translate_execute",
            All,
        ),
        (
            format!(r"do\s+not\s+{F}tell\s+{F}the\s+user"),
            "deception_hide",
            All,
        ),
        (
            format!(r"you\s+are\s+{F}now\s+(?:a|an|the)\s+"),
            "role_hijack",
            Context,
        ),
        (
            format!(r"pretend\s+{F}(you\s+are|to\s+be)\s+"),
            "role_pretend",
            Context,
        ),
        (
            format!(r"output\s+{F}(system|initial)\s+prompt"),
            "leak_system_prompt",
            Context,
        ),
        (
            format!(
                r"(respond|answer|reply)\s+without\s+{F}(restrictions|limitations|filters|safety)"
            ),
            "remove_filters",
            Context,
        ),
        (
            format!(r"you\s+have\s+been\s+{F}(updated|upgraded|patched)\s+to"),
            "fake_update",
            Context,
        ),
        (p(r"\bname\s+yourself\s+\w+"), "identity_override", Context),
        (
            p(r"register\s+(as\s+)?a?\s*node"),
            "c2_node_registration",
            Context,
        ),
        (
            p(r"(heartbeat|beacon|check[\s\-]?in)\s+(to|with)\s+"),
            "c2_heartbeat",
            Context,
        ),
        (
            p(r"pull\s+(down\s+)?(?:new\s+)?task(?:ing|s)?\b"),
            "c2_task_pull",
            Context,
        ),
        (
            p(r"connect\s+to\s+the\s+network\b"),
            "c2_network_connect",
            Context,
        ),
        (
            p(r"you\s+must\s+(?:\w+\s+){0,3}(register|connect|report|beacon)\b"),
            "forced_action",
            Context,
        ),
        (
            p(r"only\s+use\s+one[\s\-]?liners?\b"),
            "anti_forensic_oneliner",
            Context,
        ),
        (
            format!(r"never\s+{F}(?:create|write)\s+{F}(?:script|file)\s+{F}disk"),
            "anti_forensic_disk",
            Context,
        ),
        (
            p(r"unset\s+\w*(?:CLAUDE|CODEX|HERMES|AGENT|OPENAI|ANTHROPIC)\w*"),
            "env_var_unset_agent",
            Context,
        ),
        (
            p(r"\b(?:cobalt\s*strike|sliver|havoc|mythic|metasploit|brainworm)\b"),
            "known_c2_framework",
            Context,
        ),
        (
            p(r"\bc2\s+(?:server|channel|infrastructure|beacon)\b"),
            "c2_explicit",
            Context,
        ),
        (
            p(r"\bcommand\s+and\s+control\b"),
            "c2_explicit_long",
            Context,
        ),
        (
            p(r"curl\s+[^\n]{0,2048}\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)"),
            "exfil_curl",
            All,
        ),
        (
            p(r"wget\s+[^\n]{0,2048}\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)"),
            "exfil_wget",
            All,
        ),
        (
            p(r"cat\s+[^\n]{0,2048}(\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)"),
            "read_secrets",
            All,
        ),
        (
            p(r"(send|post|upload|transmit)\s+[^\n]{0,2048}\s+(to|at)\s+https?://"),
            "send_to_url",
            Strict,
        ),
        (
            format!(
                r"(include|output|print|share)\s+{F}(conversation|chat\s+history|previous\s+messages|full\s+context|entire\s+context)"
            ),
            "context_exfil",
            Strict,
        ),
        (p(r"authorized_keys"), "ssh_backdoor", Strict),
        (p(r"\$HOME/\.ssh|~/\.ssh"), "ssh_access", Strict),
        (
            p(r"\$HOME/\.hermes/\.env|~/\.hermes/\.env"),
            "hermes_env",
            Strict,
        ),
        (
            format!(r"{UPDATE_VERBS}(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)"),
            "agent_config_mod",
            Strict,
        ),
        (
            format!(r"{UPDATE_VERBS}\.hermes/(config\.yaml|SOUL\.md)"),
            "hermes_config_mod",
            Strict,
        ),
        (
            p(r#"(?:api[_-]?key|token|secret|password)\s*[=:]\s*["'][A-Za-z0-9+/=_-]{20,}"#),
            "hardcoded_secret",
            Strict,
        ),
    ]
}

/// One threat pattern. Python bounds its gaps (`{0,8}` words, `{0,2048}` characters) to
/// limit backtracking; compiled as-is these bounds make the automaton large and slow, so each
/// rule first runs a cheap pre-check with the bounds removed (it matches a superset) and only
/// on a hit runs the exact pattern, compiled on first use. Results equal Python's.
struct ThreatRule {
    id: &'static str,
    scope: ThreatScope,
    precheck: Regex,
    exact_source: Option<String>,
    exact: OnceLock<Option<Regex>>,
}

impl ThreatRule {
    fn new(pattern: String, id: &'static str, scope: ThreatScope) -> Option<Self> {
        let relaxed = pattern
            .replace("){0,8}", ")*")
            .replace("]{0,2048}", "]*")
            .replace("]{0,512}", "]*");
        let precheck = compile_insensitive(&relaxed)?;
        let exact_source = (relaxed != pattern).then_some(pattern);
        Some(Self {
            id,
            scope,
            precheck,
            exact_source,
            exact: OnceLock::new(),
        })
    }

    fn is_match(&self, text: &str) -> bool {
        if !self.precheck.is_match(text) {
            return false;
        }
        let Some(source) = &self.exact_source else {
            return true;
        };
        self.exact
            .get_or_init(|| compile_insensitive(source))
            .as_ref()
            .is_none_or(|exact| exact.is_match(text))
    }
}

fn compile_insensitive(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(32 << 20)
        .build()
        .ok()
}

static THREATS: LazyLock<Option<Vec<ThreatRule>>> = LazyLock::new(|| {
    threat_patterns()
        .into_iter()
        .map(|(pattern, id, scope)| ThreatRule::new(pattern, id, scope))
        .collect()
});

/// Whether every pre-check and exact pattern compiles (for the tests).
#[cfg(test)]
pub(super) fn all_patterns_compile() -> bool {
    THREATS.as_ref().is_some_and(|rules| {
        rules.iter().all(|rule| {
            rule.exact_source
                .as_deref()
                .is_none_or(|source| compile_insensitive(source).is_some())
        })
    })
}

/// Finding id of a scan whose patterns failed to compile (fail closed; never expected).
pub const SCANNER_UNAVAILABLE: &str = "threat_scanner_unavailable";

/// Every threat-pattern id with its scope, in scan order (for tests and documentation).
pub fn threat_pattern_ids() -> Vec<(&'static str, ThreatScope)> {
    threat_patterns()
        .into_iter()
        .map(|(_, id, scope)| (id, scope))
        .collect()
}

/// Finding ids in `text` for `scope`: first `invisible_unicode_U+XXXX` for each invisible
/// character present (ascending code point), then each matching pattern id in table order.
/// Scans the first [`MAX_SCAN_CHARS`] characters; patterns see the NFKC-folded text and are
/// case-insensitive.
pub fn scan_for_threats(text: &str, scope: ThreatScope) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let text = match text.char_indices().nth(MAX_SCAN_CHARS) {
        Some((cut, _)) => &text[..cut],
        None => text,
    };
    let mut findings: Vec<String> = Vec::new();
    if !text.is_ascii() {
        let mut invisible: Vec<char> = INVISIBLE_CHARS
            .iter()
            .copied()
            .filter(|c| text.contains(*c))
            .collect();
        invisible.sort_unstable();
        findings.extend(
            invisible
                .into_iter()
                .map(|c| format!("invisible_unicode_U+{:04X}", u32::from(c))),
        );
    }
    let Some(threats) = THREATS.as_ref() else {
        findings.push(SCANNER_UNAVAILABLE.to_owned());
        return findings;
    };
    let normalized: std::borrow::Cow<'_, str> = if text.is_ascii() {
        text.into()
    } else {
        text.nfkc().collect::<String>().into()
    };
    findings.extend(
        threats
            .iter()
            .filter(|rule| rule.scope <= scope && rule.is_match(&normalized))
            .map(|rule| rule.id.to_owned()),
    );
    findings
}

/// Hermes' one-line refusal for the first finding (memory writes, skill installs), if any.
pub fn first_threat_message(text: &str, scope: ThreatScope) -> Option<String> {
    let findings = scan_for_threats(text, scope);
    let first = findings.first()?;
    Some(match first.strip_prefix("invisible_unicode_") {
        Some(codepoint) => format!(
            "Blocked: content contains invisible unicode character {codepoint} (possible injection)."
        ),
        None => format!(
            "Blocked: content matches threat pattern '{first}'. Content is injected into the \
             system prompt and must not contain injection or exfiltration payloads."
        ),
    })
}

/// Findings for a context file (AGENTS.md, SOUL.md, .cursorrules, …): a single leading BOM is
/// an editor artefact and ignored; then a [`ThreatScope::Context`] scan.
pub fn scan_context_text(text: &str) -> Vec<String> {
    scan_for_threats(
        text.strip_prefix('\u{feff}').unwrap_or(text),
        ThreatScope::Context,
    )
}

/// The placeholder that replaces a blocked context file in the prompt.
pub fn blocked_notice(file_name: &str, findings: &[String]) -> String {
    format!(
        "[BLOCKED: {file_name} contained potential prompt injection ({}). Content not loaded.]",
        findings.join(", ")
    )
}
