//! Tests of the `patch` tool schema.

use serde_json::json;

use super::super::patch_schema;

/// Bytes of Python's compact `{"type":"function","function":PATCH_SCHEMA}`.
const PYTHON_SCHEMA_BYTES: usize = 1872;

#[test]
fn schema_is_at_most_half_of_pythons() {
    let wrapped = json!({"type": "function", "function": patch_schema()});
    let bytes = serde_json::to_string(&wrapped).unwrap().len();
    assert!(bytes <= PYTHON_SCHEMA_BYTES / 2, "{bytes} bytes");
}

#[test]
fn schema_has_pythons_parameters() {
    let schema = patch_schema();
    assert_eq!(schema["name"], "patch");
    let params = &schema["parameters"];
    let mut names: Vec<&str> = params["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "cross_profile",
            "mode",
            "new_string",
            "old_string",
            "patch",
            "path",
            "replace_all"
        ]
    );
    assert_eq!(params["required"], json!(["mode"]));
    assert_eq!(
        params["properties"]["mode"]["enum"],
        json!(["replace", "patch"])
    );
    for (name, kind) in [
        ("replace_all", "boolean"),
        ("cross_profile", "boolean"),
        ("patch", "string"),
    ] {
        assert_eq!(params["properties"][name]["type"], kind);
    }
}
