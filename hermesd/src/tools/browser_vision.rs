//! `browser_vision`: a screenshot of the conversation's page, saved in the session's result
//! cache and named as `MEDIA:<path>`, so a model that takes images sees it with this result
//! (`agent::media` attaches it to the next request) and the user can be sent it.

use serde_json::{Value, json};

use super::{ToolContext, ToolError, required_str};
use crate::browser::{BrowserError, Page};

/// Take the screenshot for `browser_vision`'s `question`.
pub async fn look(page: &Page, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
    let question = required_str(args, "question")?.trim().to_string();
    let annotate = args
        .get("annotate")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let png = page
        .screenshot(annotate)
        .await
        .map_err(|e: BrowserError| ToolError::Failed(e.to_string()))?;
    let dir = ctx.settings.spill_dir.clone();
    let name = format!(
        "browser_screenshot_{}.png",
        super::spill::safe_stem(&ctx.call_id)
    );
    let path = dir.join(name);
    let written = path.clone();
    tokio::task::spawn_blocking(move || {
        std::fs::create_dir_all(&dir)?;
        std::fs::write(&written, &png)
    })
    .await
    .map_err(|e| ToolError::Failed(format!("cannot save the screenshot: {e}")))?
    .map_err(|e| {
        ToolError::Failed(format!(
            "cannot save the screenshot to {}: {e}",
            path.display()
        ))
    })?;
    let path = path.display().to_string();
    let mut result = json!({
        "success": true,
        "question": question,
        "screenshot_path": path,
        "screenshot": format!("MEDIA:{path}"),
        "note": "The screenshot is attached for you to look at and answer the question.",
    });
    if annotate {
        result["annotated"] = json!("[N] labels mark the elements with ref @eN");
    }
    Ok(result)
}
