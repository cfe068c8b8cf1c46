//! Schema byte budgets and parameter names versus Hermes.

use serde_json::{Value, json};

use super::super::schema::{skill_view_schema, skills_list_schema};

/// Compact byte counts of Hermes' `{"type":"function","function":...}` objects (hermes-agent
/// 0.19.0, measured with json.dumps(separators=(",", ":"), ensure_ascii=False)).
const PYTHON_SKILLS_LIST_BYTES: usize = 304;
const PYTHON_SKILL_VIEW_BYTES: usize = 907;

fn wrapped_len(function: &Value) -> usize {
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
fn skills_list_schema_matches_hermes_within_half_the_bytes() {
    let schema = skills_list_schema();
    assert!(
        wrapped_len(&schema) * 2 <= PYTHON_SKILLS_LIST_BYTES,
        "{}",
        wrapped_len(&schema)
    );
    assert_eq!(schema["name"], "skills_list");
    assert_eq!(param_names(&schema), ["category"]);
    assert_eq!(
        schema["parameters"]["properties"]["category"]["type"],
        "string"
    );
    // Nothing is required: an absent list says so in fewer bytes than Hermes' empty one.
    assert!(schema["parameters"].get("required").is_none());
}

#[test]
fn skill_view_schema_matches_hermes_within_half_the_bytes() {
    let schema = skill_view_schema();
    assert!(
        wrapped_len(&schema) * 2 <= PYTHON_SKILL_VIEW_BYTES,
        "{}",
        wrapped_len(&schema)
    );
    assert_eq!(schema["name"], "skill_view");
    assert_eq!(param_names(&schema), ["file_path", "name"]);
    assert_eq!(schema["parameters"]["properties"]["name"]["type"], "string");
    assert_eq!(
        schema["parameters"]["properties"]["file_path"]["type"],
        "string"
    );
    assert_eq!(schema["parameters"]["required"], json!(["name"]));
}
