//! Behaviour tests of the terminal guard: normalisation and obfuscation, quoting, payload
//! variants, parser limits, the daemon's extra rules, and the shlex-compatible tokenizer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::super::ansi::strip_ansi;
use super::lex::shlex_split;
use super::normalize::{HomeFolds, normalize_with};
use super::*;

fn key(command: &str) -> Option<&'static str> {
    detect_dangerous(command).map(|d| d.key)
}

fn hardline_key(command: &str) -> Option<&'static str> {
    detect_hardline(command).map(|d| d.key)
}

const ROOT_WIPE: Option<&str> = Some("recursive delete of root filesystem");
const REBOOT: Option<&str> = Some("system shutdown/reboot");

#[test]
fn hardline_sees_subshells_payloads_and_quotes_like_python() {
    assert_eq!(hardline_key("(reboot)"), REBOOT);
    assert_eq!(hardline_key("{ shutdown -h now; }"), REBOOT);
    assert_eq!(hardline_key("echo \"(reboot)\""), None);
    assert_eq!(hardline_key("env X=1 bash -c 'reboot'"), REBOOT);
    assert_eq!(hardline_key("echo x &&\nreboot"), REBOOT);
    assert_eq!(hardline_key("rm -rf \"/\""), ROOT_WIPE);
    assert_eq!(hardline_key("$(rm -rf /)"), ROOT_WIPE);
    assert_eq!(hardline_key("rm -rf /..."), None);
    assert_eq!(
        hardline_key("gh pr create --title \"block rm -rf / spellings\""),
        None
    );
    assert_eq!(hardline_key("grep -P '(safe|rm -rf /)' file"), None);
    let malformed = Some("command parser limit or malformed executable payload");
    assert_eq!(hardline_key("grep -e"), malformed);
}

#[test]
fn quoted_text_is_not_exempt_but_grep_pcre_patterns_are() {
    assert_eq!(key("echo 'rm -rf /'"), Some("delete in root path"));
    assert_eq!(key("grep 'rm -rf /' notes"), Some("delete in root path"));
    assert_eq!(key("grep -P '(safe|rm -rf /)' file"), None);
}

#[test]
fn obfuscated_spellings_are_normalised() {
    let root_wipes = [
        "r''m -rf /",
        "r\\m -rf /",
        "$(echo rm) -rf /",
        "rm${IFS}-rf${IFS}/",
        "rm$IFS-rf$IFS/",
        "rm -rf \\\n/",
        "rm -rf \\\r\n/",
        "\x1b[31mrm -rf /\x1b[0m",
        "\u{ff52}\u{ff4d} -\u{ff52}\u{ff46} /",
        "rm\0 -rf /",
    ];
    for command in root_wipes {
        assert_eq!(key(command), Some("delete in root path"), "{command:?}");
        assert_eq!(hardline_key(command), ROOT_WIPE, "{command:?}");
    }
    assert_eq!(key("`printf rm` -rf /tmp/x"), Some("delete in root path"));
    assert_eq!(key("${x:-rm} -rf /tmp/x"), Some("delete in root path"));
}

#[test]
fn sudo_stdin_guess_is_a_separate_check() {
    assert!(detect_sudo_stdin_guess("sudo -S whoami").is_some());
    assert!(detect_sudo_stdin_guess("ls && sudo -S id").is_some());
    assert!(detect_sudo_stdin_guess("sudo -u root -S id").is_none());
    assert!(detect_sudo_stdin_guess("sudo whoami").is_none());
}

#[test]
fn parser_limits_fail_closed() {
    assert_eq!(key(&"a".repeat(5_000)), Some(PARSER_LIMIT_KEY));
    assert_eq!(key(&"a ".repeat(2_000)), None);
    assert_eq!(key(&"x;".repeat(25_000)), Some(PARSER_LIMIT_KEY));
    assert_eq!(hardline_key(&"a".repeat(130_000)), Some(PARSER_LIMIT_KEY));
}

#[test]
fn secret_file_reads_need_approval() {
    let fires = [
        "cat .env",
        "head -n 3 ~/.netrc",
        "cat ~/.ssh/id_rsa",
        "grep KEY .env.local",
        "cat < .env",
        "less ~/.aws/credentials",
    ];
    for fire in fires {
        assert_eq!(key(fire), Some(SECRET_READ_KEY), "{fire:?}");
    }
    let harmless = [
        "cat README.md",
        "cat .env.example",
        "cat ~/.ssh/id_rsa.pub",
        "cat notes > .envelope",
        "source .env",
    ];
    for command in harmless {
        assert_eq!(key(command), None, "{command:?}");
    }
}

#[test]
fn overwrite_of_an_existing_file_needs_approval() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "keep").unwrap();
    let cwd = dir.path();
    let absolute = format!("echo hi > {}", dir.path().join("notes.txt").display());
    let fires = [
        "echo hi > notes.txt",
        "echo hi >notes.txt",
        "echo hi >| notes.txt",
        "make &> notes.txt",
        "ls 2> notes.txt",
        "cat > 'notes.txt' <<EOF\nx\nEOF",
        absolute.as_str(),
    ];
    for fire in fires {
        let found = detect_dangerous_in(fire, cwd).map(|d| d.key);
        assert_eq!(found, Some(OVERWRITE_KEY), "{fire:?}");
    }
    let harmless = [
        "echo hi >> notes.txt",
        "echo hi > new.txt",
        "echo 'a > notes.txt'",
        "echo hi >&2",
        "ls 2>/dev/null",
        "cat <> notes.txt",
        "echo hi > $OUT",
        "diff >(cat) x",
    ];
    for command in harmless {
        assert_eq!(detect_dangerous_in(command, cwd), None, "{command:?}");
    }
    assert_eq!(detect_dangerous("echo hi > notes.txt"), None);
    let push = detect_dangerous_in("git push -f", cwd).map(|d| d.key);
    assert_eq!(push, key("git push -f"));
}

#[test]
fn ansi_sequences_are_stripped() {
    assert_eq!(strip_ansi("\x1b[1;31mred\x1b[0m"), "red");
    assert_eq!(strip_ansi("\x1b]0;title\x07text"), "text");
    assert_eq!(strip_ansi("a\u{9b}31mb\u{85}c"), "abc");
    assert_eq!(strip_ansi("plain"), "plain");
}

#[test]
fn absolute_homes_fold_to_tilde_forms() {
    let folds = HomeFolds::new(
        &["/home/alice/.hermes".to_owned()],
        &["/home/alice".to_owned(), "C:\\Users\\alice".to_owned()],
    );
    let fold = |command: &str| normalize_with(command, &folds);
    assert_eq!(fold("echo x > /home/alice/.bashrc"), "echo x > ~/.bashrc");
    assert_eq!(
        fold("sed -i s/a/b/ /home/alice/.hermes/config.yaml"),
        "sed -i s/a/b/ ~/.hermes/config.yaml"
    );
    assert_eq!(
        fold("copy x C:\\Users\\alice\\.ssh\\authorized_keys"),
        "copy x ~/.ssh/authorized_keys"
    );
    assert_eq!(fold("ls /home/alice"), "ls /home/alice");
    let degenerate = HomeFolds::new(&[], &["/root".to_owned()]);
    assert_eq!(
        normalize_with("cat /root/.bashrc", &degenerate),
        "cat /root/.bashrc"
    );
}

type Tokens<'a> = Option<&'a [&'a str]>;

#[test]
fn shlex_split_matches_python() {
    let cases: [(&str, Tokens<'_>, Tokens<'_>); 10] = [
        ("a b  c", Some(&["a", "b", "c"]), Some(&["a", "b", "c"])),
        (
            "a 'b c' d",
            Some(&["a", "b c", "d"]),
            Some(&["a", "b c", "d"]),
        ),
        (
            "a \"b \\\" c\\d\" e",
            Some(&["a", "b \" c\\d", "e"]),
            Some(&["a", "b \" c\\d", "e"]),
        ),
        ("''", Some(&[""]), Some(&[""])),
        ("x<<EOF", Some(&["x", "<<", "EOF"]), Some(&["x<<EOF"])),
        (
            "cat>>out <in",
            Some(&["cat", ">>", "out", "<", "in"]),
            Some(&["cat>>out", "<in"]),
        ),
        ("a\\ b", Some(&["a b"]), Some(&["a b"])),
        ("it's", None, None),
        ("a\\", None, None),
        ("p<>q", Some(&["p", "<>", "q"]), Some(&["p<>q"])),
    ];
    let owned = |v: Tokens<'_>| v.map(|v| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
    for (input, punctuated, plain) in cases {
        assert_eq!(shlex_split(input, true), owned(punctuated), "{input:?}");
        assert_eq!(shlex_split(input, false), owned(plain), "{input:?}");
    }
}
