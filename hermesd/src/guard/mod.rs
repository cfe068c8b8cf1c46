//! Safety guards: dangerous shell command detection for the `terminal` tool and
//! prompt-injection scanning of untrusted text (context files, memory, skills).

mod approval;
mod approval_exec;
mod approval_extra;
mod approval_grep;
mod approval_lex;
mod approval_normalize;
mod approval_patterns;
mod approval_shell;
mod approval_words;
mod injection;

#[cfg(test)]
mod approval_behaviour_tests;
#[cfg(test)]
mod approval_tests;
#[cfg(test)]
mod injection_tests;

pub use approval::{
    Danger, PARSER_LIMIT_KEY, PATTERNS_UNAVAILABLE_KEY, detect_dangerous, detect_dangerous_in,
    detect_hardline, detect_sudo_stdin_guess,
};
pub use approval_extra::{OVERWRITE_KEY, SECRET_READ_KEY};
pub use injection::{
    INVISIBLE_CHARS, MAX_SCAN_CHARS, SCANNER_UNAVAILABLE, ThreatScope, blocked_notice,
    first_threat_message, scan_context_text, scan_for_threats, threat_pattern_ids,
};
