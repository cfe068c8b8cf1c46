//! Tests of `reader`: where a shell's commands end, here-documents, and the quoting marked
//! for decoding.

use super::reader::{Input, Mark, scan};

fn ends(text: &str) -> (Vec<usize>, bool) {
    let scan = scan(text, Input::Stream);
    let ends = scan
        .marks
        .iter()
        .filter_map(|m| match m {
            Mark::End { at } => Some(*at),
            _ => None,
        })
        .collect();
    (ends, scan.open)
}

#[test]
fn commands_end_at_top_level_newlines_and_semicolons() {
    assert_eq!(ends("a; b\nc"), (vec![2, 5], false));
    assert_eq!(ends("echo 'a;\nb'\n"), (vec![12], false));
    assert_eq!(ends("echo \"a;\nb"), (vec![], true));
    assert_eq!(ends("x \\\ny\n"), (vec![6], false));
    assert_eq!(ends("x \\"), (vec![], true));
    assert_eq!(ends("a $(b;\nc) `d;\ne`\n"), (vec![17], false));
    assert_eq!(ends("echo $((1 << 2))\n"), (vec![17], false));
    assert_eq!(ends("echo ${x:-a;b}\n"), (vec![15], false));
    assert_eq!(ends("# it's\nx\n"), (vec![7, 9], false));
    assert_eq!(ends("a#'\n"), (vec![], true));
    assert_eq!(ends("echo $'a\\'b;'\n"), (vec![14], false));
}

#[test]
fn here_documents_end_at_their_delimiter_lines() {
    assert_eq!(ends("cat <<E; x\na;\nE\nls\n"), (vec![16, 19], false));
    assert_eq!(ends("cat <<-'E'\n\ta\n\tE\n"), (vec![17], false));
    assert_eq!(ends("cat <<E\na\nE"), (vec![], true));
    assert_eq!(ends("cat <<<E\n"), (vec![9], false));
    assert_eq!(ends("x=$(cat <<E\na)\nE\n)\n"), (vec![19], false));
    let script = scan("cat <<E\n$'x'\n", Input::Script);
    assert_eq!(
        script.marks,
        vec![Mark::Body { start: 8, end: 13 }, Mark::End { at: 13 }]
    );
    assert!(!script.open);
}

#[test]
fn ansi_c_and_locale_quotes_are_marked() {
    let marks = scan(r#"$'a' "$'b'" $"c" '$' "$'\"'" "\$'x'""#, Input::Script).marks;
    assert_eq!(
        marks,
        vec![
            Mark::AnsiC {
                start: 0,
                end: 4,
                in_double: false
            },
            Mark::AnsiC {
                start: 6,
                end: 10,
                in_double: true
            },
            Mark::Locale { at: 12 },
            Mark::AnsiC {
                start: 22,
                end: 27,
                in_double: true
            },
        ]
    );
}
