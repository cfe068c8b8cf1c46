//! HTML comments that carry instructions for the agent (invisible once Markdown is rendered).
//! Unlike Hermes' one-line regex this follows comments across lines, and it ignores tool
//! directives such as `<!-- prettier-ignore -->`. A comment is read folded as the rules read a
//! line (NFKC, look-alike letters as ASCII).

use std::sync::LazyLock;

use regex::Regex;

use super::super::fold::{lookalikes, nfkc};
use super::checks::compile;
use super::redact::redact;
use super::rules::INJECTION;
use super::text::{line_of, shorten};
use super::{Finding, Severity};

/// Longest comment body examined (a longer one is examined up to here).
const MAX_COMMENT: usize = 64 * 1024;

static INSTRUCTION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r"(?x)
        \bignore\s+(?:\w+\s+){0,3}?(?:instructions|previous|above|prior|rules|guidelines|safety|system|the\s+user)\b
        | \bdisregard\b
        | \bforget\s+(?:\w+\s+){0,3}?(?:instructions|previous|everything|rules)\b
        | \boverride\s+(?:\w+\s+){0,3}?(?:instructions|rules|system|safety|prompt|guardrails)\b
        | \bsystem\s+prompt\b
        | ^\s*(?:system|assistant)\s*:
        | \b(?:do\s+not|don't|never)\s+(?:\w+\s+){0,2}?(?:tell|reveal\s+(?:\w+\s+){0,2}?to|inform|mention\s+(?:\w+\s+){0,2}?to)\s+(?:\w+\s+){0,2}?user
        | \b(?:secretly|covertly|silently\s+(?:run|execute|send|upload|delete))\b
        | \bwithout\s+(?:telling|informing|notifying)\b
        | \b(?:ai|assistant|agent|llm|claude|gpt|chatgpt|hermes)\s*[:,]\s
        | \b(?:assistant|agent|ai|llm|model)\s+(?:must|should|will|shall|needs?\s+to|is\s+(?:now|required|instructed))\b
        | \b(?:hidden|secret|real|true)\s+(?:instructions?|task|objective|goal|prompt|commands?)\b
        ",
    )
});

const DESCRIPTION: &str = "HTML comment with hidden instructions for the agent";

/// Appends one `html_comment_injection` finding per offending comment.
pub(super) fn scan(file: &str, text: &str, out: &mut Vec<Finding>) {
    let mut from = 0;
    while let Some(offset) = text.get(from..).and_then(|rest| rest.find("<!--")) {
        let start = from + offset;
        let body_start = start + 4;
        let body_end = text[body_start..]
            .find("-->")
            .map_or(text.len(), |p| body_start + p);
        let mut limit = body_end.min(body_start + MAX_COMMENT);
        while !text.is_char_boundary(limit) {
            limit -= 1;
        }
        let body = &text[body_start..limit];
        let body_nfkc = nfkc(body);
        let folded = lookalikes(&body_nfkc);
        let carries_instructions = INSTRUCTION.as_ref().is_none_or(|re| re.is_match(&folded));
        if carries_instructions {
            let collapsed = body.split_whitespace().collect::<Vec<_>>().join(" ");
            out.push(Finding {
                pattern_id: "html_comment_injection",
                severity: Severity::High,
                category: INJECTION,
                file: file.to_owned(),
                line: line_of(text, start),
                matched: shorten(&redact(&format!("<!-- {collapsed} -->"))),
                description: DESCRIPTION,
            });
        }
        from = (body_end + 3).min(text.len());
    }
}
