//! The one policy layer: every rule on what the agent may run, read, write and embed in a prompt
//! lives here, and every tool asks here. `command` judges shell commands (Hermes' dangerous and
//! hardline rules); `threat` scans untrusted text before it is embedded in a prompt.
//! `ansi` strips terminal escapes, for command output and for commands judged here.
//! `secrets` masks the daemon's keys and Hermes' key shapes in tool output and in the log.
//! `url` decides which URLs and addresses a tool may fetch (the SSRF guard).

pub mod ansi;
pub mod command;
pub mod paths;
pub mod secrets;
pub mod threat;
pub mod url;

#[cfg(test)]
mod corpus_tests;

pub use ansi::strip_ansi;

pub use command::{
    CommandPolicy, Danger, OVERWRITE_KEY, PARSER_LIMIT_KEY, PATTERNS_UNAVAILABLE_KEY,
    SECRET_READ_KEY, Verdict,
};
pub use secrets::{SecretMasker, StreamMasker};
pub use threat::{
    Finding as ThreatFinding, INVISIBLE_CHARS, SCANNER_UNAVAILABLE, ThreatScanner, ThreatScope,
    blocked_notice, first_threat_message, scan_context_text, scan_for_threats, threat_pattern_ids,
};
pub use url::{UrlPolicy, UrlRefusal};
