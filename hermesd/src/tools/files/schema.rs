//! OpenAI function schemas for the file tools: Hermes' parameter names,
//! types, enums and required lists with short descriptions.

use serde_json::{Value, json};

/// Schema of `read_file`.
pub fn read_file_schema() -> Value {
    json!({
        "name": "read_file",
        "description": "Read a text file as 'LINE|text' lines. Long reads are cut; \
            continue with the offset in the hint. Suggests names if not found. No images/binaries.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path (absolute, relative or ~/)"},
                "offset": {"type": "integer", "description": "First line, 1-based (default 1)"},
                "limit": {"type": "integer", "description": "Max lines (default 500, max 2000)"}
            },
            "required": ["path"]
        }
    })
}

/// Schema of `write_file`.
pub fn write_file_schema() -> Value {
    json!({
        "name": "write_file",
        "description": "Create or fully overwrite a file (parent dirs are created). \
            Use patch for partial edits.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path"},
                "content": {"type": "string", "description": "Complete new file content"},
                "cross_profile": {
                    "type": "boolean",
                    "description": "Allow writing another Hermes profile's skills/plugins/cron/memories; \
                        only when the user asked (default false)"
                }
            },
            "required": ["path", "content"]
        }
    })
}

/// Schema of `search_files`.
pub fn search_files_schema() -> Value {
    json!({
        "name": "search_files",
        "description": "Search file contents by regex, or find files by name glob (newest first). \
            Ripgrep-based, honours .gitignore; use instead of grep/find/ls.",
        "parameters": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regex; for target=files a glob like *.py"},
                "target": {"type": "string", "enum": ["content", "files"]},
                "path": {"type": "string", "description": "Dir or file (default .)"},
                "file_glob": {"type": "string", "description": "Only files matching this glob"},
                "limit": {"type": "integer", "description": "Default 50"},
                "offset": {"type": "integer", "description": "Skip N results"},
                "output_mode": {
                    "type": "string",
                    "enum": ["content", "files_only", "count"],
                    "description": "Lines, paths, or per-file counts"
                },
                "context": {"type": "integer", "description": "Lines around matches"}
            },
            "required": ["pattern"]
        }
    })
}
