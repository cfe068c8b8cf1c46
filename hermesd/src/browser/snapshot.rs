//! The page as the model reads it: an indented list of the elements that matter
//! (`- button "Send" [ref=e3]`), with element refs the model clicks and types by.
//!
//! It is computed inside the page by `snapshot.js` — each element's ARIA role (explicit, else
//! the HTML element's implicit one), accessible name, value and states — in an isolated world of
//! the daemon's own, so page scripts can neither see nor change it. The refs live in that world:
//! the same element keeps its ref for as long as the document lives, and a new document (a new
//! world) numbers from `e1` again. Chromium's own accessibility tree is exact but took 160–185 ms
//! for a page of 1,000 controls; walking the DOM in the page takes a few milliseconds.

use serde_json::{Value, json};

use super::{BrowserError, page::Page};

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

impl Page {
    /// The page as text with refs (see `snapshot.rs`).
    pub async fn snapshot(&self, full: bool) -> Result<Snapshot, BrowserError> {
        if let Some(dialog) = self.pending_dialog() {
            return Ok(Snapshot {
                text: format!(
                    "A JavaScript {} dialog blocks the page: {:?} (id {}). Answer it with \
                     browser_dialog (accept or dismiss) before anything else.\n",
                    dialog.kind, dialog.message, dialog.id
                ),
                elements: 0,
            });
        }
        let args = json!([{"value": full}, {"value": MAX_REFS},
                          {"value": MAX_NAME_CHARS}]);
        let answer = self.in_world(SCRIPT, args, true).await?;
        let value = answer.pointer("/result/value").unwrap_or(&Value::Null);
        Snapshot::from_answer(value).ok_or_else(|| {
            BrowserError::Protocol("the snapshot script answered something else".into())
        })
    }

    /// The JavaScript object of element `r`, or why there is none.
    pub async fn element(&self, r: &str) -> Result<String, BrowserError> {
        let unknown = || {
            BrowserError::Arguments(format!(
                "unknown ref {r}: take a browser_snapshot and use a ref from it"
            ))
        };
        let n = ref_number(r).ok_or_else(unknown)?;
        let answer = self
            .in_world(ELEMENT_SCRIPT, json!([{"value": n}]), false)
            .await?;
        let result = answer.get("result").unwrap_or(&Value::Null);
        match (
            result.get("objectId").and_then(Value::as_str),
            result.get("value").and_then(Value::as_str),
        ) {
            (Some(object), _) => Ok(object.to_string()),
            (None, Some("gone")) => Err(BrowserError::Page(format!(
                "element {r} is no longer on the page: take a new browser_snapshot"
            ))),
            _ => Err(unknown()),
        }
    }

    /// Call `function` in the daemon's isolated world of the current document (made on first
    /// use, made again when a navigation replaced it); the raw answer.
    pub(super) async fn in_world(
        &self,
        function: &str,
        args: Value,
        by_value: bool,
    ) -> Result<Value, BrowserError> {
        self.blocked()?;
        for attempt in 0..2 {
            let world = self.state.lock().ok().and_then(|s| s.world);
            let context = match world {
                Some(context) => context,
                None => self.make_world().await?,
            };
            let answer = self
                .call(
                    "Runtime.callFunctionOn",
                    json!({"functionDeclaration": function, "executionContextId": context,
                           "arguments": args, "returnByValue": by_value}),
                )
                .await;
            match answer {
                Ok(answer) => {
                    if let Some(details) = answer.get("exceptionDetails") {
                        let text = details
                            .pointer("/exception/description")
                            .and_then(Value::as_str)
                            .unwrap_or("the page script threw");
                        return Err(BrowserError::Page(text.to_string()));
                    }
                    return Ok(answer);
                }
                // The document (and its world) went away between the lookup and the call.
                Err(BrowserError::Protocol(e)) if attempt == 0 && e.contains("context") => {
                    if let Ok(mut s) = self.state.lock()
                        && s.world == Some(context)
                    {
                        s.world = None;
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(BrowserError::Page(
            "the page kept changing while it was read; try again".into(),
        ))
    }

    async fn make_world(&self) -> Result<i64, BrowserError> {
        let made = self
            .call(
                "Page.createIsolatedWorld",
                json!({"frameId": self.target, "worldName": WORLD,
                       "grantUniveralAccess": false}),
            )
            .await?;
        let context = made
            .get("executionContextId")
            .and_then(Value::as_i64)
            .ok_or_else(|| BrowserError::Protocol("the browser made no isolated world".into()))?;
        if let Ok(mut s) = self.state.lock() {
            s.world = Some(context);
        }
        Ok(context)
    }
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
