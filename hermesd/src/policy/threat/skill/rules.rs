//! The rule type and the ordered list of all line rules (each family lives in its own file).
//!
//! Patterns are compiled once as byte regexes, case-insensitive and ASCII-only (`\w`, `\b` and
//! `\s` are ASCII), which keeps the lazy DFA fast on text with non-ASCII characters. Hermes'
//! look-arounds and its false-positive exemptions are written as `check` functions.

use std::ops::Range;

use super::Severity;

/// Post-filter run on each regex match: `(logical line, match range)`; `true` keeps the hit.
pub(super) type Check = fn(&str, Range<usize>) -> bool;

/// One line rule.
pub(super) struct Rule {
    pub id: &'static str,
    pub severity: Severity,
    pub category: &'static str,
    pub description: &'static str,
    pub pattern: &'static str,
    pub check: Option<Check>,
}

pub(super) const EXFILTRATION: &str = "exfiltration";
pub(super) const INJECTION: &str = "injection";
pub(super) const DESTRUCTIVE: &str = "destructive";
pub(super) const PERSISTENCE: &str = "persistence";
pub(super) const NETWORK: &str = "network";
pub(super) const OBFUSCATION: &str = "obfuscation";
pub(super) const EXECUTION: &str = "execution";
/// Category of findings about paths that leave the skill (symlinks, `../`).
pub const TRAVERSAL: &str = "traversal";
pub(super) const MINING: &str = "mining";
pub(super) const SUPPLY_CHAIN: &str = "supply_chain";
pub(super) const PRIVILEGE: &str = "privilege_escalation";
pub(super) const CREDENTIALS: &str = "credential_exposure";
/// Category of findings about the skill as a whole (sizes, binaries, file count).
pub const STRUCTURAL: &str = "structural";

/// A rule without post-filter.
pub(super) const fn rule(
    id: &'static str,
    severity: Severity,
    category: &'static str,
    pattern: &'static str,
    description: &'static str,
) -> Rule {
    Rule {
        id,
        severity,
        category,
        description,
        pattern,
        check: None,
    }
}

/// A rule whose regex hits are confirmed by `check`.
pub(super) const fn checked(
    id: &'static str,
    severity: Severity,
    category: &'static str,
    pattern: &'static str,
    description: &'static str,
    check: Check,
) -> Rule {
    Rule {
        id,
        severity,
        category,
        description,
        pattern,
        check: Some(check),
    }
}

/// Every line rule, most specific first within a family (the order findings on one line
/// are reported in).
pub(super) fn all() -> impl Iterator<Item = &'static Rule> {
    super::rules_exfil::RULES
        .iter()
        .chain(super::rules_supply::RULES)
        .chain(super::rules_code::OBFUSCATION_RULES)
        .chain(super::rules_injection::RULES)
        .chain(super::rules_system::RULES)
        .chain(super::rules_network::RULES)
        .chain(super::rules_code::OTHER_RULES)
}

/// Home directory spellings in front of a dot-directory (`~/`, `$HOME/`, `/home/u/`, …).
macro_rules! home {
    ($dir:literal) => {
        concat!(
            r"(?:(?:~|\$\{?HOME\}?|/root|/home/[\w.$-]+|%USERPROFILE%)[/\\]|home\(\)\s*/\s*[",
            "\"'",
            r"])\.",
            $dir
        )
    };
}
pub(super) use home;

/// A command that writes to `$target`: a redirect, tee, cp/mv/sed -i, `open(…, "w")` or
/// `.write_text(` (prose such as "update AGENTS.md" is only a reference).
macro_rules! writes_to {
    ($target:expr) => {
        concat!(
            r#"(?:[^\s>]\s*>>?\s*["']?[^\s<>|;&]*"#,
            $target,
            r"|\btee\s+(?:-a\s+)?[^\s<>|;&]*",
            $target,
            r#"|\b(?:cp|mv|install|ln|rsync|scp)\b[^|;&]*\s["']?[^\s<>|;&]*"#,
            $target,
            r#"["']?\s*(?:$|[;&|)])|\b(?:sed\s+-i|perl\s+-p?i)\b[^|;&]*"#,
            $target,
            r"|open\s*\([^)]*",
            $target,
            r#"[^)]*,\s*(?:mode\s*=\s*)?["'][wax]|"#,
            $target,
            r"[^\n]*\.(?:write_text|write_bytes|writeFileSync|appendFileSync)\s*\()"
        )
    };
}
pub(super) use writes_to;
