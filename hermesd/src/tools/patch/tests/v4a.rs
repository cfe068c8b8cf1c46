//! Tests of the V4A parser and of `touched_paths`.

use super::super::v4a::{FileOp, HunkLine, parse, touched_paths};

#[test]
fn parses_every_operation_kind() {
    let text = "intro text\n*** Begin Patch\n*** Update File: src/a.py\n*** Move to: src/b.py\n@@ def f(): @@\n ctx\n-old\n+new\n\n unrelated\n*** End of File\n*** Add File: new.txt\n+one\n\n+two\n*** Delete File: gone.txt\n*** Move File: x.txt -> y/x.txt\n*** End Patch\ntrailing";
    let patch = parse(text).unwrap();
    assert_eq!(patch.ops.len(), 4);
    let FileOp::Update {
        path,
        move_to,
        hunks,
        line,
    } = &patch.ops[0]
    else {
        panic!("update expected")
    };
    assert_eq!(
        (path.as_str(), move_to.as_deref(), *line),
        ("src/a.py", Some("src/b.py"), 3)
    );
    assert_eq!(hunks.len(), 1);
    assert_eq!(hunks[0].context_hint.as_deref(), Some("def f():"));
    assert!(hunks[0].end_of_file);
    assert_eq!(
        hunks[0].lines,
        vec![
            HunkLine::Context("ctx".into()),
            HunkLine::Remove("old".into()),
            HunkLine::Add("new".into()),
            HunkLine::Context(String::new()),
            HunkLine::Context("unrelated".into()),
        ]
    );
    assert_eq!(
        patch.ops[1],
        FileOp::Add {
            path: "new.txt".into(),
            content: "one\n\ntwo\n".into(),
            line: 12
        }
    );
    assert_eq!(
        patch.ops[2],
        FileOp::Delete {
            path: "gone.txt".into(),
            line: 16
        }
    );
    let FileOp::Update {
        path,
        move_to,
        hunks,
        ..
    } = &patch.ops[3]
    else {
        panic!("move expected")
    };
    assert_eq!(
        (path.as_str(), move_to.as_deref(), hunks.len()),
        ("x.txt", Some("y/x.txt"), 0)
    );
}

#[test]
fn hunks_split_on_headers_and_drop_trailing_blank_lines() {
    let text =
        "*** Begin Patch\n*** Update File: a\n@@ one\n-a\n+b\n\n@@\n-c\n+d\n\n\n*** End Patch\n";
    let patch = parse(text).unwrap();
    let FileOp::Update { hunks, .. } = &patch.ops[0] else {
        panic!("update expected")
    };
    assert_eq!(hunks.len(), 2);
    assert_eq!(hunks[0].context_hint.as_deref(), Some("one"));
    assert_eq!(hunks[1].context_hint, None);
    assert_eq!(hunks[1].lines.len(), 2);
    assert_eq!(hunks[1].line, 7);
}

fn error_of(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn malformed_patches_report_line_and_reason() {
    assert_eq!(
        error_of("*** Begin Patch\nhello\n*** Update File: a\n-x\n"),
        "line 2: expected a file header ('*** Update File:', '*** Add File:', '*** Delete File:' or '*** Move File:'), found 'hello'"
    );
    assert_eq!(
        error_of("*** Begin Patch\n*** Add File: a\n+ok\nnot added\n*** End Patch"),
        "line 4: every line of an '*** Add File:' section must start with '+'"
    );
    assert_eq!(
        error_of("*** Begin Patch\n*** Update File: a\n*** Add File: b\n+x\n"),
        "line 2: '*** Update File: a' has no hunks"
    );
    assert_eq!(
        error_of("*** Begin Patch\n*** Frobnicate: a\n"),
        "line 2: unknown header '*** Frobnicate: a'"
    );
    assert_eq!(
        error_of("*** Begin Patch\n*** Move File: a\n"),
        "line 2: '*** Move File:' needs '<from> -> <to>'"
    );
    assert_eq!(
        error_of("*** Begin Patch\n*** Delete File: a\n-x\n"),
        "line 3: unexpected line after '*** Delete File:' (only a new '***' header may follow)"
    );
    assert_eq!(
        error_of("*** Begin Patch\n*** Add File: a\n*** Move to: b\n"),
        "line 3: '*** Move to:' must follow '*** Update File:'"
    );
    assert_eq!(
        error_of("*** Begin Patch\n*** Update File:\n-x\n"),
        "line 2: missing file path after '*** Update File:'"
    );
    assert!(error_of("*** Begin Patch\n*** End Patch\n").starts_with("no file operations found"));
}

#[test]
fn crlf_patch_text_is_accepted() {
    let patch = parse("*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** End Patch\r\n").unwrap();
    assert_eq!(
        patch.ops[0],
        FileOp::Add {
            path: "a".into(),
            content: "x\n".into(),
            line: 2
        }
    );
}

#[test]
fn touched_paths_lists_sources_and_destinations_once() {
    let text = "*** Begin Patch\n*** Update File: a.rs\n*** Move to: b.rs\n-x\n+y\n*** Add File: c.rs\n+\n*** Delete File: a.rs\n*** Move File: d.rs -> e/d.rs\n*** End Patch";
    assert_eq!(
        touched_paths(text),
        ["a.rs", "b.rs", "c.rs", "d.rs", "e/d.rs"]
    );
    // Lenient: still lists the headers of a patch that does not parse.
    assert_eq!(touched_paths("garbage\n*** Update File: z.rs\n"), ["z.rs"]);
}
