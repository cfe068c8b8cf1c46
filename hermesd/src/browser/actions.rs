//! What the model does on a page: click and type by ref, press keys, scroll, go back, read the
//! images and the console. Clicks are real mouse events at the element's centre (scrolled into
//! view first); typing replaces the field's content through the input pipeline.

use serde_json::{Value, json};

use super::{BrowserError, page::Page};

/// Pixels one `browser_scroll` moves (Hermes' amount).
const SCROLL_PIXELS: i64 = 500;
/// Images listed at most.
const MAX_IMAGES: usize = 200;

/// A named key: (key, code, Windows virtual key code, the text it types).
fn key_of(name: &str) -> Option<(String, String, i64, Option<String>)> {
    let named: &[(&str, i64, Option<&str>)] = &[
        ("Enter", 13, Some("\r")),
        ("Tab", 9, None),
        ("Escape", 27, None),
        ("Backspace", 8, None),
        ("Delete", 46, None),
        ("ArrowUp", 38, None),
        ("ArrowDown", 40, None),
        ("ArrowLeft", 37, None),
        ("ArrowRight", 39, None),
        ("Home", 36, None),
        ("End", 35, None),
        ("PageUp", 33, None),
        ("PageDown", 34, None),
        ("Space", 32, Some(" ")),
    ];
    if let Some((key, code, text)) = named.iter().find(|(k, _, _)| k.eq_ignore_ascii_case(name)) {
        let key = if *key == "Space" { " " } else { key };
        let code_name = if key == " " { "Space" } else { key };
        return Some((
            key.to_string(),
            code_name.to_string(),
            *code,
            text.map(str::to_string),
        ));
    }
    let mut chars = name.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return None;
    };
    let upper = c.to_ascii_uppercase();
    let code = if c.is_ascii_alphabetic() {
        format!("Key{upper}")
    } else if c.is_ascii_digit() {
        format!("Digit{c}")
    } else {
        String::new()
    };
    Some((c.to_string(), code, upper as i64, Some(c.to_string())))
}

impl Page {
    /// Click element `r`.
    pub async fn click(&self, r: &str) -> Result<(), BrowserError> {
        let object = self.element(r).await?;
        // Scrolled to the middle of the viewport; its centre in viewport coordinates, or null
        // when it has no box (hidden), in which case it is clicked from script.
        let centre = self
            .call_on(
                &object,
                "function(){this.scrollIntoView({block:'center',inline:'center'});\
                 const r=this.getBoundingClientRect();\
                 return (r.width>0&&r.height>0)?[r.left+r.width/2,r.top+r.height/2]:null;}",
                json!([]),
            )
            .await?;
        let Some([x, y]) = centre
            .as_array()
            .and_then(|a| Some([a.first()?.as_f64()?, a.get(1)?.as_f64()?]))
        else {
            self.call_on(&object, "function(){this.click();}", json!([]))
                .await?;
            return Ok(());
        };
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            // A dialog the press opened holds the page: the click ends there.
            if self.pending_dialog().is_some() {
                break;
            }
            self.act(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await?;
        }
        Ok(())
    }

    /// Replace the content of field `r` with `text`.
    pub async fn type_text(&self, r: &str, text: &str) -> Result<(), BrowserError> {
        let object = self.element(r).await?;
        let editable = self
            .call_on(
                &object,
                "function(){this.scrollIntoView({block:'center'});this.focus();\
                 if('value' in this){this.value='';\
                 this.dispatchEvent(new Event('input',{bubbles:true}));return true;}\
                 if(this.isContentEditable){this.textContent='';return true;}return false;}",
                json!([]),
            )
            .await?;
        if editable != Value::Bool(true) {
            return Err(BrowserError::Page(format!(
                "element {r} is not a text field; take a browser_snapshot and pick a textbox"
            )));
        }
        if !text.is_empty() {
            self.act("Input.insertText", json!({"text": text})).await?;
        }
        Ok(())
    }

    /// Press key `name` (Enter, Tab, Escape, arrows, … or one character).
    pub async fn press(&self, name: &str) -> Result<(), BrowserError> {
        let (key, code, vk, text) = key_of(name).ok_or_else(|| {
            BrowserError::Arguments(format!(
                "unknown key {name:?}: use Enter, Tab, Escape, Backspace, Delete, ArrowUp, \
                 ArrowDown, ArrowLeft, ArrowRight, Home, End, PageUp, PageDown, Space or one \
                 character"
            ))
        })?;
        let mut down = json!({"type": "keyDown", "key": key, "code": code,
                              "windowsVirtualKeyCode": vk});
        if let Some(text) = &text {
            down["text"] = json!(text);
        } else {
            down["type"] = json!("rawKeyDown");
        }
        self.act("Input.dispatchKeyEvent", down).await?;
        if self.pending_dialog().is_some() {
            return Ok(());
        }
        self.act(
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk}),
        )
        .await?;
        Ok(())
    }

    /// Scroll the page up or down.
    pub async fn scroll(&self, down: bool) -> Result<(), BrowserError> {
        let dy = if down { SCROLL_PIXELS } else { -SCROLL_PIXELS };
        self.evaluate(&format!("window.scrollBy(0, {dy})")).await?;
        Ok(())
    }

    /// Go back one entry in the history and wait for it to load.
    pub async fn back(&mut self) -> Result<(), BrowserError> {
        let history = self.call("Page.getNavigationHistory", json!({})).await?;
        let current = history
            .get("currentIndex")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if current == 0 {
            return Err(BrowserError::Page("there is no previous page".into()));
        }
        let entry = history
            .pointer(&format!("/entries/{}/id", current - 1))
            .cloned()
            .ok_or_else(|| BrowserError::Protocol("the history has no previous entry".into()))?;
        let before = self.loads();
        self.call("Page.navigateToHistoryEntry", json!({"entryId": entry}))
            .await?;
        self.wait_load(before).await
    }

    /// The page's images (not `data:` ones): src, alt and natural size.
    pub async fn images(&self) -> Result<Vec<Value>, BrowserError> {
        let list = self
            .evaluate(&format!(
                "[...document.images].filter(i => i.src && !i.src.startsWith('data:'))\
                 .slice(0, {MAX_IMAGES}).map(i => ({{src: i.src, alt: i.alt || '', \
                 width: i.naturalWidth, height: i.naturalHeight}}))"
            ))
            .await?;
        Ok(list.as_array().cloned().unwrap_or_default())
    }

    /// The console messages, uncaught errors and dialogs seen; `clear` empties the buffers.
    pub fn console(&self, clear: bool) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
        let Ok(mut s) = self.state.lock() else {
            return Default::default();
        };
        let messages = s
            .console
            .iter()
            .map(|m| json!({"type": m.kind, "text": m.text, "source": "console"}))
            .collect();
        let errors = s
            .errors
            .iter()
            .map(|m| json!({"message": m.text, "source": "exception"}))
            .collect();
        let dialogs = s.dialogs.iter().cloned().collect();
        if clear {
            s.console.clear();
            s.errors.clear();
            s.dialogs.clear();
        }
        (messages, errors, dialogs)
    }
}

#[cfg(test)]
mod tests {
    use super::key_of;

    #[test]
    fn keys_have_codes_and_text() {
        assert_eq!(
            key_of("enter"),
            Some(("Enter".into(), "Enter".into(), 13, Some("\r".into())))
        );
        assert_eq!(key_of("a").map(|k| k.1), Some("KeyA".into()));
        assert_eq!(key_of("Space").map(|k| k.0), Some(" ".into()));
        assert_eq!(key_of("Hyper"), None);
    }
}
