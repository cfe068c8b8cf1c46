//! Tests of the quoting the judge decodes before any rule looks at a word: bash's ANSI-C
//! quoting (`$'\x72\x6d'`), locale quoting (`$"rm"`), mixed quotes and backslashes. A command
//! spelled with them must get exactly the verdict of its plain spelling.

use std::path::PathBuf;

use super::judge::{CommandPolicy, Verdict};
use super::lex::{decode_ansi_c, decode_quoting};
use crate::policy::paths::PathPolicy;

struct Setup {
    _dir: tempfile::TempDir,
    user: PathBuf,
    policy: CommandPolicy,
}

/// A user home with a Hermes home holding settings, credentials and the database, and a
/// project with a `.env`.
fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let user = std::fs::canonicalize(dir.path()).unwrap().join("u");
    for (rel, text) in [
        (".hermes/config.yaml", "model: {}\n"),
        (".hermes/.env", "KEY=x\n"),
        (".hermes/hermesd.db", ""),
        ("project/.env", "KEY=y\n"),
        ("project/README.md", "# x\n"),
    ] {
        let path = user.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let paths = PathPolicy::new(&user.join(".hermes"), Some(&user));
    let (policy, bad) = CommandPolicy::new(paths, &[]);
    assert!(bad.is_empty(), "{bad:?}");
    Setup {
        _dir: dir,
        user,
        policy,
    }
}

impl Setup {
    /// The verdict's name and, for a question, the keys asked.
    fn outcome(&self, command: &str) -> (&'static str, Vec<String>) {
        match self.policy.judge(command, &self.user.join("project")) {
            Verdict::Run(_) => ("run", Vec::new()),
            Verdict::Ask(pending) => ("ask", pending.asks.into_iter().map(|a| a.key).collect()),
            Verdict::Refuse(_) => ("refuse", Vec::new()),
        }
    }

    /// `spelled` gets the verdict (and questions) of `plain`, which is not run.
    fn same_as_plain(&self, spelled: &str, plain: &str) {
        let expected = self.outcome(plain);
        assert_ne!(expected.0, "run", "{plain} should not run");
        assert_eq!(self.outcome(spelled), expected, "{spelled} (as {plain})");
    }
}

#[test]
fn ansi_c_quoted_command_words_are_judged_as_bash_decodes_them() {
    let s = setup();
    for (spelled, plain) in [
        (r"$'\x72\x6d' -rf ~", "rm -rf ~"),
        (r"$'\162m' -rf /", "rm -rf /"),
        (r"$'\u0072\U0000006d' -rf /", "rm -rf /"),
        (r"$'\x72\x6D' -r$'\x66' /", "rm -rf /"),
        (r"$'\x73hutdown' -h now", "shutdown -h now"),
        (r"$'\155kfs.ext4' /dev/sda1", "mkfs.ext4 /dev/sda1"),
        (r"$'cat' ~/.hermes/.env", "cat ~/.hermes/.env"),
        (r"c$'\141't .env", "cat .env"),
        (r"cat $'\x2e'env", "cat .env"),
        (r"cat ~/.hermes/$'\x2eenv'", "cat ~/.hermes/.env"),
        (
            r"echo x > ~/.hermes/$'config\x2eyaml'",
            "echo x > ~/.hermes/config.yaml",
        ),
        (
            r"sqlite3 ~/.hermes/$'hermesd\x2edb' .dump",
            "sqlite3 ~/.hermes/hermesd.db .dump",
        ),
        (r"git $'reset' --hard", "git reset --hard"),
        (r"echo ok; $'\x72\x6d' -rf /", "echo ok; rm -rf /"),
        (r"(cd /tmp && $'\x72\x6d' -rf /)", "(cd /tmp && rm -rf /)"),
    ] {
        s.same_as_plain(spelled, plain);
    }
}

#[test]
fn locale_quotes_mixed_quotes_and_backslashes_are_plain_words() {
    let s = setup();
    for (spelled, plain) in [
        (r#"$"rm" -rf /"#, "rm -rf /"),
        (r#"$"c"at .env"#, "cat .env"),
        (r#"'r'"m" -rf /"#, "rm -rf /"),
        (r"\r\m -rf /", "rm -rf /"),
        (r#"r$'m' -rf "/""#, "rm -rf /"),
        (r#"$'r'"m" -rf /"#, "rm -rf /"),
    ] {
        s.same_as_plain(spelled, plain);
    }
}

#[test]
fn ansi_c_quoting_inside_a_script_or_a_here_document_is_decoded_too() {
    let s = setup();
    for (spelled, plain) in [
        (r#"bash -c "$'\x72\x6d' -rf /""#, r#"bash -c "rm -rf /""#),
        (r"echo $($'\x72\x6d' -rf /)", "echo $(rm -rf /)"),
        (
            "bash <<EOF\n$'\\x72\\x6d' -rf /\nEOF",
            "bash <<EOF\nrm -rf /\nEOF",
        ),
        (
            "cat <<'EOF'\nit's\nEOF\n$'\\x72\\x6d' -rf /",
            "cat <<'EOF'\nit's\nEOF\nrm -rf /",
        ),
        ("echo # it's\n$'\\x72\\x6d' -rf /", "echo # it's\nrm -rf /"),
        // Text to bash, but a script to a shell the string may be given to: judged as that.
        (r#"echo "$'\x72\x6d' -rf /""#, r#"echo "rm -rf /""#),
    ] {
        s.same_as_plain(spelled, plain);
    }
}

#[test]
fn ansi_c_quoted_data_stays_harmless() {
    let s = setup();
    for command in [
        r"printf $'a\tb\n'",
        r"echo $'it\'s fine'",
        r"grep -c $'\t' README.md",
        r"IFS=$'\n' read -r line < README.md",
        r"echo '$'\x72",
    ] {
        assert_eq!(s.outcome(command), ("run", Vec::new()), "{command}");
    }
}

/// Each escape of `$'…'` decodes to what bash 5.2 prints for it (`printf %s $'…' | od -c`).
#[test]
fn ansi_c_escapes_decode_as_bash_decodes_them() {
    for (body, decoded) in [
        (r"\a\b\e\E\f\n\r\t\v", "\x07\x08\x1b\x1b\x0c\n\r\t\x0b"),
        (r#"\\\'\"\?"#, r#"\'"?"#),
        (r"\162m", "rm"),
        (r"\1011", "A1"),
        (r"\x72\x6D", "rm"),
        (r"\x414", "A4"),
        (r"\x4", "\x04"),
        (r"\x", r"\x"),
        (r"\xg", r"\xg"),
        (r"\u72m", "rm"),
        (r"\u0072\U0000006d", "rm"),
        (r"\U0001F600", "\u{1F600}"),
        (r"\u", r"\u"),
        (r"\ca\cA\c[\c?", "\x01\x01\x1b\x7f"),
        (r"\c\\x", "\x1cx"),
        (r"\c", r"\c"),
        (r"\q\8", r"\q\8"),
        (r"\xc3\xa9", "é"),
        (r"\xff", "\u{FFFD}"),
        (r"a\0b", "a"),
        (r"a\x00b", "a"),
        (r"a\u0z", "a"),
        (r"\u0b", "\x0b"),
        (r"a\c@b", "a"),
        (r"\400", ""),
    ] {
        assert_eq!(decode_ansi_c(body), decoded, "$'{body}'");
    }
}

#[test]
fn quoting_is_rewritten_where_bash_decodes_it() {
    for (text, rewritten) in [
        (r"$'\x72\x6d' -rf /", "rm -rf /"),
        (r"c$'\141't .env", "cat .env"),
        (r"echo $'a b' $'it\'s' $''", r#"echo 'a b' 'it'"'"'s' ''"#),
        (r#"$"rm" -rf "/""#, r#""rm" -rf "/""#),
        (r"echo '$'\x72 \$'x'", r"echo '$'\x72 \$'x'"),
        (r#"bash -c "$'\x72\x6d' -rf /""#, r#"bash -c "rm -rf /""#),
        (r#"bash -c "echo $'a\x22b'""#, r#"bash -c "echo 'a\"b'""#),
        (r#"echo "a$"b"#, r#"echo "a$"b"#),
        (
            "cat <<'EOF'\n$'\\x72'\nEOF\n$'\\x6d'",
            "cat <<'EOF'\nr\nEOF\nm",
        ),
        ("echo # it's\n$'\\x72'", "echo # it's\nr"),
        ("echo ok", "echo ok"),
    ] {
        assert_eq!(decode_quoting(text), rewritten, "{text}");
    }
}
