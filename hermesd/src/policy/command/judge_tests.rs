use std::path::{Path, PathBuf};

use super::judge::{CommandPolicy, Verdict};
use crate::policy::paths::PathPolicy;

struct Setup {
    _dir: tempfile::TempDir,
    user: PathBuf,
    policy: CommandPolicy,
}

/// A user home with the Hermes root, a profile, and a daemon home given with `--home`.
fn setup(deny: &[&str]) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let user = std::fs::canonicalize(dir.path()).unwrap().join("u");
    for d in [".hermes/profiles/work", "srv/home", "project"] {
        std::fs::create_dir_all(user.join(d)).unwrap();
    }
    std::fs::write(user.join("srv/home/config.yaml"), "model: {}\n").unwrap();
    let paths = PathPolicy::new(&user.join("srv/home"), Some(&user));
    let deny: Vec<String> = deny.iter().map(|s| s.to_string()).collect();
    let (policy, bad) = CommandPolicy::new(paths, &deny);
    assert!(bad.is_empty(), "{bad:?}");
    Setup {
        _dir: dir,
        user,
        policy,
    }
}

fn kind(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Run(_) => "run",
        Verdict::Ask(_) => "ask",
        Verdict::Refuse(_) => "refuse",
    }
}

impl Setup {
    fn judge(&self, command: &str) -> &'static str {
        kind(&self.policy.judge(command, &self.user.join("project")))
    }
}

#[test]
fn the_daemons_database_is_out_of_reach_of_every_command() {
    let s = setup(&[]);
    for command in [
        "sqlite3 ~/.hermes/hermesd.db \"insert into command_allowlist values ('x', 0)\"",
        "sqlite3 ../srv/home/hermesd.db .dump",
        "cd ~/srv/home && sqlite3 hermesd.db 'select 1'",
        "python3 -c \"import sqlite3; sqlite3.connect('$HERMES_HOME/hermesd.db')\"",
        "cp ~/srv/home/*.db /tmp/",
        "echo {} > ~/.hermes/profiles/work/processes.json",
    ] {
        assert_eq!(s.judge(command), "refuse", "{command}");
    }
}

#[test]
fn writing_settings_of_any_home_needs_approval_and_reading_does_not() {
    let s = setup(&[]);
    std::os::unix::fs::symlink(
        s.user.join("srv/home/config.yaml"),
        s.user.join("project/c"),
    )
    .unwrap();
    for command in [
        "sed -i 's/a/b/' ~/srv/home/config.yaml",
        "sed -i 's/a/b/' ~/.hermes/profiles/work/config.yaml",
        "echo KEY=x >> ~/.hermes/.env",
        "printf 'x' > ~/.hermes/profiles/work/.env",
        "ln -sf /tmp/evil ~/srv/home/config.yaml",
        "tee c < /dev/null",
        "cp /tmp/x ~/.hermes/auth.json",
    ] {
        assert_eq!(s.judge(command), "ask", "{command}");
    }
    for command in [
        "cat ~/srv/home/config.yaml",
        "grep model c",
        "ls -la ~/.hermes",
        "git status",
    ] {
        assert_eq!(s.judge(command), "run", "{command}");
    }
}

#[test]
fn stdin_of_an_interpreter_is_asked_and_hardline_lines_are_refused() {
    let s = setup(&[]);
    let cwd = s.user.join("project");
    let stdin = |process: &str, pending: &str, data: &str| {
        kind(&s.policy.judge_stdin(process, &cwd, pending, data))
    };
    assert_eq!(stdin("bash", "", "ls\n"), "ask");
    assert_eq!(stdin("python3 -i", "", "print(1)\n"), "ask");
    assert_eq!(stdin("sleep 100", "", "y\n"), "run");
    assert_eq!(stdin("sleep 100", "", "rm -rf /tmp/x\n"), "ask");
    assert_eq!(stdin("cat", "rm -rf", " /\n"), "refuse");
    assert_eq!(stdin("cat", "", "sqlite3 ~/.hermes/hermesd.db\n"), "refuse");
    assert_eq!(
        stdin("cat", "", "mkfs.ext4 /dev/sda"),
        "run",
        "incomplete: judged when ended"
    );
}

#[test]
fn user_deny_globs_refuse_before_anything_else() {
    let s = setup(&["git push*", "  ", "*--force*"]);
    assert_eq!(s.judge("git push origin main"), "refuse");
    assert_eq!(s.judge("GIT PUSH origin"), "refuse");
    assert_eq!(s.judge("cargo build --force"), "refuse");
    assert_eq!(s.judge("git pull"), "run");
    let (_, bad) = CommandPolicy::new(PathPolicy::new(Path::new("/h"), None), &["[".into()]);
    assert_eq!(bad.len(), 1);
}

#[test]
fn a_clearance_covers_exactly_what_was_judged() {
    let s = setup(&[]);
    let Verdict::Run(cleared) = s.policy.judge("ls", &s.user) else {
        panic!("ls should run");
    };
    assert_eq!(cleared.command(), Some("ls"));
    assert!(!cleared.covers_stdin("", "ls"));
    let Verdict::Run(stdin) = s.policy.judge_stdin("cat", &s.user, "a", "b\n") else {
        panic!("plain input should go");
    };
    assert!(stdin.covers_stdin("a", "b\n"));
    assert!(!stdin.covers_stdin("", "b\n"));
    assert_eq!(stdin.command(), None);
}
