//! Tests of the comment-preserving editor: exact output strings, refusals, errors.
use super::*;

const CONFIG: &str = "\
# Hermes configuration
model:
  default: gpt-4o   # my model
  temperature: 0.2

  # fallback: gpt-4o-mini

# Logging
logging:
  level: info
";

fn set_raw(text: &str, key: &str, raw: &str) -> Result<String, EditError> {
    set(text, key, &parse_cli_value(raw))
}

fn ok(text: &str, key: &str, raw: &str) -> String {
    match set_raw(text, key, raw) {
        Ok(new_text) => new_text,
        Err(err) => panic!("set {key}={raw} failed: {err}"),
    }
}

/// Asserts a refusal and returns (reason, manual).
fn refused(text: &str, key: &str, raw: &str) -> (String, String) {
    match set_raw(text, key, raw) {
        Err(EditError::Refused { reason, manual }) => (reason, manual),
        other => panic!("expected a refusal for {key}={raw}, got {other:?}"),
    }
}

#[test]
fn replaces_scalar_keeping_comment_and_everything_else() {
    let expected = CONFIG.replace(
        "default: gpt-4o   # my model",
        "default: claude-3   # my model",
    );
    assert_eq!(ok(CONFIG, "model.default", "claude-3"), expected);
}

#[test]
fn replaces_top_level_and_deeply_nested_scalars() {
    let text = "port: 8080 # listen\na:\n  b:\n    c: old\n    d: 1\n  e: 2\n";
    assert_eq!(
        ok(text, "port", "9090"),
        "port: 9090 # listen\na:\n  b:\n    c: old\n    d: 1\n  e: 2\n"
    );
    assert_eq!(
        ok(text, "a.b.c", "new"),
        "port: 8080 # listen\na:\n  b:\n    c: new\n    d: 1\n  e: 2\n"
    );
}

#[test]
fn replaces_quoted_values_containing_hash_and_colon() {
    let text = "name: \"a # b: c\"  # real comment\nother: 'it''s # here'\n";
    assert_eq!(
        ok(text, "name", "plain"),
        "name: plain  # real comment\nother: 'it''s # here'\n"
    );
    assert_eq!(
        ok(text, "other", "x"),
        "name: \"a # b: c\"  # real comment\nother: x\n"
    );
    let url = "url: http://host/#frag # note\n";
    assert_eq!(ok(url, "url", "http://other"), "url: http://other # note\n");
}

#[test]
fn replaces_flow_value_and_null_value() {
    let text = "tags: [a, \"b]\"] # list\nempty:   # nothing yet\nlast: 1\n";
    assert_eq!(
        ok(text, "tags", "[c]"),
        "tags: [c] # list\nempty:   # nothing yet\nlast: 1\n"
    );
    assert_eq!(
        ok(text, "empty", "5"),
        "tags: [a, \"b]\"] # list\nempty: 5   # nothing yet\nlast: 1\n"
    );
}

#[test]
fn inserts_after_last_sibling_before_trailing_comments_and_blanks() {
    let expected = CONFIG.replace(
        "  temperature: 0.2\n",
        "  temperature: 0.2\n  provider: openai\n",
    );
    assert_eq!(ok(CONFIG, "model.provider", "openai"), expected);
}

#[test]
fn inserts_after_nested_children_of_last_sibling() {
    let text = "a:\n    b:\n        c: 1\n    # tail\nz: 0\n";
    assert_eq!(
        ok(text, "a.d", "2"),
        "a:\n    b:\n        c: 1\n    d: 2\n    # tail\nz: 0\n"
    );
}

#[test]
fn inserts_beneath_empty_parent() {
    let text = "model:\n# comment\nlogging:\n  level: info\n";
    assert_eq!(
        ok(text, "model.default", "gpt-4o"),
        "model:\n  default: gpt-4o\n# comment\nlogging:\n  level: info\n"
    );
    let four = "a:\n    x: 1\nmodel:  # set me\n";
    assert_eq!(
        ok(four, "model.default", "m"),
        "a:\n    x: 1\nmodel:  # set me\n    default: m\n"
    );
}

#[test]
fn creates_missing_parents() {
    assert_eq!(
        ok(CONFIG, "tools.web.enabled", "true"),
        format!("{CONFIG}tools:\n  web:\n    enabled: true\n")
    );
    let expected = CONFIG.replace(
        "  temperature: 0.2\n",
        "  temperature: 0.2\n  limits:\n    max: 5\n",
    );
    assert_eq!(ok(CONFIG, "model.limits.max", "5"), expected);
}

#[test]
fn top_level_insert_appends_at_end_of_file() {
    assert_eq!(
        ok(CONFIG, "debug", "false"),
        format!("{CONFIG}debug: false\n")
    );
    let with_start = "---\na: 1\n\n# end\n";
    assert_eq!(ok(with_start, "b", "2"), "---\na: 1\n\n# end\nb: 2\n");
}

#[test]
fn empty_and_comment_only_files() {
    assert_eq!(ok("", "a", "1"), "a: 1\n");
    assert_eq!(
        ok("", "model.default", "gpt-4o"),
        "model:\n  default: gpt-4o\n"
    );
    assert_eq!(
        ok("# only comments\n\n", "a", "1"),
        "# only comments\n\na: 1\n"
    );
    assert_eq!(ok("# no newline", "a", "1"), "# no newline\na: 1");
}

#[test]
fn keeps_missing_trailing_newline() {
    assert_eq!(ok("a: 1\nb: 2", "b", "3"), "a: 1\nb: 3");
    assert_eq!(ok("a: 1\nb: 2", "c", "3"), "a: 1\nb: 2\nc: 3");
    assert_eq!(
        ok("a: 1\nb:\n  c: 2", "b.d", "3"),
        "a: 1\nb:\n  c: 2\n  d: 3"
    );
    assert_eq!(ok("a: 1\nb:", "b.d", "3"), "a: 1\nb:\n  d: 3");
    assert_eq!(ok("a: 1\nb:", "b", "3"), "a: 1\nb: 3");
}

#[test]
fn keeps_crlf_line_endings() {
    let text = "a:\r\n  b: 1\r\nc: 2\r\n";
    assert_eq!(ok(text, "a.b", "5"), "a:\r\n  b: 5\r\nc: 2\r\n");
    assert_eq!(ok(text, "a.d", "5"), "a:\r\n  b: 1\r\n  d: 5\r\nc: 2\r\n");
}

#[test]
fn quotes_values_that_need_it() {
    assert_eq!(ok("", "a", "yes"), "a: 'yes'\n");
    assert_eq!(ok("", "a", "'42'"), "a: '42'\n");
    assert_eq!(ok("", "a", "42"), "a: 42\n");
    assert_eq!(ok("", "a", "'a: b'"), "a: 'a: b'\n");
    assert_eq!(ok("", "a", "a: b"), "a: 'a: b'\n");
    assert_eq!(ok("", "a", "x # y"), "a: 'x # y'\n");
    assert_eq!(ok("", "a", "null"), "a: null\n");
    assert_eq!(ok("", "a", ""), "a: ''\n");
    let multi_line = set("", "a", &Value::String("one\ntwo \"q\"".into()));
    assert_eq!(
        multi_line.ok().as_deref(),
        Some("a: \"one\\ntwo \\\"q\\\"\"\n")
    );
    assert_eq!(
        get(&ok("", "a", "yes"), "a").ok().flatten(),
        Some(Value::String("yes".into()))
    );
}

#[test]
fn writes_collections_in_flow_style() {
    assert_eq!(ok("a: 1\n", "a", "[x, 2, 'yes']"), "a: [x, 2, 'yes']\n");
    assert_eq!(ok("a: 1\n", "a", "{k: v, m: [1]}"), "a: {k: v, m: [1]}\n");
    // YAML 1.1 booleans are quoted even though serde_yaml would read them as strings.
    assert_eq!(ok("a: 1\n", "a", "[y, n, On]"), "a: ['y', 'n', 'On']\n");
    assert_eq!(
        ok("a: 1\n", "a", "['x, y', 'k: v', '[z]']"),
        "a: [\"x, y\", 'k: v', '[z]']\n"
    );
    assert_eq!(ok("a: 1\n", "a", "[]"), "a: []\n");
}

#[test]
fn unchanged_value_keeps_original_spelling() {
    let text = "model:\n  default: \"gpt-4o\" # quoted\n";
    assert_eq!(ok(text, "model.default", "gpt-4o"), text);
}

#[test]
fn numeric_quoted_and_spaced_keys() {
    let text = "ports:\n  8080: web\n\"odd key\": 1\n";
    assert_eq!(
        ok(text, "ports.8080", "api"),
        "ports:\n  8080: api\n\"odd key\": 1\n"
    );
    assert_eq!(
        ok(text, "odd key", "2"),
        "ports:\n  8080: web\n\"odd key\": 2\n"
    );
    assert_eq!(
        ok(text, "ports.9090", "x"),
        "ports:\n  8080: web\n  '9090': x\n\"odd key\": 1\n"
    );
}

#[test]
fn sequences_at_key_indent_are_skipped() {
    let text = "tools:\n- a\n- b\nmodel:\n  default: x\n";
    assert_eq!(
        ok(text, "model.default", "z"),
        "tools:\n- a\n- b\nmodel:\n  default: z\n"
    );
    assert_eq!(ok(text, "other", "1"), format!("{text}other: 1\n"));
    assert!(
        refused(text, "tools", "[c]")
            .0
            .contains("`tools` holds a list")
    );
}

#[test]
fn refuses_replacing_block_mapping_or_list() {
    let (reason, manual) = refused(CONFIG, "model", "gpt-4o");
    assert_eq!(reason, "`model` holds a mapping");
    assert_eq!(manual, "model: gpt-4o\n");
    let list = "tools:\n  - web\n  - shell\n";
    assert_eq!(refused(list, "tools", "[web]").0, "`tools` holds a list");
}

#[test]
fn refuses_scalar_parent() {
    let (reason, manual) = refused("model: gpt-4o\n", "model.default", "gpt-4o");
    assert_eq!(reason, "`model` is a string, not a block mapping");
    assert_eq!(manual, "model:\n  default: gpt-4o\n");
    assert!(
        refused("model: null\n", "model.default", "x")
            .0
            .contains("is null")
    );
}

#[test]
fn refuses_flow_parent() {
    let (reason, _) = refused("model: {default: x}\n", "model.default", "y");
    assert_eq!(
        reason,
        "`model` is a flow-style mapping, not a block mapping"
    );
    assert!(
        refused("model: {}\n", "model.default", "y")
            .0
            .contains("flow-style")
    );
}

#[test]
fn refuses_multi_line_scalars() {
    assert!(
        refused("a: |\n  text\nb: 1\n", "a", "x")
            .0
            .contains("multi-line")
    );
    assert!(
        refused("a: >-\n  text\n", "a", "x")
            .0
            .contains("multi-line")
    );
    assert!(
        refused("a: plain\n  continued\nb: 1\n", "a", "x")
            .0
            .contains("next line")
    );
    assert!(
        refused("a: \"quoted\n  continued\"\nb: 1\n", "a", "x")
            .0
            .contains("next line")
    );
    assert!(refused("a: [1,\n  2]\n", "a", "x").0.contains("next line"));
    assert!(
        refused("a:\n  text on next line\n", "a", "x")
            .0
            .contains("several lines")
    );
}

#[test]
fn refuses_anchors_aliases_and_tags() {
    let text = "base: &base\n  x: 1\nother: *base\ntagged: !!str 5\n";
    assert!(refused(text, "base.y", "2").0.contains("anchor"));
    assert!(refused(text, "other", "2").0.contains("alias"));
    assert!(refused(text, "tagged", "2").0.contains("tag"));
}

#[test]
fn refuses_keys_inside_sequence_items() {
    let text = "providers:\n  - name: a\n    models: [x]\n";
    let (reason, manual) = refused(text, "providers.models", "[y]");
    assert_eq!(reason, "`providers` is a list, not a mapping");
    assert_eq!(manual, "providers:\n  models:\n  - y\n");
}

#[test]
fn refuses_multiple_documents_and_unusual_lines() {
    assert!(
        refused("a: 1\n---\nb: 2\n", "a", "3")
            .0
            .contains("document marker")
    );
    assert!(
        refused("? complex\n: value\n", "a", "3")
            .0
            .contains("line 1")
    );
    assert!(refused("- a\n- b\n", "a", "3").0.contains("not a mapping"));
}

#[test]
fn edits_around_block_scalar_siblings() {
    let text = "agent:\n  prompt: |\n    You are helpful.\n    # Rules: none\n  name: x\n\nz: 1\n";
    assert_eq!(
        ok(text, "agent.name", "bot"),
        "agent:\n  prompt: |\n    You are helpful.\n    # Rules: none\n  name: bot\n\nz: 1\n"
    );
    let last = "agent:\n  prompt: |\n    You are helpful.\n\nz: 1\n";
    assert_eq!(
        ok(last, "agent.name", "bot"),
        "agent:\n  prompt: |\n    You are helpful.\n  name: bot\n\nz: 1\n"
    );
}

#[test]
fn tabs_after_colon_and_indented_top_level() {
    assert_eq!(ok("a:\tb # c\n", "a", "d"), "a:\td # c\n");
    assert_eq!(ok("  a: 1\n  b: 2\n", "c", "3"), "  a: 1\n  b: 2\n  c: 3\n");
}

#[test]
fn safety_net_catches_wrong_line_edits() {
    // Inserting after "hello" would move the kept trailing blank line out of the block scalar.
    let keep = "a:\n  text: |+\n    hello\n\nb: 1\n";
    assert!(refused(keep, "a.x", "1").0.contains("expected result"));
    // A `#` line inside a block scalar looks like a comment to the line scanner.
    let script = "a:\n  script: |\n    echo hi\n    # not a comment\n";
    assert!(refused(script, "a.x", "1").0.contains("expected result"));
}

#[test]
fn malformed_input_reports_location() {
    let text = "a: 1\nb:\n  - x\n c: 2\n";
    match set_raw(text, "a", "2") {
        Err(
            err @ EditError::Malformed {
                line: Some(4),
                column: Some(2),
                ..
            },
        ) => {
            assert_eq!(
                err.to_string(),
                "does not parse at line 4, column 2: did not find expected key, while parsing a block mapping"
            );
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
    assert!(matches!(
        get("a: [1,\n", "a"),
        Err(EditError::Malformed { line: Some(2), .. })
    ));
}

#[test]
fn rejects_bad_keys() {
    for key in ["", "a..b", ".a", "a.", "a. b"] {
        assert!(
            matches!(get("a: 1\n", key), Err(EditError::BadKey(_))),
            "{key:?}"
        );
        assert!(
            matches!(set_raw("a: 1\n", key, "1"), Err(EditError::BadKey(_))),
            "{key:?}"
        );
    }
    let err = set_raw("", "a..b", "1").err().map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("invalid key: `a..b` has an empty segment")
    );
}

#[test]
fn get_finds_present_absent_and_nested_keys() {
    let found = |key| get(CONFIG, key).ok().flatten();
    assert_eq!(found("model.default"), Some(Value::String("gpt-4o".into())));
    assert_eq!(found("logging.level"), Some(Value::String("info".into())));
    assert_eq!(found("model.temperature"), serde_yaml::from_str("0.2").ok());
    assert!(matches!(found("model"), Some(Value::Mapping(_))));
    assert_eq!(found("model.missing"), None);
    assert_eq!(found("model.default.deeper"), None);
    assert_eq!(found("nothing"), None);
    assert_eq!(get("", "a").ok().flatten(), None);
    assert_eq!(
        get("ports:\n  8080: web\n", "ports.8080").ok().flatten(),
        Some(Value::String("web".into()))
    );
}

#[test]
fn parse_cli_value_types() {
    assert_eq!(
        parse_cli_value("42"),
        serde_yaml::from_str::<Value>("42").unwrap()
    );
    assert_eq!(parse_cli_value("true"), Value::Bool(true));
    assert_eq!(parse_cli_value("null"), Value::Null);
    assert_eq!(parse_cli_value("~"), Value::Null);
    for raw in [
        "a b", "", "a: b", "- a", "x # y", "#x", "&a x", "!!int 3", "|",
    ] {
        assert_eq!(parse_cli_value(raw), Value::String(raw.into()), "{raw:?}");
    }
    assert_eq!(parse_cli_value("'x'"), Value::String("x".into()));
    assert_eq!(parse_cli_value("'42'"), Value::String("42".into()));
    assert!(matches!(parse_cli_value("[a, b]"), Value::Sequence(s) if s.len() == 2));
    assert!(matches!(parse_cli_value("{x: 1}"), Value::Mapping(_)));
}

#[test]
fn display_messages() {
    let refused = EditError::Refused {
        reason: "`model` is a string".into(),
        manual: "model:\n  default: x\n".into(),
    };
    assert_eq!(
        refused.to_string(),
        "cannot set it safely (`model` is a string); add this by hand:\nmodel:\n  default: x"
    );
    let malformed = EditError::Malformed {
        message: "bad".into(),
        line: None,
        column: None,
    };
    assert_eq!(malformed.to_string(), "does not parse: bad");
}

#[test]
fn round_trip_through_a_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    assert_eq!(
        read_config(&path).unwrap(),
        "",
        "a missing file reads as empty"
    );
    write_atomically(&path, CONFIG).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "a new config is private");
    let text = read_config(&path).unwrap();
    let edited = set(&text, "logging.level", &parse_cli_value("debug")).unwrap();
    write_atomically(&path, &edited).unwrap();
    let reread = read_config(&path).unwrap();
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
    assert_eq!(reread, CONFIG.replace("level: info", "level: debug"));
    assert_eq!(
        get(&reread, "logging.level").unwrap(),
        Some(Value::String("debug".into()))
    );
}

#[test]
fn remove_takes_a_key_and_its_block_and_keeps_the_rest() {
    let text = "# mine\nmcp_servers:\n  fs:\n    command: npx\n    args:\n      - -y\n  web: {url: http://x}\nmodel: m # keep\n";
    let out = super::remove(text, "mcp_servers.fs").unwrap().unwrap();
    assert_eq!(
        out,
        "# mine\nmcp_servers:\n  web: {url: http://x}\nmodel: m # keep\n"
    );
    let out = super::remove(&out, "mcp_servers.web").unwrap().unwrap();
    assert_eq!(out, "# mine\nmcp_servers:\nmodel: m # keep\n");
    assert!(super::remove(text, "mcp_servers.nope").unwrap().is_none());
}
