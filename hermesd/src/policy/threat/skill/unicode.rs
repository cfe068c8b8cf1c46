//! The skills guard's invisible-character rule: one finding per line that hides characters
//! (zero-width, bidi controls, tag characters), naming the code point — what counts as hidden,
//! and the legitimate exceptions, are the scanner's (`invisible::first_hidden`).

use super::super::invisible::first_hidden;
use super::redact::redact;
use super::rules::INJECTION;
use super::text::shorten;
use super::{Finding, Severity};

const DESCRIPTION: &str = "invisible Unicode character (can hide text or instructions)";

/// Appends one `invisible_unicode` finding per line that hides characters.
pub(super) fn scan(file: &str, text: &str, out: &mut Vec<Finding>) {
    if text.is_ascii() {
        return;
    }
    for (index, line) in text.split('\n').enumerate() {
        let Some(hidden) = first_hidden(line, index == 0) else {
            continue;
        };
        let code_point = u32::from(hidden.c);
        let matched = match hidden.spells {
            Some(spells) => format!(
                "U+{code_point:04X} ({}) hides \"{}\"",
                hidden.name,
                redact(&spells)
            ),
            None => format!("U+{code_point:04X} ({})", hidden.name),
        };
        out.push(Finding {
            pattern_id: "invisible_unicode",
            severity: Severity::High,
            category: INJECTION,
            file: file.to_owned(),
            line: index + 1,
            matched: shorten(&matched),
            description: DESCRIPTION,
        });
    }
}
