//! The compact OpenAI function schema for `skill_manage`.

use serde_json::{Value, json};

/// `{"name", "description", "parameters"}` for `skill_manage`, with Hermes' parameter names,
/// types, enum and required list but short descriptions.
pub fn skill_manage_schema() -> Value {
    json!({
        "name": "skill_manage",
        "description": "Create, update or delete skills: your reusable procedures for recurring \
            tasks. New skills go to the home skills dir.\n\
            Create one when a complex task succeeded (5+ tool calls), you overcame errors, the \
            user corrected your approach, or you found a non-trivial workflow.\n\
            Patch one (prefer patch over edit) when its steps were stale or wrong or it missed a \
            pitfall you hit. Skip simple one-offs; confirm with the user before create/delete.",
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": ["create", "patch", "edit", "delete", "write_file", "remove_file"],
                    "description": "edit = full SKILL.md rewrite."
                },
                "name": {
                    "type": "string",
                    "description": "Skill name: a-z0-9 . _ - (max 64). Must exist except for create."
                },
                "content": {
                    "type": "string",
                    "description": "create/edit: full SKILL.md, YAML frontmatter (name, description) + body."
                },
                "old_string": {
                    "type": "string",
                    "description": "patch: exact text to find; unique unless replace_all."
                },
                "new_string": {
                    "type": "string",
                    "description": "patch: replacement (may be empty)."
                },
                "replace_all": {
                    "type": "boolean",
                    "description": "patch: replace every match."
                },
                "category": {
                    "type": "string",
                    "description": "create: optional subdirectory, e.g. devops."
                },
                "file_path": {
                    "type": "string",
                    "description": "write_file/remove_file: under references/, templates/, scripts/ or assets/. patch: default SKILL.md."
                },
                "file_content": {
                    "type": "string",
                    "description": "write_file: the file's content."
                },
                "absorbed_into": {
                    "type": "string",
                    "description": "delete: existing skill that absorbed this one, or \"\" if just pruned."
                }
            },
            "required": ["action", "name"]
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// Compact byte size of Hermes' `{"type":"function","function": SKILL_MANAGE_SCHEMA}`
    /// (hermes-agent 0.19.0, `display_hermes_home()` = `~/.hermes`).
    const PYTHON_SCHEMA_BYTES: usize = 4042;

    #[test]
    fn schema_is_at_most_half_of_python() {
        let wrapped = json!({"type": "function", "function": skill_manage_schema()});
        let bytes = serde_json::to_string(&wrapped).unwrap().len();
        assert!(bytes <= PYTHON_SCHEMA_BYTES / 2, "schema is {bytes} bytes");
    }

    #[test]
    fn schema_matches_python_parameters() {
        let schema = skill_manage_schema();
        let params = &schema["parameters"];
        let mut names: Vec<&str> = params["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        names.sort_unstable();
        let mut expected = vec![
            "action",
            "name",
            "content",
            "old_string",
            "new_string",
            "replace_all",
            "category",
            "file_path",
            "file_content",
            "absorbed_into",
        ];
        expected.sort_unstable();
        assert_eq!(names, expected);
        assert_eq!(params["required"], json!(["action", "name"]));
        assert_eq!(
            params["properties"]["action"]["enum"],
            json!([
                "create",
                "patch",
                "edit",
                "delete",
                "write_file",
                "remove_file"
            ])
        );
        assert_eq!(params["properties"]["replace_all"]["type"], "boolean");
        for name in &names {
            if *name != "replace_all" {
                assert_eq!(params["properties"][name]["type"], "string", "{name}");
            }
        }
    }
}
