//! Tests of writes to a background process's stdin: text is joined into commands as the
//! receiving shell joins them (a trailing backslash, an open quote, a here-document) and held
//! until complete, and the receiving program is found through the wrappers it runs under.

use std::path::PathBuf;

use super::judge::{CommandPolicy, Verdict};
use super::stdin::{INTERPRETER_WRITE_KEY, complete_commands};
use crate::policy::paths::PathPolicy;

struct Setup {
    _dir: tempfile::TempDir,
    cwd: PathBuf,
    policy: CommandPolicy,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let user = std::fs::canonicalize(dir.path()).unwrap().join("u");
    std::fs::create_dir_all(user.join(".hermes")).unwrap();
    std::fs::create_dir_all(user.join("project")).unwrap();
    let paths = PathPolicy::new(&user.join(".hermes"), Some(&user));
    let (policy, bad) = CommandPolicy::new(paths, &[]);
    assert!(bad.is_empty(), "{bad:?}");
    Setup {
        _dir: dir,
        cwd: user.join("project"),
        policy,
    }
}

impl Setup {
    /// The verdict's name and the keys it asks.
    fn stdin(&self, process: &str, pending: &str, data: &str) -> (&'static str, Vec<String>) {
        match self.policy.judge_stdin(process, &self.cwd, pending, data) {
            Verdict::Run(_) => ("run", Vec::new()),
            Verdict::Ask(pending) => ("ask", pending.asks.into_iter().map(|a| a.key).collect()),
            Verdict::Refuse(_) => ("refuse", Vec::new()),
        }
    }

    /// Writes `writes` one after the other as `process write` does: each is judged with what
    /// the buffer holds, and what it leaves incomplete is held for the next. The verdicts.
    fn session(&self, process: &str, writes: &[&str]) -> Vec<&'static str> {
        let mut pending = String::new();
        let mut verdicts = Vec::new();
        for data in writes {
            verdicts.push(self.stdin(process, &pending, data).0);
            pending = complete_commands(process, &pending, data).1;
        }
        verdicts
    }
}

#[test]
fn a_trailing_backslash_joins_the_next_write() {
    let s = setup();
    for process in ["cat", "bash", "sleep 100"] {
        assert_eq!(
            s.session(process, &["rm -rf \\\n", "/\n"]).last(),
            Some(&"refuse"),
            "{process}"
        );
        assert_eq!(
            s.session(process, &["shut\\\n", "down -h now\n"]).last(),
            Some(&"refuse"),
            "{process}"
        );
    }
    assert_eq!(s.stdin("cat", "rm -rf \\\n", "/\n").0, "refuse");
    // An escaped backslash ends the line.
    assert_eq!(
        complete_commands("cat", "", "echo a\\\\\n"),
        (vec!["echo a\\\\\n".to_string()], String::new())
    );
    assert_eq!(
        complete_commands("cat", "", "rm -rf \\\n"),
        (Vec::new(), "rm -rf \\\n".to_string())
    );
}

#[test]
fn a_shell_joins_open_quotes_and_other_programs_do_not() {
    let s = setup();
    assert_eq!(
        complete_commands("bash", "", "echo 'a\nb' ; ls\n"),
        (
            vec!["echo 'a\nb' ;".to_string(), " ls\n".to_string()],
            String::new()
        )
    );
    assert_eq!(
        complete_commands("bash", "", "echo \"a;\nb"),
        (Vec::new(), "echo \"a;\nb".to_string())
    );
    assert_eq!(
        complete_commands("bash", "", "x=$(date;\nls)\n"),
        (vec!["x=$(date;\nls)\n".to_string()], String::new())
    );
    // An apostrophe in an answer to a program that is no shell is text.
    assert_eq!(
        complete_commands("npm init", "", "Alice's app\n"),
        (vec!["Alice's app\n".to_string()], String::new())
    );
    assert_eq!(
        s.session("bash", &["echo '\n", "'; rm -rf /\n"]).last(),
        Some(&"refuse")
    );
}

#[test]
fn a_here_document_is_one_command_held_until_its_delimiter() {
    for (process, text, complete, rest) in [
        ("bash", "cat <<EOF\nhello\n", vec![], "cat <<EOF\nhello\n"),
        (
            "bash",
            "cat <<EOF > x\nhello; world\nEOF\nls\n",
            vec!["cat <<EOF > x\nhello; world\nEOF\n", "ls\n"],
            "",
        ),
        (
            "bash",
            "cat <<-'END' ; echo a\n\tit's\n\tEND\n",
            vec!["cat <<-'END' ; echo a\n\tit's\n\tEND\n"],
            "",
        ),
        (
            "bash",
            "cat <<\"E\"F <<X\na\nEF\nb\nX\n",
            vec!["cat <<\"E\"F <<X\na\nEF\nb\nX\n"],
            "",
        ),
        ("bash", "cat <<EOF\nEOF", vec![], "cat <<EOF\nEOF"),
        (
            "bash",
            "cat <<< 'here string'\n",
            vec!["cat <<< 'here string'\n"],
            "",
        ),
        (
            "timeout 60 bash",
            "python3 - <<'PY'\nprint('x')\nPY\n",
            vec!["python3 - <<'PY'\nprint('x')\nPY\n"],
            "",
        ),
    ] {
        let complete: Vec<String> = complete.into_iter().map(String::from).collect();
        assert_eq!(
            complete_commands(process, "", text),
            (complete, rest.to_string()),
            "{process} ← {text:?}"
        );
    }
    let s = setup();
    // The body of a program's here-document is judged with it.
    assert_eq!(
        s.session("bash", &["bash <<EOF\n", "rm -rf /\n", "EOF\n"]),
        vec!["ask", "ask", "refuse"]
    );
}

#[test]
fn the_receiving_program_is_found_through_its_wrappers() {
    let s = setup();
    for process in [
        "timeout 60 bash",
        "timeout -s KILL -k 5 60 bash",
        "nice -n 5 python3",
        "nice -10 python3",
        "env FOO=1 bash",
        "env -i bash",
        "env -u HOME -C /tmp bash",
        "stdbuf -oL bash",
        "stdbuf -o L -e L python3 -i",
        "nohup bash",
        "setsid bash",
        "setsid -w bash",
        "sudo -u bob bash",
        "sudo -E python3",
        "sudo -Eu bob -- node",
        "ionice -c3 bash",
        "ionice -c 2 -n 7 bash",
        "chrt -f 1 bash",
        "taskset -c 0 bash",
        "taskset 0x3 bash",
        "time bash",
        "time -p bash",
        "command bash",
        "exec bash",
        "exec -a shell bash",
        "doas bash",
        "doas -u bob sqlite3 app.db",
        "unbuffer bash",
        "unbuffer -p python3",
        "script -q -c bash /dev/null",
        "script -qc 'python3 -i' /dev/null",
        "script -q /dev/null",
        "xargs bash",
        "xargs -n 1 -I {} bash",
        "nohup nice -n 5 timeout 1h stdbuf -oL env X=1 bash -i",
        "/usr/bin/timeout 60 /bin/bash",
        "sudo -s",
        "sudo -i",
        "cd src && nice python3",
    ] {
        let (verdict, keys) = s.stdin(process, "", "ls\n");
        assert_eq!(verdict, "ask", "{process}");
        assert!(
            keys.iter().any(|k| k == INTERPRETER_WRITE_KEY),
            "{process}: {keys:?}"
        );
    }
    for process in [
        "timeout 60 sleep 100",
        "nice -n 5 tail -f log",
        "env FOO=1 cat",
        "stdbuf -oL cat",
        "sudo -u bob cat",
        "nohup npm run dev",
        "time cargo watch",
    ] {
        assert_eq!(
            s.stdin(process, "", "y\n"),
            ("run", Vec::new()),
            "{process}"
        );
    }
}
