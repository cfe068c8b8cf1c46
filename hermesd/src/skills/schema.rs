//! Compact OpenAI function schemas for `skills_list` and `skill_view` (Hermes' parameter names,
//! types and required lists; shorter descriptions).

use serde_json::{Value, json};

/// Schema of `skills_list`. The names say enough, so it carries no descriptions: Hermes' schema
/// is 304 compact bytes and ours must stay within half of that.
pub fn skills_list_schema() -> Value {
    json!({
        "name": "skills_list",
        "parameters": {
            "type": "object",
            "properties": {"category": {"type": "string"}},
        },
    })
}

/// Schema of `skill_view`.
pub fn skill_view_schema() -> Value {
    json!({
        "name": "skill_view",
        "description": "Load a skill: SKILL.md plus a list of its linked files. Call again with file_path to read one of them.",
        "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Skill name"},
                "file_path": {"type": "string", "description": "Linked file, e.g. references/api.md; omit for SKILL.md"},
            },
            "required": ["name"],
        },
    })
}
