//! OpenAI function schema of the `patch` tool (Hermes' parameters, compact descriptions).

use serde_json::{Value, json};

/// The `{"name", "description", "parameters"}` object for the `patch` tool.
pub fn patch_schema() -> Value {
    json!({
        "name": "patch",
        "description": "Edit files; returns a diff. mode=replace: old_string -> new_string in \
                        path (whitespace-tolerant match). mode=patch: V4A multi-file patch.",
        "parameters": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["replace", "patch"], "default": "replace"},
                "path": {"type": "string", "description": "File (replace)"},
                "old_string": {
                    "type": "string",
                    "description": "Text to find; must be unique (add context)"
                },
                "new_string": {"type": "string", "description": "Replacement; '' deletes"},
                "replace_all": {"type": "boolean", "description": "Replace every match"},
                "patch": {
                    "type": "string",
                    "description": "*** Begin Patch\n*** Update File: a.py\n@@ def f @@\n ctx\n-old\n+new\n*** Add File: b.py\n+text\n*** Delete File: c.py\n*** Move File: d.py -> e.py\n*** End Patch"
                },
                "cross_profile": {
                    "type": "boolean",
                    "description": "Edit another Hermes profile's files (if user asked)"
                }
            },
            "required": ["mode"]
        }
    })
}
