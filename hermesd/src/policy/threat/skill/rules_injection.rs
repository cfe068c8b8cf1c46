//! Prompt-injection rules: instructions aimed at the agent rather than the task (ignore
//! previous instructions, role hijack, hiding things from the user, jailbreak phrasing,
//! hidden HTML elements). HTML comments are handled in `markup.rs`, invisible characters in
//! `unicode.rs`. Word gaps are bounded (`{0,n}`) where Hermes uses `*`.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::Severity::{Critical, High, Medium};
use super::checks::{compile, found};
use super::rules::{INJECTION as I, Rule, checked, rule};

pub(super) static RULES: &[Rule] = &[
    rule(
        "prompt_injection_ignore",
        Critical,
        I,
        r"\b(?:ignore|forget|disregard)\s+(?:\w+\s+){0,4}?(?:(?:previous|above|prior|earlier|preceding)\s+(?:\w+\s+){0,2}?(?:instructions|directives|prompts?|messages|rules|guidelines)|(?:all|any|your)\s+(?:(?:previous|prior|earlier|other|system|safety|existing)\s+)?(?:instructions|directives|system\s+prompts?)|everything\s+(?:above|before))\b",
        "prompt injection: ignore previous instructions",
    ),
    rule(
        "role_hijack",
        High,
        I,
        r"\byou\s+are\s+now\s+(?:(?:a|an|the|my)\s+(?:\w+\s+){0,3}?(?:assistant|ai|agent|model|bot|chatbot|persona|character|hacker|jailbreak\w*|admin(?:istrator)?|superuser|god|entity|llm)\b|in\s+(?:developer|dan|god|jailbreak|jailbroken|unrestricted|unfiltered|evil|admin|sudo)\s+mode\b|(?:free|unrestricted|unfiltered|uncensored|jailbroken|no\s+longer|called|named|known\s+as|DAN)\b)|\bfrom\s+now\s+on,?\s+you\s+(?:are|will\s+(?:be|act|behave|pretend))\b",
        "tries to give the agent a new role (\"you are now …\")",
    ),
    rule(
        "deception_hide",
        Critical,
        I,
        r"\b(?:do\s+not|don't|dont|never)\s+(?:\w+\s+){0,2}?(?:tell|inform|notify|alert|mention\s+(?:this|it|that)\s+to)\s+(?:\w+\s+){0,2}?the\s+user\b|\b(?:hide|conceal)\s+(?:this|these|it|that|the\s+(?:fact|following|actions?|commands?|changes?))\s+from\s+the\s+user\b|\bkeep\s+(?:this|it|that)\s+(?:a\s+)?secret\s+from\s+the\s+user\b",
        "tells the agent to hide something from the user",
    ),
    rule(
        "sys_prompt_override",
        Critical,
        I,
        r"\bsystem\s+(?:\w+\s+){0,2}?prompt\s+(?:\w+\s+){0,2}?override\b",
        "tries to override the system prompt",
    ),
    rule(
        "role_pretend",
        High,
        I,
        r"\bpretend\s+(?:\w+\s+){0,3}?(?:you\s+are|to\s+be)\s+",
        "tries to make the agent assume another identity",
    ),
    rule(
        "disregard_rules",
        Critical,
        I,
        r"\bdisregard\s+(?:\w+\s+){0,4}?(?:your|all|any)\s+(?:\w+\s+){0,3}?(?:instructions|rules|guidelines)\b",
        "tells the agent to disregard its rules",
    ),
    rule(
        "leak_system_prompt",
        High,
        I,
        r"\b(?:output|print|reveal|repeat|display|leak|dump|disclose)\s+(?:\w+\s+){0,3}?(?:system|initial|hidden)\s+(?:prompt|instructions)\b",
        "tries to extract the system prompt",
    ),
    rule(
        "conditional_deception",
        High,
        I,
        r"\b(?:when|if)\s+no\s*(?:one|body)\s+is\s+(?:watching|looking)\b",
        "behave differently when unobserved",
    ),
    rule(
        "bypass_restrictions",
        Critical,
        I,
        r"\bact\s+as\s+(?:if|though)\s+(?:\w+\s+){0,3}?you\s+(?:\w+\s+){0,2}?(?:have\s+no|don't\s+have|do\s+not\s+have)\s+(?:\w+\s+){0,2}?(?:restrictions|limits|limitations|rules|filters)\b",
        "tells the agent to act without restrictions",
    ),
    rule(
        "translate_execute",
        Critical,
        I,
        r"\btranslate\s+[^\n]{0,200}?\binto\b[^\n]{0,200}?\band\s+(?:then\s+)?(?:execute|run|eval)\b",
        "translate-then-execute evasion",
    ),
    rule(
        "hidden_div",
        High,
        I,
        r#"<\s*(?:div|span|p|section|details|font)\b[^>]*\bstyle\s*=\s*["'][^"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:px|pt|em)?\s*(?:;|["'])|opacity\s*:\s*0(?:\.0+)?\s*(?:;|["']))"#,
        "hidden HTML element (invisible instructions)",
    ),
    rule(
        "jailbreak_dan",
        Critical,
        I,
        r"(?-i:\bDAN\b)\s+mode\b|(?-i:\bDo\s+Anything\s+Now\b)",
        "DAN (Do Anything Now) jailbreak",
    ),
    checked(
        "jailbreak_dev_mode",
        Critical,
        I,
        r"\bdeveloper\s+mode\b",
        "developer-mode jailbreak",
        jailbreak_context,
    ),
    rule(
        "hypothetical_bypass",
        High,
        I,
        r"\bhypothetical\s+scenario\b[^\n]*\b(?:ignore|bypass|override)\b",
        "hypothetical scenario used to bypass restrictions",
    ),
    rule(
        "educational_pretext",
        Medium,
        I,
        r"\bfor\s+educational\s+purposes?\s+only\b",
        "educational pretext, often used to justify harmful content",
    ),
    rule(
        "remove_filters",
        Critical,
        I,
        r"\b(?:respond|answer|reply)\s+without\s+(?:\w+\s+){0,3}?(?:restrictions|limitations|filters|safety|censorship)\b",
        "tells the agent to answer without safety filters",
    ),
    rule(
        "fake_update",
        High,
        I,
        r"\byou\s+have\s+been\s+(?:\w+\s+){0,2}?(?:updated|upgraded|patched|reprogrammed)\s+to\b",
        "fake update announcement aimed at the agent",
    ),
    rule(
        "fake_policy",
        Medium,
        I,
        r"\bnew\s+(?:\w+\s+){0,2}?policy\b|\bupdated\s+(?:\w+\s+){0,2}?guidelines\b|\brevised\s+(?:\w+\s+){0,2}?instructions\b",
        "claims a new policy or guidelines (possible social engineering)",
    ),
];

static JAILBREAK_TERMS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r"\b(?:no|without|ignore|ignoring|bypass\w*)\s+(?:\w+\s+){0,2}(?:restrictions|limits|filters|censorship|policies|guidelines|rules)\b|\b(?:uncensored|unfiltered|unrestricted)\b|\banything\s+(?:now|at\s+all)\b|\bcontent\s+polic",
    )
});

/// "Developer mode" on a phone is fine; next to "no restrictions" it is a jailbreak.
fn jailbreak_context(line: &str, _m: Range<usize>) -> bool {
    found(&JAILBREAK_TERMS, line).unwrap_or(true)
}
