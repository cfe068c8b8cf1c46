//! Frontmatter delimiter, BOM and error handling.

use serde_yaml::Value;

use super::super::frontmatter::{FrontmatterError, parse};

#[test]
fn no_frontmatter_gives_empty_mapping_and_whole_text() {
    let (fm, body) = parse("# Title\nbody\n").unwrap();
    assert!(fm.is_empty());
    assert_eq!(body, "# Title\nbody\n");
}

#[test]
fn bom_is_ignored() {
    let (fm, body) = parse("\u{feff}---\nname: x\n---\nbody").unwrap();
    assert_eq!(fm.get("name"), Some(&Value::from("x")));
    assert_eq!(body, "body");
    let (fm, body) = parse("\u{feff}# plain").unwrap();
    assert!(fm.is_empty());
    assert_eq!(body, "# plain");
}

#[test]
fn closing_delimiter_swallows_trailing_blank_lines_like_hermes() {
    let (fm, body) = parse("---\na: 1\n---  \n\n\nbody\n").unwrap();
    assert_eq!(fm.get("a"), Some(&Value::from(1)));
    assert_eq!(body, "body\n");
}

#[test]
fn dashes_followed_by_text_do_not_close() {
    assert_eq!(parse("---\na: 1\n----\n"), Err(FrontmatterError::NotClosed));
    assert_eq!(parse("---\na: 1\n---x\n"), Err(FrontmatterError::NotClosed));
    assert_eq!(
        parse("---\na: 1\n--- trailing\n"),
        Err(FrontmatterError::NotClosed)
    );
}

#[test]
fn crlf_frontmatter_parses() {
    let (fm, body) = parse("---\r\nname: c\r\ntags: [a, b]\r\n---\r\nbody\r\n").unwrap();
    assert_eq!(fm.get("name"), Some(&Value::from("c")));
    assert_eq!(body, "body\r\n");
}

#[test]
fn empty_frontmatter_is_an_empty_mapping() {
    let (fm, body) = parse("---\n---\nbody").unwrap();
    assert!(fm.is_empty());
    assert_eq!(body, "body");
}

#[test]
fn unclosed_is_an_error() {
    let err = parse("---\nname: x\n").unwrap_err();
    assert_eq!(err, FrontmatterError::NotClosed);
    assert!(err.to_string().contains("never closed"));
}

#[test]
fn yaml_error_reports_the_file_line() {
    let err = parse("---\nname: ok\ndescription: [oops\n---\n").unwrap_err();
    match &err {
        FrontmatterError::Yaml { line, .. } => {
            assert!(matches!(line, Some(3) | Some(4)), "{line:?}")
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("frontmatter is not valid YAML (line "),
        "{err}"
    );
}

#[test]
fn non_mapping_is_an_error_naming_the_kind() {
    let err = parse("---\n- a\n- b\n---\n").unwrap_err();
    assert_eq!(err, FrontmatterError::NotMapping { found: "a list" });
    assert!(err.to_string().contains("found a list"));
    let err = parse("---\njust text\n---\n").unwrap_err();
    assert_eq!(err, FrontmatterError::NotMapping { found: "a string" });
}

#[test]
fn unknown_keys_are_kept() {
    let (fm, _) = parse("---\nname: x\nauthor: me\nextra: {a: 1}\n---\n").unwrap();
    assert_eq!(fm.get("author"), Some(&Value::from("me")));
    assert!(fm.get("extra").unwrap().is_mapping());
}
