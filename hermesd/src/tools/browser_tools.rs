//! The `browser` toolset (Hermes' names and arguments): `browser_navigate`, `browser_snapshot`,
//! `browser_click`, `browser_type`, `browser_scroll`, `browser_back`, `browser_press`,
//! `browser_console`, `browser_get_images`, `browser_vision`, `browser_dialog` and
//! `browser_cdp`, each on its conversation's browser (`crate::browser`). Page text is the
//! page's: results are bounded here and masked by dispatch like every result; a dialog the page
//! left open is reported with every result until `browser_dialog` answers it.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolServices, optional_str, required_str};
use crate::browser::{BrowserError, Lease, Page};

/// Snapshots longer than this are cut (Hermes' threshold).
const MAX_SNAPSHOT_CHARS: usize = 15_000;
/// Characters of an evaluated expression's JSON shown.
const MAX_EVAL_CHARS: usize = 20_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Navigate,
    Snapshot,
    Click,
    Type,
    Scroll,
    Back,
    Press,
    Console,
    Images,
    Vision,
    Dialog,
    Cdp,
}

/// One browser tool.
pub struct BrowserTool(Kind);

/// The browser tools, in Hermes' order.
pub fn browser_tools() -> Vec<std::sync::Arc<dyn Tool>> {
    use Kind::*;
    [
        Navigate, Snapshot, Click, Type, Scroll, Back, Press, Images, Vision, Console, Dialog, Cdp,
    ]
    .into_iter()
    .map(|k| std::sync::Arc::new(BrowserTool(k)) as std::sync::Arc<dyn Tool>)
    .collect()
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

impl BrowserTool {
    fn parts(&self) -> (&'static str, &'static str, Value) {
        let string = |d: &str| json!({"type": "string", "description": d});
        let r = || string("Element ref from the snapshot, e.g. @e5");
        match self.0 {
            Kind::Navigate => (
                "browser_navigate",
                "Open a URL in the browser; returns a compact snapshot with element refs. Prefer \
                 web_extract or curl for plain pages and files.",
                object(json!({"url": string("The URL")}), &["url"]),
            ),
            Kind::Snapshot => (
                "browser_snapshot",
                "The page's accessibility tree with refs (@e1…) for click/type. full=true adds \
                 all text.",
                object(json!({"full": {"type": "boolean", "default": false}}), &[]),
            ),
            Kind::Click => (
                "browser_click",
                "Click the element with this ref.",
                object(json!({"ref": r()}), &["ref"]),
            ),
            Kind::Type => (
                "browser_type",
                "Replace the text of the input with this ref.",
                object(
                    json!({"ref": r(), "text": string("Text to type")}),
                    &["ref", "text"],
                ),
            ),
            Kind::Scroll => (
                "browser_scroll",
                "Scroll the page up or down.",
                object(
                    json!({"direction": {"type": "string", "enum": ["up", "down"]}}),
                    &["direction"],
                ),
            ),
            Kind::Back => (
                "browser_back",
                "Go back to the previous page.",
                object(json!({}), &[]),
            ),
            Kind::Press => (
                "browser_press",
                "Press a key (Enter, Tab, Escape, ArrowDown, …).",
                object(json!({"key": string("Key name")}), &["key"]),
            ),
            Kind::Images => (
                "browser_get_images",
                "List the page's images (src, alt, size).",
                object(json!({}), &[]),
            ),
            Kind::Console => (
                "browser_console",
                "Console messages and JS errors of the page; with expression, evaluate \
                 JavaScript in the page and return its JSON value.",
                object(
                    json!({"clear": {"type": "boolean", "default": false},
                           "expression": string("JavaScript to evaluate")}),
                    &[],
                ),
            ),
            Kind::Vision => (
                "browser_vision",
                "Screenshot the page to look at it (layout, CAPTCHAs, charts); answers the \
                 question. annotate=true labels interactive elements [N] = ref @eN. \
                 Share it with MEDIA:<screenshot_path>.",
                object(
                    json!({"question": string("What to look for"),
                           "annotate": {"type": "boolean", "default": false}}),
                    &["question"],
                ),
            ),
            Kind::Dialog => (
                "browser_dialog",
                "Answer the JavaScript dialog (alert/confirm/prompt) blocking the page, shown \
                 in pending_dialogs.",
                object(
                    json!({"action": {"type": "string", "enum": ["accept", "dismiss"]},
                           "prompt_text": string("Answer to a prompt()"),
                           "dialog_id": string("The dialog's id")}),
                    &["action"],
                ),
            ),
            Kind::Cdp => (
                "browser_cdp",
                "Send a Chrome DevTools Protocol command to the page (Runtime, DOM, Input, \
                 Emulation, Page.captureScreenshot, Network cookies…) when no browser tool does \
                 it.",
                object(
                    json!({"method": string("CDP method, e.g. Runtime.evaluate"),
                           "params": {"type": "object"}}),
                    &["method"],
                ),
            ),
        }
    }
}

#[async_trait]
impl Tool for BrowserTool {
    fn name(&self) -> &'static str {
        self.parts().0
    }

    fn toolset(&self) -> &'static str {
        "browser"
    }

    fn schema(&self) -> Value {
        let (name, description, parameters) = self.parts();
        json!({"name": name, "description": description, "parameters": parameters})
    }

    fn available(&self, services: &ToolServices) -> bool {
        let there = services.browsers.available();
        if !there {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                tracing::info!(
                    "browser tools unavailable: {}",
                    crate::browser::unavailable_reason()
                );
            });
        }
        there
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let browsers = &ctx.services.browsers;
        let conversation = ctx.scope.conversation.as_str();
        let work = async {
            if self.0 == Kind::Navigate {
                let url = required_str(&args, "url")?.trim().to_string();
                crate::tools::web::refuse_secrets_in(&url, &ctx.services.masker())
                    .map_err(ToolError::Failed)?;
                // Refused before a browser is even started.
                crate::browser::check_url(&browsers.policy(), &url)
                    .await
                    .map_err(ToolError::Failed)?;
                // Downloads go to the session's own result directory: read_file reaches it,
                // and it ages and goes with the session (`maintenance::tool_results`).
                let downloads = ctx.settings.spill_dir.join("downloads");
                let mut lease = browsers
                    .lease(conversation, Some(&downloads))
                    .await
                    .map_err(failed)?;
                return navigate(&mut lease, &url).await;
            }
            let mut lease = browsers.lease(conversation, None).await.map_err(failed)?;
            let mut result = act(self.0, &args, &mut lease, ctx).await;
            if let (Ok(result), Ok(page)) = (&mut result, lease.page()) {
                with_page_news(result, page);
            }
            result
        };
        tokio::select! {
            result = work => result,
            () = ctx.cancel.cancelled() => Err(ToolError::Interrupted),
        }
    }
}

fn failed(e: BrowserError) -> ToolError {
    match e {
        BrowserError::Arguments(text) => ToolError::Arguments(text),
        other => ToolError::Failed(other.to_string()),
    }
}

async fn navigate(lease: &mut Lease, url: &str) -> Result<Value, ToolError> {
    let restarted = lease.restarted;
    let page = lease.page().map_err(failed)?;
    if let Err(e) = page.navigate(url).await {
        if matches!(e, BrowserError::Refused(_)) {
            // Nothing of a refused page stays readable.
            let _ = page.navigate("about:blank").await;
        }
        return Err(failed(e));
    }
    let (final_url, title) = page.location().await.map_err(failed)?;
    let snapshot = page.snapshot(false).await.map_err(failed)?;
    let mut result = json!({
        "success": true,
        "url": final_url,
        "title": title,
        "snapshot": bounded(&snapshot.text),
        "element_count": snapshot.elements,
    });
    if restarted {
        result["note"] = json!("the browser had exited and was started again");
    }
    with_page_news(&mut result, page);
    Ok(result)
}

/// `result` with the dialog blocking the page, if one is, and the downloads that ended.
fn with_page_news(result: &mut Value, page: &Page) {
    if let Some(dialog) = page.pending_dialog() {
        result["pending_dialogs"] = json!([dialog.to_json()]);
    }
    let downloads = page.finished_downloads();
    if !downloads.is_empty() {
        result["downloads"] = json!(downloads);
    }
}

async fn act(
    kind: Kind,
    args: &Value,
    lease: &mut Lease,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let page = lease.page().map_err(failed)?;
    match kind {
        Kind::Navigate => Err(ToolError::Failed("navigate is handled before".into())),
        Kind::Snapshot => {
            let full = args.get("full").and_then(Value::as_bool).unwrap_or(false);
            let snapshot = page.snapshot(full).await.map_err(failed)?;
            Ok(json!({
                "success": true,
                "snapshot": bounded(&snapshot.text),
                "element_count": snapshot.elements,
            }))
        }
        Kind::Click => {
            let r = at_ref(required_str(args, "ref")?);
            page.click(&r).await.map_err(failed)?;
            Ok(json!({"success": true, "clicked": r}))
        }
        Kind::Type => {
            let r = at_ref(required_str(args, "ref")?);
            let text = required_str(args, "text")?;
            page.type_text(&r, text).await.map_err(failed)?;
            Ok(json!({"success": true, "typed": text, "element": r}))
        }
        Kind::Scroll => {
            let direction = required_str(args, "direction")?;
            let down = match direction {
                "down" => true,
                "up" => false,
                other => {
                    return Err(ToolError::Arguments(format!(
                        "Invalid direction '{other}'. Use 'up' or 'down'."
                    )));
                }
            };
            page.scroll(down).await.map_err(failed)?;
            Ok(json!({"success": true, "scrolled": direction}))
        }
        Kind::Back => {
            page.back().await.map_err(failed)?;
            let (url, _) = page.location().await.map_err(failed)?;
            Ok(json!({"success": true, "url": url}))
        }
        Kind::Press => {
            let key = required_str(args, "key")?;
            page.press(key).await.map_err(failed)?;
            Ok(json!({"success": true, "pressed": key}))
        }
        Kind::Images => {
            let images = page.images().await.map_err(failed)?;
            Ok(json!({"success": true, "count": images.len(), "images": images}))
        }
        Kind::Dialog => {
            let accept = match required_str(args, "action")? {
                "accept" => true,
                "dismiss" => false,
                other => {
                    return Err(ToolError::Arguments(format!(
                        "Invalid action '{other}'. Use 'accept' or 'dismiss'."
                    )));
                }
            };
            let dialog = page
                .answer_dialog(
                    accept,
                    optional_str(args, "prompt_text"),
                    optional_str(args, "dialog_id"),
                )
                .await
                .map_err(failed)?;
            Ok(
                json!({"success": true, "action": if accept { "accept" } else { "dismiss" },
                      "dialog": dialog.to_json()}),
            )
        }
        Kind::Vision => super::browser_vision::look(page, args, ctx).await,
        Kind::Cdp => {
            let method = required_str(args, "method")?.trim();
            let params = args.get("params").cloned().unwrap_or_else(|| json!({}));
            let answer = page
                .raw_command(method, params, &ctx.cwd, &ctx.services.paths)
                .await
                .map_err(failed)?;
            let text = answer.to_string();
            let result = if text.chars().count() > MAX_EVAL_CHARS {
                json!(bounded_to(&text, MAX_EVAL_CHARS))
            } else {
                answer
            };
            Ok(json!({"success": true, "method": method, "result": result}))
        }
        Kind::Console => {
            if let Some(expression) = optional_str(args, "expression") {
                let value = page.evaluate(expression).await.map_err(failed)?;
                let text = value.to_string();
                let result = if text.chars().count() > MAX_EVAL_CHARS {
                    json!(bounded_to(&text, MAX_EVAL_CHARS))
                } else {
                    value
                };
                return Ok(json!({"success": true, "result": result}));
            }
            let clear = args.get("clear").and_then(Value::as_bool).unwrap_or(false);
            let (messages, errors, dialogs) = page.console(clear);
            let mut result = json!({
                "success": true,
                "total_messages": messages.len(),
                "total_errors": errors.len(),
                "console_messages": messages,
                "js_errors": errors,
            });
            if !dialogs.is_empty() {
                result["dialogs"] = json!(dialogs);
            }
            Ok(result)
        }
    }
}

fn at_ref(r: &str) -> String {
    let r = r.trim();
    if r.starts_with('@') {
        r.to_string()
    } else {
        format!("@{r}")
    }
}

fn bounded(text: &str) -> String {
    bounded_to(text, MAX_SNAPSHOT_CHARS)
}

/// `text` cut at a line end near `max` characters, saying how much was left out.
fn bounded_to(text: &str, max: usize) -> String {
    let Some((cut, _)) = text.char_indices().nth(max) else {
        return text.to_string();
    };
    let head = &text[..cut];
    let head = head.rfind('\n').map_or(head, |at| &head[..=at]);
    format!(
        "{head}[… {} more characters cut; scroll or use browser_console with an expression to read \
         the rest]",
        text[head.len()..].chars().count()
    )
}
