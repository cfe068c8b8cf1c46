//! Schema byte budgets and parameter names versus the Python tools.

use serde_json::{Value, json};

use crate::tools::files::schema::{read_file_schema, search_files_schema, write_file_schema};

fn wrapped_len(function: &Value) -> usize {
    serde_json::to_string(&json!({"type": "function", "function": function}))
        .unwrap()
        .len()
}

fn parameter_names(function: &Value) -> Vec<String> {
    let mut names: Vec<String> = function["parameters"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    names.sort();
    names
}

fn check(function: Value, name: &str, python_bytes: usize, params: &[&str], required: &[&str]) {
    assert_eq!(function["name"], name);
    let len = wrapped_len(&function);
    eprintln!("{name}: {len} bytes (python {python_bytes})");
    assert!(
        len * 2 <= python_bytes,
        "{name} schema is {len} bytes, budget {}",
        python_bytes / 2
    );
    let mut expected: Vec<String> = params.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(parameter_names(&function), expected);
    assert_eq!(function["parameters"]["required"], json!(required));
}

#[test]
fn read_file_schema_is_compact_and_complete() {
    check(
        read_file_schema(),
        "read_file",
        1032,
        &["path", "offset", "limit"],
        &["path"],
    );
}

#[test]
fn write_file_schema_is_compact_and_complete() {
    check(
        write_file_schema(),
        "write_file",
        1123,
        &["path", "content", "cross_profile"],
        &["path", "content"],
    );
    assert_eq!(
        write_file_schema()["parameters"]["properties"]["cross_profile"]["type"],
        "boolean"
    );
}

#[test]
fn search_files_schema_is_compact_and_complete() {
    let schema = search_files_schema();
    let params = [
        "pattern",
        "target",
        "path",
        "file_glob",
        "limit",
        "offset",
        "output_mode",
        "context",
    ];
    check(schema.clone(), "search_files", 1715, &params, &["pattern"]);
    let props = &schema["parameters"]["properties"];
    assert_eq!(props["target"]["enum"], json!(["content", "files"]));
    assert_eq!(
        props["output_mode"]["enum"],
        json!(["content", "files_only", "count"])
    );
    for int_param in ["limit", "offset", "context"] {
        assert_eq!(props[int_param]["type"], "integer");
    }
}
