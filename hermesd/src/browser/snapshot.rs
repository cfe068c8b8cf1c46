//! The page as the model reads it: an indented list of the elements that matter
//! (`- button "Send" [ref=e3]`), with element refs the model clicks and types by.
//!
//! It is computed inside the page by `snapshot.js` — each element's ARIA role (explicit, else
//! the HTML element's implicit one), accessible name, value and states — in an isolated world of
//! the daemon's own, so page scripts can neither see nor change it. The refs live in that world:
//! the same element keeps its ref for as long as the document lives, and a new document (a new
//! world) numbers from `e1` again. Chromium's own accessibility tree is exact but took 160–185 ms
//! for a page of 1,000 controls; walking the DOM in the page takes a few milliseconds.

use serde_json::Value;

/// The snapshot function, called with (full, max refs, max name characters).
pub const SCRIPT: &str = include_str!("snapshot.js");
/// Finds the element of a ref: `'unknown'`, `'gone'` (detached) or the element.
pub const ELEMENT_SCRIPT: &str = "function (n) { const S = globalThis.__hermesd; \
     const held = S && S.els.get(n); if (!held) return 'unknown'; const el = held.deref(); \
     return el && el.isConnected ? el : 'gone'; }";
/// Refs kept per document; past this the numbering starts again.
pub const MAX_REFS: u32 = 20_000;
/// Characters of a name or value shown.
pub const MAX_NAME_CHARS: u32 = 300;
/// The name of the daemon's isolated world in each page.
pub const WORLD: &str = "hermesd";

/// A rendered snapshot: the text and how many elements have refs in it.
#[derive(Debug)]
pub struct Snapshot {
    pub text: String,
    pub elements: usize,
}

impl Snapshot {
    /// The script's answer, `[text, elements]`.
    pub fn from_answer(answer: &Value) -> Option<Self> {
        Some(Self {
            text: answer.get(0)?.as_str()?.to_string(),
            elements: usize::try_from(answer.get(1)?.as_u64()?).ok()?,
        })
    }
}

/// The number of ref `r` (`@e5`, `e5`).
pub fn ref_number(r: &str) -> Option<u32> {
    r.trim()
        .trim_start_matches('@')
        .strip_prefix('e')?
        .parse()
        .ok()
        .filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refs_and_answers_are_read() {
        assert_eq!(ref_number("@e2"), Some(2));
        assert_eq!(ref_number(" e15 "), Some(15));
        assert_eq!(ref_number("e0"), None);
        assert_eq!(ref_number("button"), None);
        let s = Snapshot::from_answer(&json!(["- button \"Send\" [ref=e1]\n", 1])).unwrap();
        assert_eq!(s.elements, 1);
        assert!(Snapshot::from_answer(&json!({"text": 1})).is_none());
        assert!(SCRIPT.starts_with("function (full, maxRefs, maxName)"));
    }
}
