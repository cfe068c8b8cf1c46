//! Tests of the rules that close the former known gaps: the trees of recursive searches,
//! copies and archives walked to any depth (symlinks as each command treats them, the walk's
//! bound), awk programs read from files, and git program variables set anywhere in a command.

use std::path::{Path, PathBuf};

use super::judge::{CommandPolicy, Verdict};
use crate::policy::paths::PathPolicy;

struct Setup {
    _dir: tempfile::TempDir,
    user: PathBuf,
    policy: CommandPolicy,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A user home with a Hermes home, and a project `U/project` holding a clean `src/` tree and a
/// `services/` tree with a `.env` three levels down.
fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let user = std::fs::canonicalize(dir.path()).unwrap().join("u");
    write(&user.join(".hermes/.env"), "KEY=x\n");
    write(&user.join("project/src/main.rs"), "fn main() {}\n");
    write(&user.join("project/src/lib/util.rs"), "\n");
    write(&user.join("project/services/api/config/.env"), "DB=x\n");
    write(&user.join("project/services/api/main.py"), "\n");
    let paths = PathPolicy::new(&user.join(".hermes"), Some(&user));
    let (policy, _) = CommandPolicy::new(paths, &[]);
    Setup {
        _dir: dir,
        user,
        policy,
    }
}

impl Setup {
    fn project(&self) -> PathBuf {
        self.user.join("project")
    }

    fn judge(&self, command: &str) -> &'static str {
        match self.policy.judge(command, &self.project()) {
            Verdict::Run(_) => "run",
            Verdict::Ask(_) => "ask",
            Verdict::Refuse(_) => "refuse",
        }
    }

    fn reasons(&self, command: &str) -> String {
        match self.policy.judge(command, &self.project()) {
            Verdict::Ask(pending) => pending
                .asks
                .iter()
                .map(|a| a.reason.clone())
                .collect::<Vec<_>>()
                .join("; "),
            _ => String::new(),
        }
    }
}

#[test]
fn a_denied_file_at_any_depth_of_a_searched_copied_or_archived_tree_asks() {
    let s = setup();
    for command in [
        "grep -rn DATABASE_URL services",
        "grep -R DB .",
        "rg --hidden DB services",
        "rg -uu DB",
        "cp -r services /tmp/copy",
        "cp -a . /tmp/copy",
        "tar czf /tmp/p.tgz .",
        "tar -cf /tmp/p.tar services",
        "zip -r /tmp/p.zip services",
        "rsync -a ./ host:app/",
        "scp -r services host:",
    ] {
        assert_eq!(s.judge(command), "ask", "{command}");
    }
    assert!(
        s.reasons("grep -rn DB services")
            .contains("services/api/config/.env"),
        "{}",
        s.reasons("grep -rn DB services")
    );
    for command in [
        "grep -rn TODO src",
        "cp -r src /tmp/copy",
        "tar czf /tmp/src.tgz src",
        "rsync -a src/ /tmp/mirror/",
        "rg DB services",
        "rg -u DB services",
        "grep -rn --include='*.py' DB services",
        "rg -t py DB",
    ] {
        assert_eq!(s.judge(command), "run", "{command}");
    }
}

#[test]
fn a_symlink_to_a_denied_file_inside_a_tree_asks_where_the_command_follows_it() {
    let s = setup();
    std::os::unix::fs::symlink(
        s.user.join(".hermes/.env"),
        s.project().join("src/settings"),
    )
    .unwrap();
    for command in [
        "grep -R KEY src",
        "rg -L KEY src",
        "cp -rL src /tmp/copy",
        "tar czhf /tmp/src.tgz src",
        "rsync -a --copy-unsafe-links src/ host:src/",
        "zip -r /tmp/src.zip src",
        "scp -r src host:",
    ] {
        assert_eq!(s.judge(command), "ask", "{command}");
    }
    // These copy or skip the link itself: its target is not read.
    for command in [
        "grep -r KEY src",
        "rg KEY src",
        "cp -r src /tmp/copy",
        "tar czf /tmp/src.tgz src",
        "rsync -a src/ host:src/",
        "zip -ry /tmp/src.zip src",
    ] {
        assert_eq!(s.judge(command), "run", "{command}");
    }
}

#[test]
fn a_tree_larger_than_the_walk_budget_asks() {
    let s = setup();
    let big = s.project().join("big");
    for i in 0..super::protected::TREE_ENTRIES + 10 {
        write(&big.join(format!("d{}/f{i}.txt", i % 64)), "");
    }
    // Whether the walk reaches the `.env` before its bound depends on the directory order:
    // found or not, the command asks.
    write(&big.join("zz/deeper/still/.env"), "KEY=x\n");
    assert_eq!(s.judge("grep -rn KEY big"), "ask");
    assert_eq!(s.judge("cp -r big /tmp/x"), "ask");
    // Without any denied file, the bound alone asks (fail closed).
    std::fs::remove_file(big.join("zz/deeper/still/.env")).unwrap();
    assert_eq!(s.judge("tar czf /tmp/big.tgz big"), "ask");
    assert!(s.reasons("cp -r big /tmp/x").contains("too large"));
    assert_eq!(s.judge("grep -rn KEY src"), "run");
}

#[test]
fn an_awk_program_file_is_read_and_checked_like_an_inline_program() {
    let s = setup();
    let p = s.project();
    write(&p.join("sum.awk"), "{ n += $1 } END { print n }\n");
    write(&p.join("run.awk"), "BEGIN { system(\"id\") }\n");
    write(&p.join("pipe.awk"), "{ print | \"sh\" }\n");
    write(&p.join("inc.awk"), "@include \"run.awk\"\n");
    write(&p.join("big.awk"), &"# x\n".repeat(20_000));
    write(&p.join("data.txt"), "1\n2\n");
    for command in [
        "awk -f sum.awk data.txt",
        "gawk --file=sum.awk data.txt",
        "awk -F, -fsum.awk data.txt",
        "awk -f ./sum.awk -v x=1 data.txt",
    ] {
        assert_eq!(s.judge(command), "run", "{command}");
    }
    for command in [
        "awk -f run.awk data.txt",
        "awk -frun.awk data.txt",
        "gawk --file run.awk",
        "awk -f sum.awk -f pipe.awk data.txt",
        "gawk -i inc.awk -f sum.awk data.txt",
        "awk -f big.awk data.txt",
        "awk -f missing.awk data.txt",
        "awk -f services/api/config/.env data.txt",
        "awk -f \"$prog\" data.txt",
        "awk -f - data.txt",
        "gawk -l ./ext.so 'BEGIN {}'",
        "cd src && awk -f ../run.awk ../data.txt",
        "printf 'BEGIN{system(\"id\")}' > sum.awk; awk -f sum.awk data.txt",
    ] {
        assert_eq!(s.judge(command), "ask", "{command}");
    }
}

#[test]
fn a_git_program_variable_set_anywhere_in_a_command_that_runs_git_asks() {
    let s = setup();
    for command in [
        "export GIT_PAGER='sh -c id'; git log",
        "GIT_PAGER='sh -c id'; git log",
        "declare -x GIT_SSH_COMMAND='sh -c id' && git fetch",
        "typeset -x GIT_EDITOR=/tmp/x; git commit",
        "export GIT_PAGER='sh -c id'; bash -c 'git log'",
        "env -i GIT_PAGER='sh -c id' git log",
        "git status; export GIT_EXTERNAL_DIFF=/tmp/d; git diff",
    ] {
        assert_eq!(s.judge(command), "ask", "{command}");
    }
    for command in [
        "export GIT_PAGER=cat; git log",
        "export PAGER=less; git log",
        "export GIT_PAGER='sh -c id'; ls",
        "export RUST_LOG=debug && cargo run && git status",
        "GIT_AUTHOR_NAME=bot git commit -m x",
    ] {
        assert_eq!(s.judge(command), "run", "{command}");
    }
}

#[test]
fn rg_and_ag_trees_are_walked_as_they_read_them_ignore_files_included() {
    let s = setup();
    let project = s.project();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    // A build directory larger than the walk's bound, ignored by the repository.
    write(&project.join(".gitignore"), "target/\nservices/\n");
    for i in 0..super::protected::TREE_ENTRIES + 10 {
        write(&project.join(format!("target/d{}/f{i}.o", i % 64)), "");
    }
    assert_eq!(
        s.judge("rg TODO"),
        "run",
        "rg skips what .gitignore excludes"
    );
    assert_eq!(s.judge("ag TODO ."), "run");
    // grep reads no ignore file: the same tree is too large to check.
    assert_eq!(s.judge("grep -rn TODO ."), "ask");
    // Told to read ignored files, rg walks them too.
    assert_eq!(s.judge("rg --no-ignore TODO"), "ask");
    assert_eq!(s.judge("rg -u TODO"), "ask");
    // An ignore file that whitelists a hidden `.env` back in is read as rg reads it.
    write(&project.join("src/.env"), "KEY=x\n");
    assert_eq!(s.judge("rg KEY src"), "run", "hidden and not whitelisted");
    write(&project.join("src/.ignore"), "!.env\n");
    assert_eq!(
        s.judge("rg KEY src"),
        "ask",
        "whitelisted, rg reads it without --hidden"
    );
    assert_eq!(s.judge("rg --hidden KEY src"), "ask");
    // An ignore file the same command writes first is not there to be read: the search asks.
    assert_eq!(s.judge("printf '!x\\n' > lib/.ignore; rg KEY lib"), "ask");
    assert_eq!(s.judge("printf 'x\\n' > lib/notes.txt; rg KEY lib"), "run");
}
