//! `delegate_task`: the agent hands self-contained pieces of work to child agents (Hermes 0.19's
//! arguments: `goal` and `context`, or `tasks: [{goal, context, role}]`). This is the tool's face
//! — its schema and the checks on its arguments; the children are the agent layer's
//! (`agent/delegation/`), reached through the narrow [`super::DelegateHandle`].

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{DelegatedTask, Tool, ToolContext, ToolError};
use crate::config::settings::MAX_TASKS_PER_CALL;

/// Tools a child never gets (Hermes' list): no further delegation unless it orchestrates, no
/// questions to the user, no writes to the user's memory, no messages or jobs in their name.
pub const DELEGATE_BLOCKED_TOOLS: [&str; 5] = [
    "delegate_task",
    "clarify",
    "memory",
    "send_message",
    "cronjob",
];

/// Characters of one goal or context the tool takes (a child's prompt stays a prompt).
const MAX_TASK_CHARS: usize = 20_000;

pub struct DelegateTaskTool;

#[async_trait]
impl Tool for DelegateTaskTool {
    fn name(&self) -> &'static str {
        "delegate_task"
    }

    fn toolset(&self) -> &'static str {
        "delegation"
    }

    fn schema(&self) -> Value {
        let role = json!({"type": "string", "enum": ["leaf", "orchestrator"]});
        json!({
            "name": "delegate_task",
            "description": "Hand self-contained subtasks to subagents that work in parallel, each \
                in its own session with your tools (minus memory, clarify, messaging, cronjob). \
                Runs in the background: this returns at once, and when all finish their \
                summaries arrive as a new message. Children know nothing of this conversation: \
                put paths, errors and constraints (and the user's language) in context. \
                Summaries are self-reports: verify side effects. role orchestrator: the child \
                may delegate one level more.",
            "parameters": {
                "type": "object",
                "properties": {
                    "goal": {"type": "string", "description": "One task: what to accomplish, self-contained."},
                    "context": {"type": "string", "description": "What the child needs to know."},
                    "tasks": {
                        "type": "array",
                        "description": "Several tasks run in parallel (goal/context/role above are then ignored).",
                        "items": {
                            "type": "object",
                            "properties": {
                                "goal": {"type": "string"},
                                "context": {"type": "string"},
                                "role": role
                            },
                            "required": ["goal"]
                        }
                    },
                    "role": role
                }
            }
        })
    }

    fn available(&self, services: &super::ToolServices) -> bool {
        services.delegation().is_some()
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let tasks = parse_tasks(&args)?;
        let Some(delegation) = ctx.services.delegation() else {
            return Err(ToolError::Failed(
                "delegation is not available in this daemon".into(),
            ));
        };
        delegation.delegate(tasks, ctx).await
    }
}

/// The tasks of a call: `tasks` when given (a JSON string of the list is taken too, as models
/// sometimes send one), else the one `goal`.
fn parse_tasks(args: &Value) -> Result<Vec<DelegatedTask>, ToolError> {
    let top_role = args.get("role").and_then(Value::as_str);
    let tasks = match args.get("tasks") {
        Some(Value::String(text)) if !text.trim().is_empty() => serde_json::from_str(text)
            .map_err(|e| ToolError::Arguments(format!("`tasks` is not a JSON list: {e}")))?,
        Some(Value::Array(list)) if !list.is_empty() => Value::Array(list.clone()),
        _ => Value::Null,
    };
    let list = match tasks {
        Value::Array(list) => list,
        Value::Null => {
            let goal = args.get("goal").and_then(Value::as_str).unwrap_or_default();
            if goal.trim().is_empty() {
                return Err(ToolError::Arguments(
                    "Provide either 'goal' (single task) or 'tasks' (batch).".into(),
                ));
            }
            vec![json!({"goal": goal, "context": args.get("context"), "role": top_role})]
        }
        _ => {
            return Err(ToolError::Arguments(
                "`tasks` must be a list of {goal, context, role}".into(),
            ));
        }
    };
    if list.len() > MAX_TASKS_PER_CALL {
        return Err(ToolError::Arguments(format!(
            "Too many tasks: {} provided; one call takes at most {MAX_TASKS_PER_CALL}. Split the work \
             into several delegate_task calls.",
            list.len()
        )));
    }
    list.iter()
        .enumerate()
        .map(|(i, task)| {
            let goal = task
                .get("goal")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .ok_or_else(|| ToolError::Arguments(format!("Task {i} is missing a 'goal'.")))?;
            let context = task
                .get("context")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|c| !c.is_empty());
            for (what, text) in [("goal", Some(goal)), ("context", context)] {
                if text.is_some_and(|t| t.chars().count() > MAX_TASK_CHARS) {
                    return Err(ToolError::Arguments(format!(
                        "Task {i}'s {what} is over {MAX_TASK_CHARS} characters; put long material \
                         in a file and name its path"
                    )));
                }
            }
            let role = task.get("role").and_then(Value::as_str).or(top_role);
            Ok(DelegatedTask {
                goal: goal.to_string(),
                context: context.map(str::to_string),
                orchestrator: role.is_some_and(|r| r.trim().eq_ignore_ascii_case("orchestrator")),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_goal_or_a_batch_with_roles() {
        let one = parse_tasks(&json!({"goal": "read", "context": "in /tmp"})).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].context.as_deref(), Some("in /tmp"));
        assert!(!one[0].orchestrator);
        let batch = parse_tasks(&json!({
            "goal": "ignored", "role": "orchestrator",
            "tasks": [{"goal": "a"}, {"goal": "b", "role": "leaf"}]
        }))
        .unwrap();
        assert_eq!(batch.len(), 2);
        assert_eq!(batch[0].goal, "a");
        assert!(batch[0].orchestrator, "the top-level role applies");
        assert!(!batch[1].orchestrator, "a task's own role wins");
        let text = parse_tasks(&json!({"tasks": "[{\"goal\": \"x\"}]"})).unwrap();
        assert_eq!(text[0].goal, "x");
    }

    #[test]
    fn bad_calls_say_what_to_fix() {
        let empty = parse_tasks(&json!({})).unwrap_err().to_string();
        assert!(empty.contains("'goal'"), "{empty}");
        let missing = parse_tasks(&json!({"tasks": [{"goal": "a"}, {"context": "b"}]}))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("Task 1"), "{missing}");
        let many: Vec<Value> = (0..=MAX_TASKS_PER_CALL)
            .map(|i| json!({"goal": i.to_string()}))
            .collect();
        let too_many = parse_tasks(&json!({ "tasks": many }))
            .unwrap_err()
            .to_string();
        assert!(too_many.contains("Too many tasks"), "{too_many}");
        let long = "x".repeat(MAX_TASK_CHARS + 1);
        assert!(parse_tasks(&json!({ "goal": long })).is_err());
    }
}
