//! OpenAI function schemas for the `terminal` and `process` tools: Python's
//! parameter names, types, enums and required lists with short descriptions.

use serde_json::{Value, json};

/// The `terminal` tool's function object (`name`, `description`, `parameters`).
pub fn terminal_schema() -> Value {
    json!({
        "name": "terminal",
        "description": "Run a bash command on the local machine. Each call starts a fresh shell: cd/export do not persist, use workdir. \
    Prefer read_file/search_files/patch/write_file over cat/grep/find/sed/echo for files; use terminal for builds, installs, git, scripts, network. \
    Foreground returns as soon as the command ends; raise timeout for long builds. Output is truncated (head+tail). \
    Servers/watchers and long jobs: background=true (never nohup/setsid/trailing &), then process(action=poll/wait/log/kill); \
    for bounded jobs also set notify_on_complete=true. Pipe pagers to cat; no interactive editors.",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "background": {
                    "type": "boolean",
                    "description": "Run as a tracked background process; returns session_id"
                },
                "timeout": {
                    "type": "integer",
                    "description": "Seconds (default 180, foreground max 600)",
                    "minimum": 1
                },
                "workdir": {"type": "string", "description": "Absolute working directory"},
                "pty": {"type": "boolean", "description": "Pseudo-terminal for interactive CLIs"},
                "notify_on_complete": {
                    "type": "boolean",
                    "description": "With background: notify once on exit. Not with watch_patterns"
                },
                "watch_patterns": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "With background: notify when output contains one (max 1 per 15s); only for rare signals of long-lived processes"
                }
            },
            "required": ["command"]
        }
    })
}

/// The `process` tool's function object (`name`, `description`, `parameters`).
pub fn process_schema() -> Value {
    json!({
        "name": "process",
        "description": "Manage background processes from terminal. poll: status+recent output; log: lines (default last 200); \
    wait: until exit/timeout; write: raw stdin; submit: data+Enter; close: EOF.",
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": ["list", "poll", "log", "wait", "kill", "write", "submit", "close"]
                },
                "session_id": {"type": "string", "description": "Not needed for list"},
                "data": {"type": "string"},
                "timeout": {"type": "integer", "minimum": 1},
                "offset": {"type": "integer"},
                "limit": {"type": "integer", "minimum": 1}
            },
            "required": ["action"]
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn wire_bytes(function: Value) -> usize {
        serde_json::to_string(&json!({"type": "function", "function": function}))
            .unwrap()
            .len()
    }

    fn param_names(function: &Value) -> Vec<&str> {
        let mut names: Vec<&str> = function["parameters"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        names.sort_unstable();
        names
    }

    #[test]
    fn terminal_schema_is_compact_and_matches_python_params() {
        assert!(
            wire_bytes(terminal_schema()) <= 5617 / 2,
            "{}",
            wire_bytes(terminal_schema())
        );
        let schema = terminal_schema();
        assert_eq!(
            param_names(&schema),
            [
                "background",
                "command",
                "notify_on_complete",
                "pty",
                "timeout",
                "watch_patterns",
                "workdir"
            ]
        );
        assert_eq!(schema["parameters"]["required"], json!(["command"]));
        assert_eq!(
            schema["parameters"]["properties"]["watch_patterns"]["type"],
            "array"
        );
    }

    #[test]
    fn process_schema_is_compact_and_matches_python_params() {
        assert!(
            wire_bytes(process_schema()) <= 1215 / 2,
            "{}",
            wire_bytes(process_schema())
        );
        let schema = process_schema();
        assert_eq!(
            param_names(&schema),
            ["action", "data", "limit", "offset", "session_id", "timeout"]
        );
        assert_eq!(schema["parameters"]["required"], json!(["action"]));
        assert_eq!(
            schema["parameters"]["properties"]["action"]["enum"],
            json!([
                "list", "poll", "log", "wait", "kill", "write", "submit", "close"
            ])
        );
    }
}
