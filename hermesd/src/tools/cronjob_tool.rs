//! `cronjob`: the agent schedules work when the user asks for it in chat — create, list, update,
//! pause, resume, remove and run jobs. This is the tool's face (name, schema); the work is cron's
//! (`cron/tool.rs`), reached through the narrow [`CronHandle`] in the tool services. Cron runs
//! do not get this tool (a job never schedules jobs).

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{CronOrigin, Tool, ToolContext, ToolError};

/// The actions the tool takes.
pub const CRONJOB_ACTIONS: [&str; 7] = [
    "create", "list", "update", "pause", "resume", "remove", "run",
];
const ACTIONS: [&str; 7] = CRONJOB_ACTIONS;

pub struct CronjobTool;

#[async_trait]
impl Tool for CronjobTool {
    fn name(&self) -> &'static str {
        "cronjob"
    }

    fn toolset(&self) -> &'static str {
        "cronjob"
    }

    fn schema(&self) -> Value {
        json!({
            "name": "cronjob",
            "description": "Schedule work for later or on a repeat when the user asks (reminders, \
                daily briefings, periodic checks). Each run is a fresh session with no chat \
                history, so the prompt must be self-contained. Actions: create (schedule and \
                prompt required), list, update, pause, resume, remove, run (now). The result is \
                delivered back to this chat by default.",
            "parameters": {
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ACTIONS},
                    "job_id": {"type": "string", "description": "For update/pause/resume/remove/run: the job's id or name."},
                    "prompt": {"type": "string", "description": "What the agent should do at each run, self-contained."},
                    "schedule": {"type": "string", "description": "'every 30m', 'every 2h' (recurring); 'in 30m' or '30m' (once); '0 9 * * 1-5' (cron); '2026-12-01T09:00' (once)."},
                    "name": {"type": "string"},
                    "timezone": {"type": "string", "description": "IANA zone for cron and local times (default: the configured one)."},
                    "repeat": {"type": "integer", "description": "How many runs in all; omit for forever (a one-shot runs once)."},
                    "deliver": {"type": "string", "description": "Omit to deliver to this chat. 'local' keeps the output file only; '<platform>:<chat_id>' targets a chat."},
                    "skills": {"type": "array", "items": {"type": "string"}, "description": "Skills to load for each run."},
                    "model": {"type": "string", "description": "A model for this job instead of the default (a name, or {\"provider\", \"model\"})."},
                    "enabled_toolsets": {"type": "array", "items": {"type": "string"}, "description": "Only these toolsets in the job's runs."},
                    "workdir": {"type": "string", "description": "Absolute directory the job runs in."},
                    "script": {"type": "string", "description": "A script in ~/.hermes/scripts/ run before each run; its stdout is context for the agent (empty: the run is skipped). Empty string clears it."},
                    "no_agent": {"type": "boolean", "description": "True: no model; the script's stdout is the message. Requires script."},
                    "provider": {"type": "string", "description": "The job's own provider instead of the configured one."},

                    "missed_policy": {"type": "string", "enum": ["skip", "once", "all"], "description": "Runs missed while hermesd was down: skip (default), once (one catch-up), all."}
                },
                "required": ["action"]
            }
        })
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let origin = CronOrigin {
            platform: ctx.settings.skills.platform.clone(),
            session_id: ctx.session_id.clone(),
        };
        ctx.services.cron.cronjob(args, origin).await
    }
}
