//! What `browser_vision` looks at: a PNG of the page's viewport, optionally with each element
//! that has a ref labelled `[N]` (its ref `@eN`) for as long as the picture is taken.

use serde_json::{Value, json};

use super::{BrowserError, page::Page};

/// Draws the labels from the daemon's world (see `snapshot.js`) and removes them again.
const LABELS_ON: &str = "function () { const S = globalThis.__hermesd; if (!S) return 0; \
     const box = document.createElement('div'); box.id = '__hermesd_labels'; \
     box.style.cssText = 'position:fixed;inset:0;pointer-events:none;z-index:2147483647'; \
     let n = 0; for (const [id, held] of S.els) { const el = held.deref(); \
     if (!el || !el.isConnected) continue; const r = el.getBoundingClientRect(); \
     if (r.width <= 0 || r.bottom < 0 || r.top > innerHeight) continue; \
     const tag = document.createElement('span'); tag.textContent = '[' + id + ']'; \
     tag.style.cssText = 'position:fixed;font:bold 11px monospace;background:#ffeb3b;\
color:#000;border:1px solid #000;padding:0 2px;left:' + Math.max(0, r.left) + 'px;top:' + \
     Math.max(0, r.top - 14) + 'px'; box.appendChild(tag); n++; } \
     document.documentElement.appendChild(box); return n; }";
const LABELS_OFF: &str = "function () { const box = document.getElementById('__hermesd_labels'); if (box) box.remove(); }";

impl Page {
    /// A PNG of the viewport; `annotate` labels the elements with refs (a snapshot first, so
    /// every interactive element has one).
    pub async fn screenshot(&self, annotate: bool) -> Result<Vec<u8>, BrowserError> {
        if annotate {
            self.snapshot(false).await?;
            self.in_world(LABELS_ON, json!([]), true).await?;
        }
        let shot = self
            .call(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": false}),
            )
            .await;
        if annotate {
            let _ = self.in_world(LABELS_OFF, json!([]), true).await;
        }
        let data = shot?
            .get("data")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| BrowserError::Protocol("the screenshot has no data".into()))?;
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| BrowserError::Protocol(format!("the screenshot is not base64: {e}")))
    }
}
