//! The registry of every tool the daemon has, the toolsets that enable them, and dispatch: one
//! path from a model's tool call to a JSON result, where every failure becomes `{"error": …}`.

use std::{sync::Arc, time::Instant};

use serde_json::{Value, json};

use super::{
    Concurrency, Tool, ToolContext, ToolError, ToolOutcome, ToolServices, coerce, outcome, spill,
};
pub use crate::config::settings::ToolsetSelection;
use crate::llm::{ToolCall, ToolSchema};

/// Characters of a call's arguments and result in its debug log lines.
const LOGGED_RESULT_CHARS: usize = 2_000;

/// How long an interrupted call gets to wind down before it is abandoned.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Every tool this daemon knows.
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.name()))
            .finish()
    }
}

impl Registry {
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Self {
        Self { tools }
    }

    /// The builtin tools.
    pub fn builtin() -> Self {
        Self::new(super::builtin_tools())
    }

    /// The tools a session may use: enabled by its toolsets and available here, minus `exclude`
    /// (tools a context forbids, e.g. `clarify` in cron runs).
    pub fn toolbox(
        &self,
        selection: &ToolsetSelection,
        services: &ToolServices,
        exclude: &[&str],
    ) -> Toolbox {
        let mut tools: Vec<Arc<dyn Tool>> = self
            .tools
            .iter()
            .filter(|t| selection.allows(t.toolset()))
            .filter(|t| !exclude.contains(&t.name()))
            .filter(|t| t.available(services))
            .cloned()
            .collect();
        if let Some(mcp) = services.mcp() {
            let servers = mcp.names();
            tools.extend(
                mcp.tools()
                    .into_iter()
                    .filter(|t| selection.allows_mcp(t.server_name(), &servers))
                    .filter(|t| !exclude.contains(&t.name.as_str()))
                    .map(|t| Arc::new(super::mcp_tools::McpToolAdapter(t)) as Arc<dyn Tool>),
            );
        }
        Toolbox::of(tools)
    }
}

impl Registry {
    /// Exactly the named tools that are available here (a background review's set).
    pub fn toolbox_of(&self, names: &[&str], services: &ToolServices) -> Toolbox {
        let tools: Vec<Arc<dyn Tool>> = self
            .tools
            .iter()
            .filter(|t| names.contains(&t.name()) && t.available(services))
            .cloned()
            .collect();
        Toolbox::of(tools)
    }
}

/// The schemas in use, by tool name: a toolbox takes the one already shared when its tool's
/// schema is the same, so sessions (and each request of their turns) hold pointers rather than
/// copies. Weak: a schema no toolbox holds is dropped; a name's entry is replaced when its tool's
/// schema changes (an MCP server's update), and dead entries are swept once the map has doubled.
#[derive(Default)]
struct SharedSchemas {
    by_name: std::collections::HashMap<String, std::sync::Weak<ToolSchema>>,
    sweep_at: usize,
}

static SHARED_SCHEMAS: std::sync::LazyLock<std::sync::Mutex<SharedSchemas>> =
    std::sync::LazyLock::new(Default::default);

/// `schema`, or the equal one some toolbox already holds.
fn shared(schema: ToolSchema) -> Arc<ToolSchema> {
    let mut shared = match SHARED_SCHEMAS.lock() {
        Ok(shared) => shared,
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some(same) = shared
        .by_name
        .get(&schema.name)
        .and_then(std::sync::Weak::upgrade)
        .filter(|same| **same == schema)
    {
        return same;
    }
    if shared.by_name.len() >= shared.sweep_at {
        shared.by_name.retain(|_, s| s.strong_count() > 0);
        shared.sweep_at = (shared.by_name.len() * 2).max(64);
    }
    let schema = Arc::new(schema);
    shared
        .by_name
        .insert(schema.name.clone(), Arc::downgrade(&schema));
    schema
}

fn to_schema(tool: &dyn Tool) -> Arc<ToolSchema> {
    let schema = tool.schema();
    shared(ToolSchema {
        name: tool.name().to_string(),
        description: schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        parameters: schema
            .get("parameters")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
    })
}

/// The tools of one session, with their schemas in request order.
#[derive(Clone)]
pub struct Toolbox {
    tools: Arc<[Arc<dyn Tool>]>,
    schemas: Arc<[Arc<ToolSchema>]>,
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Toolbox {
    /// A toolbox of `tools`, sorted by name, with their schemas.
    fn of(mut tools: Vec<Arc<dyn Tool>>) -> Self {
        tools.sort_by(|a, b| a.name().cmp(b.name()));
        let schemas = tools.iter().map(|t| to_schema(t.as_ref())).collect();
        Toolbox {
            tools: tools.into(),
            schemas,
        }
    }

    pub fn schemas(&self) -> &[Arc<ToolSchema>] {
        &self.schemas
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// The session's side of skill activation: `platform` and the tools and toolsets it has.
    pub fn session_skills(&self, platform: &str) -> super::SessionSkills {
        super::SessionSkills {
            platform: platform.to_string(),
            tools: self.tools.iter().map(|t| t.name().to_string()).collect(),
            toolsets: self.tools.iter().map(|t| t.toolset().to_string()).collect(),
        }
    }

    /// This toolbox without the tools named in `names` (a delegated child's: its parent's, minus
    /// what children may not do).
    pub fn without(&self, names: &[&str]) -> Toolbox {
        let tools = self
            .tools
            .iter()
            .filter(|t| !names.contains(&t.name()))
            .cloned()
            .collect();
        Toolbox::of(tools)
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// How `call` may share time with the rest of its batch; unknown tools and bad arguments
    /// run alone.
    pub fn concurrency(&self, call: &ToolCall, ctx_cwd: &std::path::Path) -> Concurrency {
        let (Some(tool), Ok(args)) = (self.get(&call.name), call.parsed_arguments()) else {
            return Concurrency::Sequential;
        };
        if !args.is_object() {
            return Concurrency::Sequential;
        }
        match tool.concurrency(&args) {
            Concurrency::PathScoped(paths) => Concurrency::PathScoped(
                paths
                    .iter()
                    .map(|p| super::parallel::normalize(&ctx_cwd.join(p)))
                    .collect(),
            ),
            other => other,
        }
    }

    /// Whether any of `calls` may have effects (see [`Tool::has_effects`]); an unknown tool or
    /// arguments that do not parse count as effects.
    pub fn any_effects(&self, calls: &[ToolCall]) -> bool {
        calls.iter().any(
            |call| match (self.get(&call.name), call.parsed_arguments()) {
                (Some(tool), Ok(args)) => tool.has_effects(&args),
                _ => true,
            },
        )
    }

    /// Whether the loop guard should ignore repeats of this call.
    pub fn is_polling(&self, call: &ToolCall) -> bool {
        match (self.get(&call.name), call.parsed_arguments()) {
            (Some(tool), Ok(args)) => tool.is_polling(&args),
            _ => false,
        }
    }

    /// Run one call. Never fails: every problem is a JSON error for the model.
    pub async fn dispatch(&self, call: &ToolCall, ctx: &ToolContext) -> ToolOutcome {
        let started = Instant::now();
        // As the model wrote them: the log writer masks what the model echoes.
        tracing::debug!(
            tool = %call.name,
            call_id = %call.id,
            arguments = %outcome::preview(&call.arguments, LOGGED_RESULT_CHARS),
            "tool call"
        );
        let result = self.run(call, ctx).await;
        let (value, ok) = match result {
            Ok(value) => {
                // A call cut short by an interrupt did not do its job, whatever it returned.
                let ok = !outcome::is_error_result(&value) && !ctx.cancel.is_cancelled();
                (value, ok)
            }
            Err(e) => (json!({ "error": e.to_string() }), false),
        };
        let tool = self.get(&call.name);
        let value = outcome::masked(value, tool.map(|t| t.as_ref()), ctx);
        let summary = outcome::summarize(&value, ok);
        let text = match value {
            Value::String(s) => s,
            other => other.to_string(),
        };
        tracing::debug!(
            tool = %call.name,
            call_id = %call.id,
            ok,
            chars = text.len(),
            result = %outcome::preview(&text, LOGGED_RESULT_CHARS),
            "tool result"
        );
        let limit = tool
            .and_then(|t| t.max_result_chars())
            .unwrap_or(usize::MAX);
        // Writing a large result to disk happens on the blocking pool.
        let content = if text.len() > limit {
            let dir = ctx.settings.spill_dir.clone();
            let id = call.id.clone();
            let preview = text.chars().take(200).collect::<String>();
            tokio::task::spawn_blocking(move || spill::spill_if_large(text, limit, &dir, &id))
                .await
                .unwrap_or_else(|e| {
                    format!("{preview}…\n[Truncated: the result could not be saved: {e}]")
                })
        } else {
            text
        };
        ToolOutcome {
            content,
            ok,
            summary,
            duration_ms: started.elapsed().as_millis() as u64,
        }
    }

    async fn run(&self, call: &ToolCall, ctx: &ToolContext) -> Result<Value, ToolError> {
        let Some(tool) = self.get(&call.name) else {
            return Err(ToolError::Arguments(format!(
                "Unknown tool: {}. Available tools: {}",
                call.name,
                self.names().join(", ")
            )));
        };
        let mut args = call.parsed_arguments().map_err(ToolError::Arguments)?;
        if !args.is_object() {
            return Err(ToolError::Arguments(format!(
                "the arguments of `{}` must be a JSON object",
                call.name
            )));
        }
        if let Some(parameters) = tool.schema().get("parameters") {
            coerce::coerce_arguments(&mut args, parameters);
        }
        let call_future = tool.call(args, ctx);
        tokio::pin!(call_future);
        tokio::select! {
            result = &mut call_future => result,
            () = ctx.cancel.cancelled() => {
                // Tools that watch the token stop their work and say what they did; give them
                // a moment before abandoning the call.
                tokio::time::timeout(CANCEL_GRACE, call_future)
                    .await
                    .unwrap_or(Err(ToolError::Interrupted))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// Only reads run before their request is stored; every other tool, and any new one by
    /// default, waits for the commit.
    #[test]
    fn only_reads_are_without_effects() {
        let tools = super::super::builtin_tools();
        let pure: Vec<&str> = tools
            .iter()
            .filter(|tool| !tool.has_effects(&json!({})))
            .map(|tool| tool.name())
            .collect();
        assert_eq!(
            pure,
            [
                "read_file",
                "search_files",
                "todo",
                "session_search",
                "vision_analyze"
            ]
        );
    }

    /// Two sessions with the same tools hold the same schemas, not two copies; a schema that
    /// differs is not mistaken for another.
    #[test]
    fn toolboxes_share_equal_schemas() {
        let first = super::Toolbox::of(super::super::builtin_tools());
        let second = super::Toolbox::of(super::super::builtin_tools());
        assert!(!first.schemas().is_empty());
        for (a, b) in first.schemas().iter().zip(second.schemas()) {
            assert!(std::sync::Arc::ptr_eq(a, b), "{} copied", a.name);
        }
        let mut changed = (*first.schemas()[0]).clone();
        changed.description.push_str(" (changed)");
        let changed = super::shared(changed);
        assert!(!std::sync::Arc::ptr_eq(&changed, &first.schemas()[0]));
        assert!(changed.description.ends_with("(changed)"));
    }
}
