//! The `file` toolset as tools: `read_file`, `write_file` and `search_files`, running the
//! blocking work of [`super::files`] on the blocking pool. Paths resolve against the session's
//! working directory.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use async_trait::async_trait;
use serde_json::Value;

use super::{
    Concurrency, Tool, ToolContext, ToolError, files, optional_str, required_str, write_guard,
};

async fn blocking(work: impl FnOnce() -> Value + Send + 'static) -> Result<Value, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::Failed(format!("the file task failed: {e}")))
}

fn usize_arg(args: &Value, key: &str, default: usize) -> usize {
    args.get(key)
        .and_then(Value::as_i64)
        .map_or(default, |n| n.max(0) as usize)
}

pub struct ReadFileTool;

#[async_trait]
impl Tool for ReadFileTool {
    fn name(&self) -> &'static str {
        "read_file"
    }
    fn has_effects(&self, _args: &Value) -> bool {
        false
    }
    fn shows_file_content(&self) -> bool {
        true
    }
    fn toolset(&self) -> &'static str {
        "file"
    }
    fn schema(&self) -> Value {
        files::read_file_schema()
    }
    fn concurrency(&self, args: &Value) -> Concurrency {
        match optional_str(args, "path") {
            Some(path) => Concurrency::PathScoped(vec![path.into()]),
            None => Concurrency::Sequential,
        }
    }
    fn max_result_chars(&self) -> Option<usize> {
        None
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = ctx.resolve_path(required_str(&args, "path")?);
        if let Err(refusal) = ctx.services.paths.check_read(&path) {
            tracing::warn!(path = %path.display(), "read of a credential file refused");
            return Ok(serde_json::json!({ "error": refusal }));
        }
        let offset = usize_arg(&args, "offset", 1).max(1);
        let limit = usize_arg(&args, "limit", files::read::DEFAULT_READ_LIMIT);
        let hints = files::ReadHints {
            vision_analyze: ctx.has_tool("vision_analyze"),
            terminal: ctx.has_tool("terminal"),
        };
        // A Hermes home's config.yaml is shown with its secret values masked.
        let settings = ctx.services.masker().is_enabled()
            && crate::policy::secrets::is_settings_file(&ctx.services.paths, &path);
        blocking(move || {
            if settings {
                files::read_settings_with(&path, offset, limit, hints)
            } else {
                files::read_file_with(&path, offset, limit, hints)
            }
        })
        .await
    }
}

pub struct WriteFileTool;

#[async_trait]
impl Tool for WriteFileTool {
    fn name(&self) -> &'static str {
        "write_file"
    }
    fn toolset(&self) -> &'static str {
        "file"
    }
    fn schema(&self) -> Value {
        files::write_file_schema()
    }
    fn concurrency(&self, args: &Value) -> Concurrency {
        match optional_str(args, "path") {
            Some(path) => Concurrency::PathScoped(vec![path.into()]),
            None => Concurrency::Sequential,
        }
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = ctx.resolve_path(required_str(&args, "path")?);
        let content = required_str(&args, "content")?.to_string();
        if let Err(refusal) = write_guard::guard_writes(ctx, std::slice::from_ref(&path)).await {
            return Ok(serde_json::json!({ "error": refusal }));
        }
        blocking(move || files::write_file(&path, &content)).await
    }
}

pub struct SearchFilesTool;

/// Sets the flag when dropped, so an abandoned search stops walking.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[async_trait]
impl Tool for SearchFilesTool {
    fn name(&self) -> &'static str {
        "search_files"
    }
    fn has_effects(&self, _args: &Value) -> bool {
        false
    }
    fn shows_file_content(&self) -> bool {
        true
    }
    fn toolset(&self) -> &'static str {
        "file"
    }
    fn schema(&self) -> Value {
        files::search_files_schema()
    }
    fn concurrency(&self, _args: &Value) -> Concurrency {
        Concurrency::Safe
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let mut request: files::SearchRequest = serde_json::from_value(args)
            .map_err(|e| ToolError::Arguments(format!("search_files: {e}")))?;
        request.base = ctx.cwd.clone();
        request.mask_settings = ctx.services.masker().is_enabled();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cancel);
        let _stop = CancelOnDrop(Arc::clone(&cancel));
        let paths = ctx.services.paths.clone();
        blocking(move || files::search_files(&request, &paths, &flag)).await
    }
}
