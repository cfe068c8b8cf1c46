//! The `patch` tool: replace mode (fuzzy find-and-replace in one file) and patch mode (a V4A
//! multi-file patch), both through [`super::patch`] on the blocking pool, with a unified diff in
//! the result. Paths resolve against the session's working directory.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Concurrency, Tool, ToolContext, ToolError, optional_str, patch, write_guard};

pub struct PatchTool;

#[async_trait]
impl Tool for PatchTool {
    fn name(&self) -> &'static str {
        "patch"
    }
    fn toolset(&self) -> &'static str {
        "file"
    }
    fn schema(&self) -> Value {
        patch::patch_schema()
    }
    fn concurrency(&self, args: &Value) -> Concurrency {
        let paths: Vec<std::path::PathBuf> = match optional_str(args, "mode") {
            Some("patch") => optional_str(args, "patch")
                .map(patch::touched_paths)
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            _ => optional_str(args, "path")
                .map(Into::into)
                .into_iter()
                .collect(),
        };
        if paths.is_empty() {
            Concurrency::Sequential
        } else {
            Concurrency::PathScoped(paths)
        }
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let mode = optional_str(&args, "mode").unwrap_or("replace");
        let targets: Vec<std::path::PathBuf> = match mode {
            "patch" => optional_str(&args, "patch")
                .map(patch::touched_paths)
                .unwrap_or_default()
                .iter()
                .map(|p| ctx.resolve_path(p))
                .collect(),
            _ => optional_str(&args, "path")
                .map(|p| ctx.resolve_path(p))
                .into_iter()
                .collect(),
        };
        if let Err(refusal) = write_guard::guard_writes(ctx, &targets).await {
            return Ok(json!({ "success": false, "error": refusal }));
        }
        let work: Box<dyn FnOnce() -> Value + Send> = match mode {
            "patch" => {
                let text = optional_str(&args, "patch")
                    .ok_or_else(|| ToolError::Arguments("patch mode needs `patch`".into()))?
                    .to_string();
                let (paths, cwd) = (ctx.services.paths.clone(), ctx.cwd.clone());
                Box::new(move || patch::patch_v4a(&|p| paths.resolve(p, &cwd), &text))
            }
            "replace" => {
                let path = ctx.resolve_path(
                    optional_str(&args, "path")
                        .ok_or_else(|| ToolError::Arguments("replace mode needs `path`".into()))?,
                );
                let old = args
                    .get("old_string")
                    .and_then(Value::as_str)
                    .ok_or_else(|| ToolError::Arguments("replace mode needs `old_string`".into()))?
                    .to_string();
                let new = args
                    .get("new_string")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let all = args
                    .get("replace_all")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                Box::new(move || patch::patch_replace(&path, &old, &new, all))
            }
            other => {
                return Ok(json!({
                    "success": false,
                    "error": format!("unknown mode `{other}`: use `replace` or `patch`")
                }));
            }
        };
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| ToolError::Failed(format!("the patch task failed: {e}")))
    }
}
