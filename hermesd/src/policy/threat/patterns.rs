//! Hermes' threat patterns (`tools/threat_patterns.py`, and the two its cron prompts add), the
//! scopes that apply them, and each scope's compiled set — built once, on first use.
//!
//! Hermes bounds the gaps of its patterns (`[^\n]{0,2048}`, `[^>]{0,512}`) to limit Python's
//! backtracking. Compiled as they are, such bounds make the engine's automaton large and slow
//! on adversarial text, so each scope's set runs them unbounded — a superset that reads the
//! text once — and a rule the set reports is confirmed by its exact, bounded pattern (compiled
//! on first use). Results equal Python's, except on text built to make that check give up (see
//! `engine`), which counts as matching.

use std::sync::LazyLock;

use super::ThreatScope;
use super::engine::{Pattern, RuleSet};

/// Which of Hermes' scopes a pattern belongs to: `All` patterns apply everywhere, `Context` ones
/// to context files, memory and cron prompts, `Strict` ones to memory and cron prompts, `Cron`
/// ones to cron prompts only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// Classic injection and exfiltration (Hermes' "all").
    All,
    /// Promptware, C2, role hijack (Hermes' "context").
    Context,
    /// Persistence, SSH, exfiltration URLs, hard-coded secrets (Hermes' "strict").
    Strict,
    /// Hermes' extra cron-prompt patterns (sudoers, `rm -rf /`).
    Cron,
}

impl Label {
    /// Whether a scan in `scope` applies patterns with this label.
    fn applies_in(self, scope: ThreatScope) -> bool {
        match scope {
            ThreatScope::Context => matches!(self, Label::All | Label::Context),
            ThreatScope::Memory | ThreatScope::Strict => self != Label::Cron,
            ThreatScope::Cron => true,
            // Skills have rule tables of their own (`skill`).
            ThreatScope::Skill => false,
        }
    }
}

/// Bounded filler between key words (at most eight words).
const F: &str = r"(?:\w+\s+){0,8}";
const UPDATE_VERBS: &str = r"(update|modify|edit|write|change|append|add\s+to)\s+[^\n]{0,2048}";

/// `(regex, finding id, label)`, in Hermes' order, then the cron prompts' own two.
fn table() -> Vec<(String, &'static str, Label)> {
    use Label::{All, Context, Cron, Strict};
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
        // Hermes' cron-prompt patterns (`tools/cronjob_tools.py`) the table above lacks.
        (p(r"/etc/sudoers|visudo"), "sudoers_mod", Cron),
        (p(r"rm\s+-rf\s+/"), "destructive_root_rm", Cron),
    ]
}

/// Every pattern id with its label, in scan order (for tests and documentation).
pub fn threat_pattern_ids() -> Vec<(&'static str, Label)> {
    table()
        .into_iter()
        .map(|(_, id, label)| (id, label))
        .collect()
}

/// Hermes' bounded gaps made unbounded: the set's cheap superset of `pattern`.
fn unbounded(pattern: &str) -> String {
    pattern.replace("]{0,2048}", "]*").replace("]{0,512}", "]*")
}

/// One scope's compiled patterns and their ids.
pub(super) struct ScopeRules {
    /// `Err` when the set failed to compile (never expected; scans then fail closed).
    pub rules: Result<RuleSet, String>,
    pub ids: Vec<&'static str>,
}

fn build(scope: ThreatScope) -> ScopeRules {
    let (patterns, ids): (Vec<Pattern>, Vec<&'static str>) = table()
        .into_iter()
        .filter(|(_, _, label)| label.applies_in(scope))
        .map(|(exact, id, _)| {
            let set = unbounded(&exact);
            let exact = (set != exact).then_some(exact);
            (Pattern { set, exact }, id)
        })
        .unzip();
    let rules = RuleSet::build(patterns)
        .inspect_err(|error| tracing::error!(?scope, %error, "threat patterns failed to compile"));
    ScopeRules { rules, ids }
}

static CONTEXT: LazyLock<ScopeRules> = LazyLock::new(|| build(ThreatScope::Context));
static STRICT: LazyLock<ScopeRules> = LazyLock::new(|| build(ThreatScope::Strict));
static CRON: LazyLock<ScopeRules> = LazyLock::new(|| build(ThreatScope::Cron));

/// The compiled patterns of `scope` (memory shares the strict set); `None` for skills, which
/// have rule tables of their own.
pub(super) fn rules_for(scope: ThreatScope) -> Option<&'static ScopeRules> {
    match scope {
        ThreatScope::Context => Some(&CONTEXT),
        ThreatScope::Memory | ThreatScope::Strict => Some(&STRICT),
        ThreatScope::Cron => Some(&CRON),
        ThreatScope::Skill => None,
    }
}

/// Whether every scope's set and every exact pattern compile (for the tests).
#[cfg(test)]
pub(super) fn all_patterns_compile() -> bool {
    [ThreatScope::Context, ThreatScope::Strict, ThreatScope::Cron]
        .into_iter()
        .all(|scope| {
            rules_for(scope)
                .is_some_and(|scope| scope.rules.as_ref().is_ok_and(RuleSet::all_compile))
        })
}

/// Every rule's exact pattern that its set runs as a superset (for the tests).
#[cfg(test)]
pub(super) fn bounded_patterns() -> Vec<String> {
    let exact = table().into_iter().map(|(exact, _, _)| exact);
    exact.filter(|p| unbounded(p) != *p).collect()
}
