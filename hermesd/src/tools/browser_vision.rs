//! `browser_vision`: a screenshot of the conversation's page, saved in the session's result
//! cache and named as `MEDIA:<path>` (the user can be sent it). A main model that takes images
//! sees it with this result (`agent::media` attaches it to the next request); for a text-only
//! one the auxiliary vision model (`auxiliary.vision.*`) answers the question, as in Hermes.

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
    let for_aux = (!ctx.settings.main_sees_images).then(|| png.clone());
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
    });
    match for_aux {
        None => {
            result["note"] =
                json!("The screenshot is attached for you to look at and answer the question.");
        }
        Some(png) => result["analysis"] = json!(ask_auxiliary(png, &question, ctx).await?),
    }
    if annotate {
        result["annotated"] = json!("[N] labels mark the elements with ref @eN");
    }
    Ok(result)
}

/// The auxiliary vision model's answer about the screenshot, or why there is none.
async fn ask_auxiliary(
    png: Vec<u8>,
    question: &str,
    ctx: &ToolContext,
) -> Result<String, ToolError> {
    use base64::Engine as _;
    let Some(vision) = ctx.services.vision() else {
        return Ok(NO_VISION.into());
    };
    let image = crate::llm::Image {
        media_type: "image/png".into(),
        base64: base64::engine::general_purpose::STANDARD
            .encode(&png)
            .into(),
    };
    let prompt = format!(
        "This is a screenshot of a web page. Describe what it shows, then answer the \
         following question:\n\n{question}"
    );
    let answer = tokio::select! {
        () = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
        answer = vision.analyze(image, &prompt, &ctx.cancel) => answer,
    };
    Ok(match answer {
        Ok(Some(analysis)) => analysis,
        Ok(None) => NO_VISION.into(),
        Err(e) => format!("The vision model could not answer: {e}"),
    })
}

const NO_VISION: &str = "No model here can look at the screenshot: the main model is text-only \
     and auxiliary.vision.model is not set. Use browser_snapshot for the page's text.";
