//! The `vision` toolset: `vision_analyze` (Hermes' tool and arguments: `image_url`, a path, an
//! http(s) URL or a `data:` URL, and `question`). The image is read like `read_file` reads (the
//! path policy refuses credentials and the daemon's own state), a URL is fetched through the
//! SSRF-guarded client, and either way it must be a real PNG, JPEG, GIF or WebP within the
//! limits (a large one is scaled down). The auxiliary vision model (`auxiliary.vision.*`)
//! answers the question; without one, a main model that takes images is handed the image itself
//! on its next request (Hermes' native path); with neither, the call says how to configure one.

use async_trait::async_trait;
use base64::Engine as _;
use serde_json::{Value, json};

use super::{Concurrency, Tool, ToolContext, ToolError, optional_str, required_str};
use crate::llm::{
    Image,
    image_prep::{self, MAX_SOURCE_BYTES, Prepared},
};

pub struct VisionAnalyzeTool;

#[async_trait]
impl Tool for VisionAnalyzeTool {
    fn name(&self) -> &'static str {
        "vision_analyze"
    }
    fn toolset(&self) -> &'static str {
        "vision"
    }
    fn has_effects(&self, _args: &Value) -> bool {
        false
    }
    fn concurrency(&self, _args: &Value) -> Concurrency {
        Concurrency::Safe
    }
    fn schema(&self) -> Value {
        json!({
            "name": "vision_analyze",
            "description": "Look at an image and answer a question about it. Accepts a local \
                file path, an http(s) URL or a data: URL (PNG, JPEG, GIF or WebP). Use it when \
                the user attaches or names an image, or a tool produced one.",
            "parameters": {
                "type": "object",
                "properties": {
                    "image_url": {
                        "type": "string",
                        "description": "Image URL (http/https), local file path, or data: URL to load."
                    },
                    "question": {
                        "type": "string",
                        "description": "Your specific question or request about the image."
                    }
                },
                "required": ["image_url", "question"]
            }
        })
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let source = required_str(&args, "image_url")?.trim();
        let question = optional_str(&args, "question").unwrap_or("Describe the image.");
        let bytes = match read_source(source, ctx).await {
            Ok(bytes) => bytes,
            Err(e) => return Ok(failure(&e)),
        };
        let prepared = tokio::task::spawn_blocking(move || image_prep::prepare(bytes))
            .await
            .map_err(|e| ToolError::Failed(format!("the image task failed: {e}")))?;
        let prepared = match prepared {
            Ok(prepared) => prepared,
            Err(e) => return Ok(failure(&format!("{source}: {e}"))),
        };
        analyze(prepared, question, ctx).await
    }
}

/// Hermes' error shape for this tool.
fn failure(error: &str) -> Value {
    json!({"success": false, "error": format!("Error analyzing image: {error}")})
}

/// The auxiliary model's answer, else the image handed to a main model that sees.
async fn analyze(
    prepared: Prepared,
    question: &str,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    if let Some(vision) = ctx.services.vision() {
        let image = Image {
            media_type: prepared.media_type.to_string(),
            base64: base64::engine::general_purpose::STANDARD
                .encode(&prepared.bytes)
                .into(),
        };
        let prompt = format!(
            "Fully describe and explain everything about this image, then answer the following \
             question:\n\n{question}"
        );
        let answer = tokio::select! {
            () = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
            answer = vision.analyze(image, &prompt, &ctx.cancel) => answer,
        };
        match answer {
            Ok(Some(analysis)) => return Ok(json!({"success": true, "analysis": analysis})),
            Ok(None) => {}
            Err(e) => return Ok(failure(&e)),
        }
    }
    if !ctx.settings.main_sees_images {
        return Ok(failure(
            "no model here can see images: the main model is text-only and \
             auxiliary.vision.model is not set (set it to a vision model in config.yaml)",
        ));
    }
    let dir = ctx.settings.spill_dir.join("images");
    let path = tokio::task::spawn_blocking(move || image_prep::save(&dir, &prepared))
        .await
        .map_err(|e| ToolError::Failed(format!("the image task failed: {e}")))?
        .map_err(ToolError::Failed)?;
    Ok(json!({
        "success": true,
        "analysis": format!(
            "The image is attached for you to look at; answer from it: {question}\nMEDIA:{}",
            path.display()
        ),
    }))
}

/// The bytes of the image `source` names: a `data:` URL, an http(s) URL (guarded fetch) or a
/// path (`file://`, `MEDIA:` or plain), read under the path policy.
async fn read_source(source: &str, ctx: &ToolContext) -> Result<Vec<u8>, String> {
    if let Some(data) = source.strip_prefix("data:") {
        let (_, encoded) = data
            .split_once(";base64,")
            .ok_or("a data: URL must be base64 (data:image/png;base64,…)")?;
        return base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .map_err(|e| format!("the data: URL is not valid base64: {e}"));
    }
    let lower = source.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let limit = ctx
            .services
            .vision()
            .map_or(std::time::Duration::from_secs(30), |v| v.download_timeout());
        let body =
            super::web::fetch_bytes(&ctx.services.web, source, MAX_SOURCE_BYTES, limit).await?;
        return Ok(body.to_vec());
    }
    let path = source
        .strip_prefix("file://")
        .or_else(|| source.strip_prefix("MEDIA:"))
        .unwrap_or(source);
    let path = ctx.resolve_path(path);
    if let Err(refusal) = ctx.services.paths.check_read(&path) {
        tracing::warn!(path = %path.display(), "vision_analyze of a protected file refused");
        return Err(refusal);
    }
    tokio::task::spawn_blocking(move || {
        let meta = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if !meta.is_file() {
            return Err(format!("{}: not a regular file", path.display()));
        }
        if meta.len() > MAX_SOURCE_BYTES as u64 {
            return Err(format!(
                "{}: {} bytes, over the {MAX_SOURCE_BYTES}-byte limit",
                path.display(),
                meta.len()
            ));
        }
        std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
    })
    .await
    .map_err(|e| format!("the file task failed: {e}"))?
}
